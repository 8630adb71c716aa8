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

# The profiles every check reads: built and run once.
add_test(NAME diff.fixture
         COMMAND Python3::Interpreter -B ${fnp_diff_dir}/diff_cli.py fixture
                 --lib-dir $<TARGET_FILE_DIR:fnprof_shared> --workdir ${fnp_diff_work})
set_tests_properties(diff.fixture PROPERTIES LABELS e2e FIXTURES_SETUP diff_profiles TIMEOUT 120)

foreach(check order_and_marks timed_hot_spot json_matches_pstats cpython_profiles exit_statuses
              floors_and_units count_only_against_timed)
    add_test(NAME diff.${check}
             COMMAND Python3::Interpreter -B ${fnp_diff_dir}/diff_cli.py ${check}
                     --fnprof $<TARGET_FILE:fnprof> --workdir ${fnp_diff_work}
                     --data ${CMAKE_CURRENT_LIST_DIR}/data)
    set_tests_properties(diff.${check} PROPERTIES LABELS e2e FIXTURES_REQUIRED diff_profiles
                         TIMEOUT 120)
endforeach()
# SPDX-License-Identifier: MIT
