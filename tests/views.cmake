# The views (fnprof convert --to FORMAT): each format checked by an independent reader,
# on one profiled program whose call paths only the tree gets right (views/progs/paths.c).
# Included from tests/CMakeLists.txt. One file per format under views/, each adding its
# tests with the fixture below.
find_package(Python3 REQUIRED COMPONENTS Interpreter)

set(fnp_views_dir ${CMAKE_CURRENT_LIST_DIR}/views)
set(fnp_views_work ${CMAKE_CURRENT_BINARY_DIR}/views)

add_test(NAME views.fixture
         COMMAND Python3::Interpreter -B ${fnp_views_dir}/make_fixture.py
                 --lib-dir $<TARGET_FILE_DIR:fnprof_shared>
                 --include-dir ${PROJECT_SOURCE_DIR}/include --workdir ${fnp_views_work})
set_tests_properties(views.fixture PROPERTIES LABELS views FIXTURES_SETUP views_profiles)

# fnp_views_test(name script.py [args...]): runs views/script.py with --fnprof, --workdir
# (the fixture's files) and the arguments; label views.
function(fnp_views_test name script)
    add_test(NAME views.${name}
             COMMAND Python3::Interpreter -B ${fnp_views_dir}/${script}
                     --fnprof $<TARGET_FILE:fnprof> --workdir ${fnp_views_work} ${ARGN})
    set_tests_properties(views.${name} PROPERTIES LABELS views FIXTURES_REQUIRED views_profiles
                         TIMEOUT 120)
endfunction()

file(GLOB fnp_views_cmake ${fnp_views_dir}/*.cmake)
list(SORT fnp_views_cmake)
foreach(f IN LISTS fnp_views_cmake)
    include(${f})
endforeach()
# SPDX-License-Identifier: MIT
