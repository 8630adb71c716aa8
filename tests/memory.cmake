# SPDX-License-Identifier: MIT
# PROF_MEMORY end to end (tests/memory/run_memory_test.py): exact allocations per function
# with each compiler found, threads, C++ new/delete, fork, nothing without PROF_MEMORY, the
# message of libfnprof.a, a program with its own malloc (one line, a labelled profile);
# fnprof's memory profile against heaptrack's on one program.
# The cases build their programs themselves (gcc and clang, g++ and clang++), -O0: at -O2
# both compilers may remove a malloc/free pair whose block is not used.
foreach(case known threads cxx fork unset format own_malloc)
    add_test(NAME e2e.memory.${case}
             COMMAND Python3::Interpreter ${CMAKE_CURRENT_SOURCE_DIR}/memory/run_memory_test.py
                     ${case} --lib $<TARGET_FILE:fnprof_shared> --fnprof $<TARGET_FILE:fnprof>)
    set_tests_properties(e2e.memory.${case} PROPERTIES LABELS e2e SKIP_RETURN_CODE 77)
endforeach()

# libfnprof.a keeps libc's allocator: PROF_MEMORY says so in one line and writes nothing.
add_executable(fnp_memory_static memory/known.c)
target_compile_options(fnp_memory_static PRIVATE -g -O0 -finstrument-functions -w)
target_link_libraries(fnp_memory_static PRIVATE fnprof_static)
add_test(NAME e2e.memory.static
         COMMAND Python3::Interpreter ${CMAKE_CURRENT_SOURCE_DIR}/memory/run_memory_test.py
                 static --lib $<TARGET_FILE:fnprof_shared> --fnprof $<TARGET_FILE:fnprof>
                 --static-prog $<TARGET_FILE:fnp_memory_static>)
set_tests_properties(e2e.memory.static PROPERTIES LABELS e2e)

# Allocation counts per function against heaptrack's (Debian heaptrack), on the threaded
# program; bench/run --only memory compares them on Lua's interpreter too.
add_executable(fnp_memory_threads memory/threads.c)
target_compile_options(fnp_memory_threads PRIVATE -g -O0 -finstrument-functions)
target_link_libraries(fnp_memory_threads PRIVATE Threads::Threads)
add_test(NAME e2e.memory.heaptrack
         COMMAND Python3::Interpreter ${CMAKE_CURRENT_SOURCE_DIR}/memory/heaptrack_agree.py
                 --lib $<TARGET_FILE:fnprof_shared> -- $<TARGET_FILE:fnp_memory_threads>)
set_tests_properties(e2e.memory.heaptrack PROPERTIES LABELS e2e SKIP_RETURN_CODE 77)

# A fork from a signal handler that interrupts the wrappers inside their table of blocks,
# and threads cancelled inside fnprof_dump: both must end (TIMEOUT), printing "ok".
add_executable(fnp_memory_sigfork memory/sigfork.c)
target_compile_options(fnp_memory_sigfork PRIVATE -g -O0 -finstrument-functions)
add_test(NAME e2e.memory.signal_fork
         COMMAND ${CMAKE_COMMAND} -E env PROF_MEMORY=${CMAKE_CURRENT_BINARY_DIR}/sigfork.prof
                 PROF_QUIET=1 LD_PRELOAD=$<TARGET_FILE:fnprof_shared>
                 $<TARGET_FILE:fnp_memory_sigfork>)
add_executable(fnp_memory_cancel memory/cancel.c)
target_compile_options(fnp_memory_cancel PRIVATE -g -O0 -finstrument-functions)
target_link_libraries(fnp_memory_cancel PRIVATE fnprof_shared Threads::Threads)
add_test(NAME e2e.robust.cancel_in_dump
         COMMAND ${CMAKE_COMMAND} -E env PROF_OUTPUT=${CMAKE_CURRENT_BINARY_DIR}/cancel.prof
                 PROF_MEMORY=${CMAKE_CURRENT_BINARY_DIR}/cancel.mem.prof PROF_QUIET=1
                 $<TARGET_FILE:fnp_memory_cancel>)
set_tests_properties(e2e.memory.signal_fork e2e.robust.cancel_in_dump PROPERTIES
                     LABELS e2e TIMEOUT 120 PASS_REGULAR_EXPRESSION "^ok")

# A real program: Debian's lz4 (its sources fetched by e2e.wrappers.lz4, the fixture), built
# with fnprof-cc at -O0 and compressing a file; its allocations per function must equal
# heaptrack's for the same run (tests/memory/lz4_heaptrack.sh says why -O0).
set_tests_properties(e2e.wrappers.lz4 PROPERTIES FIXTURES_SETUP fnp_lz4_built)
add_test(NAME e2e.memory.heaptrack_lz4
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/memory/lz4_heaptrack.sh
                 $<TARGET_FILE_DIR:fnprof_wrapper_cc> ${CMAKE_CURRENT_BINARY_DIR}/wrappers/lz4
                 ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/memory/heaptrack_agree.py
                 $<TARGET_FILE:fnprof_shared>)
set_tests_properties(e2e.memory.heaptrack_lz4 PROPERTIES LABELS e2e SKIP_RETURN_CODE 77
                     TIMEOUT 600 FIXTURES_REQUIRED fnp_lz4_built)
