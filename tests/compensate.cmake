# PROF_COMPENSATE and --compensate (docs/compensation.md): the arithmetic on hand-made trees
# (check_compensate.c), the runtime's calibration (check_calibrate.c), and programs of known cost run under fnprof, whose compensated
# times the command and an independent reading of the tree must agree on
# (compensate/check_e2e.py). include()d from tests/CMakeLists.txt.
find_package(Python3 REQUIRED COMPONENTS Interpreter)

add_executable(check_compensate ${CMAKE_CURRENT_LIST_DIR}/check_compensate.c)
set_target_properties(check_compensate PROPERTIES C_STANDARD 11)
target_include_directories(check_compensate PRIVATE ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(check_compensate PRIVATE fnp_profile fnp_profile_read PkgConfig::CHECK
                      fnp_flags m)
add_test(NAME compensate.unit COMMAND check_compensate)
set_tests_properties(compensate.unit PROPERTIES LABELS unit)

# The runtime's calibration (check_calibrate.c), with fnprof's hooks bound (PROF_OUTPUT set
# when the test starts) and without.
add_executable(check_calibrate ${CMAKE_CURRENT_LIST_DIR}/check_calibrate.c)
set_target_properties(check_calibrate PROPERTIES C_STANDARD 11)
target_include_directories(check_calibrate PRIVATE ${CMAKE_CURRENT_LIST_DIR}
                           ${PROJECT_SOURCE_DIR}/runtime ${PROJECT_SOURCE_DIR}/profile)
target_link_libraries(check_calibrate PRIVATE fnprof_static PkgConfig::CHECK fnp_flags)
add_test(NAME compensate.calibrate COMMAND check_calibrate bound)
set_tests_properties(compensate.calibrate PROPERTIES LABELS unit ENVIRONMENT
                     "PROF_OUTPUT=${CMAKE_CURRENT_BINARY_DIR}/calibrate.prof;PROF_QUIET=1")
add_test(NAME compensate.calibrate_ordered COMMAND check_calibrate bound)
set_tests_properties(compensate.calibrate_ordered PROPERTIES LABELS unit ENVIRONMENT
                     "PROF_OUTPUT=${CMAKE_CURRENT_BINARY_DIR}/calibrate.prof;PROF_QUIET=1;PROF_COMPENSATE=1")
add_test(NAME compensate.calibrate_unbound COMMAND check_calibrate unbound)
set_tests_properties(compensate.calibrate_unbound PROPERTIES LABELS unit
                     ENVIRONMENT_MODIFICATION "PROF_OUTPUT=unset:")

set(fnp_compensate_args --fnprof $<TARGET_FILE:fnprof> --lib-dir $<TARGET_FILE_DIR:fnprof_shared>
    --workdir ${CMAKE_CURRENT_BINARY_DIR}/compensate)
add_test(NAME compensate.e2e
         COMMAND Python3::Interpreter -B ${CMAKE_CURRENT_LIST_DIR}/compensate/check_e2e.py
                 ${fnp_compensate_args})
add_test(NAME compensate.cli
         COMMAND Python3::Interpreter -B ${CMAKE_CURRENT_LIST_DIR}/compensate/check_cli.py
                 ${fnp_compensate_args})
set_tests_properties(compensate.e2e compensate.cli PROPERTIES LABELS e2e TIMEOUT 300
                     SKIP_RETURN_CODE 77)
# SPDX-License-Identifier: MIT
