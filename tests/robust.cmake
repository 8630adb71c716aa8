# Robustness tests: threads, fork, exec, longjmp, C++ exceptions and issue 13's controls in
# profiled programs, built at test time by tests/robust/run_robust.py (tests/robust/README.md).
# Included from tests/CMakeLists.txt; labels e2e and robust, plus sanitize for the TSan/ASan
# builds.
#   ctest -L robust                 everything
#   ctest -L robust -LE sanitize    without the sanitizer builds

set(fnp_robust_dir ${CMAKE_CURRENT_LIST_DIR}/robust)
set(fnp_robust_work ${CMAKE_CURRENT_BINARY_DIR}/robust)

# fnp_robust_case(<name suffix> <case> <cc> <opt> <mode> [run_robust.py options...])
function(fnp_robust_case name case cc opt mode)
    set(test e2e.robust.${name})
    add_test(NAME ${test}
             COMMAND Python3::Interpreter -B ${fnp_robust_dir}/run_robust.py
                     --case ${case} --cc ${cc} --opt=${opt} --mode ${mode}
                     --lib-dir $<TARGET_FILE_DIR:fnprof_shared>
                     --workdir ${fnp_robust_work}/${name} ${ARGN})
    set_tests_properties(${test} PROPERTIES LABELS "e2e;robust" TIMEOUT 120
                         SKIP_RETURN_CODE 77)
endfunction()

# compiler:optimisation pairs, each linked with -lfnprof and run under LD_PRELOAD.
foreach(config gcc:-O0 gcc:-O2 clang:-O2)
    string(REPLACE ":" ";" parts ${config})
    list(GET parts 0 cc)
    list(GET parts 1 opt)
    foreach(mode link preload)
        foreach(case threads threads_exit fork exec reexec longjmp dlopen signals)
            fnp_robust_case(${case}.${cc}${opt}.${mode} ${case} ${cc} ${opt} ${mode})
        endforeach()
    endforeach()
endforeach()
foreach(cxx g++ clang++)
    foreach(opt -O0 -O2)
        foreach(mode link preload)
            fnp_robust_case(except.${cxx}${opt}.${mode} except ${cxx} ${opt} ${mode})
        endforeach()
    endforeach()
endforeach()

# longjmp through __longjmp_chk, and callees inlined into the function that called setjmp
# (or caught the exception): their frames share its stack pointer.
foreach(cc gcc clang)
    fnp_robust_case(longjmp.${cc}-O2.fortify.link longjmp ${cc} -O2 link
                    --cflags=-D_FORTIFY_SOURCE=2)
    fnp_robust_case(longjmp.${cc}-O2.fortify.preload longjmp ${cc} -O2 preload
                    --cflags=-D_FORTIFY_SOURCE=2)
    fnp_robust_case(longjmp.${cc}-O2.inline.link longjmp ${cc} -O2 link
                    --cflags=-DFNP_TEST_INLINE)
endforeach()
foreach(cxx g++ clang++)
    fnp_robust_case(except.${cxx}-O2.inline.link except ${cxx} -O2 link
                    --cflags=-DFNP_TEST_INLINE)
endforeach()

# 100,000 threads one after another (about 4 s a run here): exact counts, and a peak RSS
# within 8 MB of the run with 1,000 threads.
fnp_robust_case(threads_many.gcc-O2.link threads_many gcc -O2 link)
fnp_robust_case(threads_many.clang-O2.preload threads_many clang -O2 preload)
set_tests_properties(e2e.robust.threads_many.gcc-O2.link
                     e2e.robust.threads_many.clang-O2.preload PROPERTIES TIMEOUT 300)

# Recursion a million deep on a 1 GiB thread stack: exact counts, bounded memory.
fnp_robust_case(deep.gcc-O2.link deep gcc -O2 link)
fnp_robust_case(deep.clang-O0.preload deep clang -O0 preload)

