# SPDX-License-Identifier: MIT
# The hostile suite (tests/hostile/README.md): fnprof as a guest in programs and on machines
# that provoke it (device nodes and FIFOs as outputs, planted symlinks, forks with locks held,
# closed and reused fds, signals during the dump, resource limits). One ctest per
# tests/hostile/case_<what>.py, named hostile.<what>, labels e2e and hostile. Cases that need
# root (CI runs as root) exit 77 elsewhere: ctest shows them as skipped, with the reason.
#   ctest -L hostile
file(GLOB fnp_hostile_cases CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/hostile/case_*.py)
foreach(script ${fnp_hostile_cases})
    get_filename_component(stem ${script} NAME_WE)
    string(REGEX REPLACE "^case_" "" what ${stem})
    add_test(NAME hostile.${what}
             COMMAND Python3::Interpreter -B ${script}
                     --lib-dir $<TARGET_FILE_DIR:fnprof_shared>
                     --bin-dir ${PROJECT_BINARY_DIR}/${CMAKE_INSTALL_BINDIR}
                     --source-root ${PROJECT_SOURCE_DIR}
                     --workdir ${CMAKE_CURRENT_BINARY_DIR}/hostile/${what})
    set_tests_properties(hostile.${what} PROPERTIES LABELS "e2e;hostile" TIMEOUT 300
                         SKIP_RETURN_CODE 77)
endforeach()
