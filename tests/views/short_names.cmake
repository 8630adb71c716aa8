# The C++ name shortener (views/short_names.c) and the labels built on it, on a table of
# names (check_short_names.c); then on a real C++ program through fnprof convert and report
# (check_short_names.py, progs/cxx/).
add_executable(check_short_names ${CMAKE_CURRENT_LIST_DIR}/check_short_names.c)
set_target_properties(check_short_names PROPERTIES C_STANDARD 11)
target_link_libraries(check_short_names PRIVATE fnp_views fnp_profile PkgConfig::CHECK fnp_flags m)
add_test(NAME unit.check_short_names COMMAND check_short_names)
set_tests_properties(unit.check_short_names PROPERTIES LABELS "unit;views")
fnp_views_test(short_names_on_a_cxx_program check_short_names.py --lib-dir
               $<TARGET_FILE_DIR:fnprof_shared>)
set_tests_properties(views.short_names_on_a_cxx_program PROPERTIES SKIP_RETURN_CODE 77)
# SPDX-License-Identifier: MIT
