# SPDX-License-Identifier: MIT
# PROF_MEMORY end to end (tests/memory/run_memory_test.py): exact allocations per function
# with each compiler found, threads, C++ new/delete, fork, nothing without PROF_MEMORY, and
# the message of libfnprof.a; fnprof's memory profile against heaptrack's on one program.
# The cases build their programs themselves (gcc and clang, g++ and clang++), -O0: at -O2
# both compilers may remove a malloc/free pair whose block is not used.
foreach(case known threads cxx fork unset format)
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
