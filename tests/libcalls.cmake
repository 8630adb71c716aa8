# PROF_LIBCALLS end to end (tests/libcalls/run_libcalls_test.py, docs/libcalls.md): library
# calls exact under their callers with lazy and immediate binding, PIE and not, -fno-plt,
# linked and preloaded, libfnprof.a, a library dlopen'd through the program's RUNPATH;
# patterns and filter files; longjmp, pthread_exit and a C++ exception through qsort; the
# waits of a thread pool, fnprof report --no-waits and the HTML page's switch; PROF_MEMORY
# beside it; a GOT that cannot be made writable; a fork during a scan; nothing touched
# without it. The MPI wrappers with it: e2e.mpi.libcalls (mpi.cmake).
add_library(fnp_libcalls_known SHARED libcalls/known.c)
set_target_properties(fnp_libcalls_known PROPERTIES OUTPUT_NAME known C_STANDARD 11
                      LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/libcalls)
add_executable(fnp_libcalls_static libcalls/calls.c)
target_compile_options(fnp_libcalls_static PRIVATE -g -O0 -fno-builtin -finstrument-functions -w)
target_link_libraries(fnp_libcalls_static PRIVATE fnprof_static fnp_libcalls_known ${CMAKE_DL_LIBS})
foreach(case calls unset patterns longjmp exception waits memory refused html fork)
    add_test(NAME libcalls.${case}
             COMMAND Python3::Interpreter -B ${CMAKE_CURRENT_SOURCE_DIR}/libcalls/run_libcalls_test.py
                     ${case} --lib $<TARGET_FILE:fnprof_shared> --fnprof $<TARGET_FILE:fnprof>
                     --static-prog $<TARGET_FILE:fnp_libcalls_static>)
    set_tests_properties(libcalls.${case} PROPERTIES LABELS "libcalls;e2e" SKIP_RETURN_CODE 77
                         TIMEOUT 300)
endforeach()
# SPDX-License-Identifier: MIT
