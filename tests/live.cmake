# The live controls (tests/live/README.md): PROF_TOGGLE_SIGNAL and fnprof record --pid, one
# ctest per case of tests/live/run_live.py, named live.<case>[.<cc><opt>], label live.
#   ctest -L live
set(fnp_live_dir ${CMAKE_CURRENT_LIST_DIR}/live)

function(fnp_live_case name case cc opt)
    add_test(NAME live.${name}
             COMMAND Python3::Interpreter -B ${fnp_live_dir}/run_live.py --case ${case}
                     --cc ${cc} --opt=${opt} --lib-dir $<TARGET_FILE_DIR:fnprof_shared>
                     --bin-dir ${PROJECT_BINARY_DIR}/${CMAKE_INSTALL_BINDIR}
                     --source-root ${PROJECT_SOURCE_DIR}
                     --workdir ${CMAKE_CURRENT_BINARY_DIR}/live/${name} ${ARGN})
    set_tests_properties(live.${name} PROPERTIES LABELS "e2e;live" TIMEOUT 300
                         SKIP_RETURN_CODE 77)
endfunction()

foreach(config gcc:-O0 gcc:-O2 clang:-O2)
    string(REPLACE ":" ";" parts ${config})
    list(GET parts 0 cc)
    list(GET parts 1 opt)
    fnp_live_case(toggle.${cc}${opt} toggle ${cc} ${opt})
    fnp_live_case(toggle_threads.${cc}${opt} toggle_threads ${cc} ${opt})
endforeach()
foreach(case toggle_names toggle_refused record record_running record_forked record_refused
        record_interrupted)
    fnp_live_case(${case} ${case} gcc -O2)
endforeach()

# Under ThreadSanitizer and AddressSanitizer, the program and the runtime's sources (compiled once by the robust
# suite's fixture, tests/robust.cmake): the signal thread toggling, marking and writing
# windows while the program's threads run. Not toggle: TSan refuses to start a thread in
# a child forked by a process with threads (the signal thread), which the child must.
foreach(san tsan asan)
    foreach(case toggle_threads record)
        fnp_live_case(${case}.gcc-O1.${san} ${case} gcc -O1 --mode ${san}
                      --runtime-objs ${fnp_robust_work}/runtime.${san})
        set_tests_properties(live.${case}.gcc-O1.${san} PROPERTIES LABELS "e2e;live;sanitize"
                             FIXTURES_REQUIRED fnp_robust_${san})
    endforeach()
endforeach()
# SPDX-License-Identifier: MIT
