# The pstats reader's tests: files real CPython writes (made at test time), malformed input,
# round trips (unit); its fuzz targets are in fuzz.cmake. include()d from tests/CMakeLists.txt.
if(NOT TARGET PkgConfig::CHECK)
    pkg_check_modules(CHECK REQUIRED IMPORTED_TARGET check)
endif()
find_package(Python3 REQUIRED COMPONENTS Interpreter)

include(${CMAKE_CURRENT_LIST_DIR}/data/pstats_data.cmake)

add_executable(check_pstats_read ${CMAKE_CURRENT_LIST_DIR}/check_pstats_read.c)
set_target_properties(check_pstats_read PROPERTIES C_STANDARD 11)
target_link_libraries(check_pstats_read PRIVATE fnp_profile fnp_profile_read PkgConfig::CHECK fnp_flags m)
add_test(NAME unit.check_pstats_read COMMAND check_pstats_read ${FNP_PSTATS_DATA})
set_tests_properties(unit.check_pstats_read PROPERTIES LABELS unit FIXTURES_REQUIRED pstats_data
                     TIMEOUT 300)

# The raw snapshot reader (a dying process's file, for fnprof symbolize): unit and fuzz.
add_executable(check_raw_read ${CMAKE_CURRENT_LIST_DIR}/check_raw_read.c)
set_target_properties(check_raw_read PROPERTIES C_STANDARD 11)
target_link_libraries(check_raw_read PRIVATE fnp_profile fnp_profile_read PkgConfig::CHECK fnp_flags m)
add_test(NAME unit.check_raw_read COMMAND check_raw_read)
set_tests_properties(unit.check_raw_read PROPERTIES LABELS unit)

# The calling-context tree after the dict: its model, file format and damage (unit).
add_executable(check_tree ${CMAKE_CURRENT_LIST_DIR}/check_tree.c)
set_target_properties(check_tree PROPERTIES C_STANDARD 11)
target_link_libraries(check_tree PRIVATE fnp_profile fnp_profile_read PkgConfig::CHECK fnp_flags m)
add_test(NAME unit.check_tree COMMAND check_tree)
set_tests_properties(unit.check_tree PROPERTIES LABELS unit)
# SPDX-License-Identifier: MIT