# Recursions that never repeat, past the node cap and the depth a tree path holds: every
# call in constant time (each run must end within 60 s; it took minutes), exact counts,
# bounded memory. PROF_TRACE with 40,000 short detached threads: states reused, bounded.
fnp_robust_case(deep_chain.gcc-O2.link deep_chain gcc -O2 link)
fnp_robust_case(deep_chain.clang-O0.preload deep_chain clang -O0 preload)
fnp_robust_case(trace_churn.gcc-O2.link trace_churn gcc -O2 link)
fnp_robust_case(trace_churn.clang-O2.preload trace_churn clang -O2 preload)

# Issue 13's controls (progs/controls_*.c call fnprof.h, so they link with fnprof: no
# preload mode): pause and resume, the step schedule, fnprof_reset, dumps on a signal, the
# trace, metadata. gcc -O0 too for the pauses, whose cold paths differ most with inlining.
foreach(config gcc:-O0 gcc:-O2 clang:-O2)
    string(REPLACE ":" ";" parts ${config})
    list(GET parts 0 cc)
    list(GET parts 1 opt)
    set(cases pause pause_threads)
    if(NOT opt STREQUAL "-O0")
        list(APPEND cases schedule reset dumpsig trace meta)
    endif()
    foreach(case ${cases})
        fnp_robust_case(${case}.${cc}${opt}.link ${case} ${cc} ${opt} link)
    endforeach()
endforeach()

# Every program with the runtime's sources compiled in under ThreadSanitizer and
# AddressSanitizer (the program instrumented, the runtime not); any report fails the test.
# A fixture compiles the runtime once per sanitizer. 5,000 threads for threads_many: TSan
# takes 0.3 ms a thread.
# The runtime's C sources, as libfnprof.a is built from them (its own and its object
# libraries'), so that the list is kept in one place.
set(fnp_robust_sources)
foreach(target fnprof_static fnp_profile fnp_modmap fnp_symbolizer)
    get_target_property(dir ${target} SOURCE_DIR)
    get_target_property(srcs ${target} SOURCES)
    foreach(src ${srcs})
        if(src MATCHES "\\.c$")
            file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR} ${dir}/${src})
            list(APPEND fnp_robust_sources ${rel})
        endif()
    endforeach()
endforeach()
string(REPLACE ";" "," fnp_robust_sources "${fnp_robust_sources}")

foreach(san tsan asan)
    set(objs ${fnp_robust_work}/runtime.${san})
    add_test(NAME e2e.robust.runtime.${san}
             COMMAND Python3::Interpreter -B ${fnp_robust_dir}/run_robust.py --build-runtime
                     --cc gcc --opt=-O1 --mode ${san} --source-root ${PROJECT_SOURCE_DIR}
                     --sources ${fnp_robust_sources} --workdir ${objs})
    set_tests_properties(e2e.robust.runtime.${san} PROPERTIES LABELS "e2e;robust;sanitize"
                         FIXTURES_SETUP fnp_robust_${san} SKIP_RETURN_CODE 77 TIMEOUT 120)
    foreach(case threads threads_many threads_exit fork exec longjmp except trace_churn)
        set(cc gcc)
        if(case STREQUAL "except")
            set(cc g++)
        endif()
        fnp_robust_case(${case}.${cc}-O1.${san} ${case} ${cc} -O1 ${san} --runtime-objs ${objs}
                        --sources ${fnp_robust_sources} --threads 5000)
        set_tests_properties(e2e.robust.${case}.${cc}-O1.${san} PROPERTIES
                             LABELS "e2e;robust;sanitize" FIXTURES_REQUIRED fnp_robust_${san})
    endforeach()
    # The controls that run beside other threads: pausing them, dumping while they run,
    # tracing them.
    foreach(case pause_threads dumpsig trace)
        fnp_robust_case(${case}.gcc-O1.${san} ${case} gcc -O1 ${san} --runtime-objs ${objs}
                        --sources ${fnp_robust_sources})
        set_tests_properties(e2e.robust.${case}.gcc-O1.${san} PROPERTIES
                             LABELS "e2e;robust;sanitize" FIXTURES_REQUIRED fnp_robust_${san})
    endforeach()
endforeach()
# SPDX-License-Identifier: MIT
