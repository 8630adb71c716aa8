# fnprof installed (cmake --install into a scratch prefix) and used by every route a user
# has: pkg-config (-static too), find_package, add_subdirectory, fnprof_instrument's
# DEPENDENCIES and fnprof_instrument_directory (tests/package/install_test.py, one case per
# test). Included from tests/CMakeLists.txt; label e2e.
set(fnp_install_prefix ${CMAKE_CURRENT_BINARY_DIR}/install/prefix)
set(fnp_install_work ${CMAKE_CURRENT_BINARY_DIR}/install)
set(fnp_install_py ${CMAKE_CURRENT_SOURCE_DIR}/package/install_test.py)

add_test(NAME e2e.install.setup
         COMMAND Python3::Interpreter -B ${fnp_install_py} install
                 --build ${PROJECT_BINARY_DIR} --prefix ${fnp_install_prefix})
set_tests_properties(e2e.install.setup PROPERTIES LABELS e2e FIXTURES_SETUP fnp_installed)

# fnp_install_case(<name> <case> [options...])
function(fnp_install_case name case)
    add_test(NAME e2e.install.${name}
             COMMAND Python3::Interpreter -B ${fnp_install_py} ${case}
                     --prefix ${fnp_install_prefix} --build ${PROJECT_BINARY_DIR}
                     --work ${fnp_install_work}/${name} ${ARGN})
    set_tests_properties(e2e.install.${name} PROPERTIES LABELS e2e TIMEOUT 600
                         FIXTURES_REQUIRED fnp_installed)
endfunction()

fnp_install_case(static_pkgconfig.gcc static --cc gcc)
fnp_install_case(static_pkgconfig.clang static --cc clang)
fnp_install_case(link_position.gcc link-position --cc gcc)
fnp_install_case(link_position.clang link-position --cc clang)
fnp_install_case(no_build_paths abs-paths)
fnp_install_case(find_package_missing_deps find-package)
fnp_install_case(add_subdirectory_target_only subdir)
fnp_install_case(instrument_dependencies multi --mode DEPENDENCIES)
fnp_install_case(instrument_dependencies_static multi --mode DEPENDENCIES --static)
fnp_install_case(instrument_directory multi --mode DIRECTORY)
fnp_install_case(exclusions.gcc cxx --cc gcc)
fnp_install_case(exclusions.clang cxx --cc clang)

# The package from the build tree; a prefix moved after install (pkg-config, autoconf's
# probe, `fnprof --libdir` and LD_PRELOAD, the wrappers, examples/primes by make and CMake);
# the installed man pages; the .deb unpacked and used alone. Exit 77: a tool is missing.
fnp_install_case(build_tree build-tree)
fnp_install_case(relocated relocated)
fnp_install_case(man man)
fnp_install_case(deb deb)
set_tests_properties(e2e.install.build_tree e2e.install.relocated e2e.install.man
                     e2e.install.deb PROPERTIES SKIP_RETURN_CODE 77)
# The build tree needs no install: the fixture is only for the ones that read the prefix.
set_tests_properties(e2e.install.build_tree e2e.install.relocated e2e.install.deb
                     PROPERTIES FIXTURES_REQUIRED "")
# SPDX-License-Identifier: MIT
