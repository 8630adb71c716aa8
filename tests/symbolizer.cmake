# The symbolizer's Check test; include()d from tests/CMakeLists.txt. It compiles the programs
# in tests/symbolizer/ at test time with gcc, g++, clang, clang++ and reads them back with
# objcopy, strip and llvm-symbolizer (scripts/install-deps brings them all).
if(NOT TARGET PkgConfig::CHECK)
    pkg_check_modules(CHECK REQUIRED IMPORTED_TARGET check)
endif()

add_executable(check_symbolizer ${CMAKE_CURRENT_LIST_DIR}/check_symbolizer.c)
set_target_properties(check_symbolizer PROPERTIES C_STANDARD 11)
target_link_libraries(check_symbolizer PRIVATE fnp_flags fnp_symbolizer PkgConfig::CHECK
                      PkgConfig::LIBELF)
target_compile_definitions(check_symbolizer PRIVATE
    FNP_TEST_SRC_DIR="${CMAKE_CURRENT_LIST_DIR}/symbolizer"
    FNP_TEST_WORK_DIR="${CMAKE_CURRENT_BINARY_DIR}/symbolizer-work")
add_test(NAME unit.check_symbolizer COMMAND check_symbolizer)
set_tests_properties(unit.check_symbolizer PROPERTIES LABELS unit TIMEOUT 900)
# SPDX-License-Identifier: MIT
