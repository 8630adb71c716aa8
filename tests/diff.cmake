# fnprof diff (docs/diff.md): its logic as a unit test, then the command on two runs of a
# program whose hot spot moves, profiled by fnprof (timed and count-only) and by CPython's
# cProfile (tests/diff/diff_cli.py). include()d from tests/CMakeLists.txt.
if(NOT TARGET PkgConfig::CHECK)
    pkg_check_modules(CHECK REQUIRED IMPORTED_TARGET check)
endif()
find_package(Python3 REQUIRED COMPONENTS Interpreter)

set(fnp_diff_dir ${CMAKE_CURRENT_LIST_DIR}/diff)
set(fnp_diff_work ${CMAKE_CURRENT_BINARY_DIR}/diff)

add_executable(check_diff ${fnp_diff_dir}/check_diff.c)
set_target_properties(check_diff PROPERTIES C_STANDARD 11)
target_link_libraries(check_diff PRIVATE fnp_profile fnp_profile_read PkgConfig::CHECK fnp_flags m)
add_test(NAME unit.check_diff COMMAND check_diff)
set_tests_properties(unit.check_diff PROPERTIES LABELS unit)

# The rank test of the runs form (profile/ranktest.c), against tables and enumeration.
add_executable(check_ranktest ${fnp_diff_dir}/check_ranktest.c)
set_target_properties(check_ranktest PROPERTIES C_STANDARD 11)
target_link_libraries(check_ranktest PRIVATE fnp_profile fnp_profile_read PkgConfig::CHECK fnp_flags
                                             m)
add_test(NAME unit.check_ranktest COMMAND check_ranktest)
set_tests_properties(unit.check_ranktest PROPERTIES LABELS unit)

# The profiles every check reads: built and run once.
add_test(NAME diff.fixture
         COMMAND Python3::Interpreter -B ${fnp_diff_dir}/diff_cli.py fixture
                 --lib-dir $<TARGET_FILE_DIR:fnprof_shared> --workdir ${fnp_diff_work})
set_tests_properties(diff.fixture PROPERTIES LABELS e2e FIXTURES_SETUP diff_profiles TIMEOUT 120)

foreach(check order_and_marks timed_hot_spot json_matches_pstats cpython_profiles exit_statuses
              floors_and_units count_only_against_timed runs_form)
    add_test(NAME diff.${check}
             COMMAND Python3::Interpreter -B ${fnp_diff_dir}/diff_cli.py ${check}
                     --fnprof $<TARGET_FILE:fnprof> --workdir ${fnp_diff_work}
                     --data ${CMAKE_CURRENT_LIST_DIR}/data)
    set_tests_properties(diff.${check} PROPERTIES LABELS e2e FIXTURES_REQUIRED diff_profiles
                         TIMEOUT 120)
endforeach()

# The CI gate of the README on a real program timed here (tests/diff/gate.py): unchanged
# reruns pass, round after round; a 20% slowdown of one function fails, naming it (or is
# skipped, 77, when the machine's noise is larger than the change).
add_test(NAME diff.gate_build
         COMMAND Python3::Interpreter -B ${fnp_diff_dir}/gate.py build
                 --lib-dir $<TARGET_FILE_DIR:fnprof_shared> --workdir ${fnp_diff_work}/gate)
set_tests_properties(diff.gate_build PROPERTIES LABELS e2e FIXTURES_SETUP diff_gate TIMEOUT 60)
foreach(fnp_case "reruns;gate_passes_unchanged_reruns" "regression;gate_fails_a_regression_naming_it")
    list(GET fnp_case 0 fnp_check)
    list(GET fnp_case 1 fnp_name)
    add_test(NAME diff.${fnp_name}
             COMMAND Python3::Interpreter -B ${fnp_diff_dir}/gate.py ${fnp_check}
                     --fnprof $<TARGET_FILE:fnprof> --workdir ${fnp_diff_work}/gate)
    # Alone on the machine (RUN_SERIAL): timed runs beside other tests spread too much for
    # a 20% change to be seen, and the regression check would only skip.
    set_tests_properties(diff.${fnp_name} PROPERTIES LABELS e2e FIXTURES_REQUIRED diff_gate
                         TIMEOUT 300 SKIP_RETURN_CODE 77 RUN_SERIAL TRUE)
endforeach()
# SPDX-License-Identifier: MIT
