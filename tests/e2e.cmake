# End-to-end tests: real programs built with gcc and clang, profiled by fnprof (linked, and
# through LD_PRELOAD), their numbers compared with cProfile's for a Python mirror of each
# (tests/e2e/README.md). Included from tests/CMakeLists.txt; label e2e.
find_package(Python3 REQUIRED COMPONENTS Interpreter)

set(fnp_e2e_dir ${CMAKE_CURRENT_LIST_DIR}/e2e)
set(fnp_e2e_work ${CMAKE_CURRENT_BINARY_DIR}/e2e)
set(fnp_e2e_progs callers comb deep expr fib mixed mutual threeway tree worked)
# compiler:optimisation pairs; each runs linked with -lfnprof and under LD_PRELOAD.
set(fnp_e2e_configs gcc:-O0 gcc:-O2 clang:-O2)

# The harness checks itself (hand-derived numbers, compare.py on right and wrong files).
add_test(NAME e2e.harness.selftest
         COMMAND Python3::Interpreter -B ${fnp_e2e_dir}/selftest.py
                 --workdir ${fnp_e2e_work}/harness.selftest)
set_tests_properties(e2e.harness.selftest PROPERTIES LABELS e2e TIMEOUT 60)

# fnp_e2e_case(<test name> <cc> <opt> <mode> <prog> [run_case.py options...])
function(fnp_e2e_case name cc opt mode prog)
    add_test(NAME ${name}
             COMMAND Python3::Interpreter -B ${fnp_e2e_dir}/run_case.py
                     --cc ${cc} --opt=${opt} --mode ${mode} --prog ${prog}
                     --lib-dir $<TARGET_FILE_DIR:fnprof_shared>
                     --include-dir ${PROJECT_SOURCE_DIR}/include
                     --workdir ${fnp_e2e_work}/${name} ${ARGN})
    set_tests_properties(${name} PROPERTIES LABELS e2e TIMEOUT 300)
endfunction()

foreach(config IN LISTS fnp_e2e_configs)
    string(REPLACE ":" ";" parts ${config})
    list(GET parts 0 cc)
    list(GET parts 1 opt)
    foreach(mode link preload)
        foreach(prog IN LISTS fnp_e2e_progs)
            fnp_e2e_case(e2e.${prog}.${cc}${opt}.${mode} ${cc} ${opt} ${mode} ${prog})
        endforeach()
    endforeach()
endforeach()

foreach(mode link preload)
    # Times against the program's own clock (progs/spin.c), so a loaded machine hardly moves
    # it; RUN_SERIAL all the same, and a label of its own (ctest -LE timing leaves it out).
    fnp_e2e_case(e2e.timing.spin.gcc-O2.${mode} gcc -O2 ${mode} spin --check timing)
    set_tests_properties(e2e.timing.spin.gcc-O2.${mode} PROPERTIES RUN_SERIAL TRUE
                         LABELS "e2e;timing")
    # Count-only mode: the same counts as cProfile, call counts for times.
    foreach(prog mutual threeway worked)
        fnp_e2e_case(e2e.count.${prog}.gcc-O2.${mode} gcc -O2 ${mode} ${prog} --check count)
    endforeach()
    # 4^7 call paths with room for 300 nodes: merged beyond the cap, counts still exact.
    fnp_e2e_case(e2e.capped.comb.gcc-O2.${mode} gcc -O2 ${mode} comb --max-nodes 300)
    fnp_e2e_case(e2e.capped.mutual.gcc-O2.${mode} gcc -O2 ${mode} mutual --max-nodes 3)
    # PROF_OUTPUT unset: fnprof loaded but inert.
    fnp_e2e_case(e2e.no_output.fib.gcc-O2.${mode} gcc -O2 ${mode} fib --check no-output)
endforeach()

# Named regions (include/fnprof.h) against cProfile, a region mirrored by a function of its
# name: C with both compilers at -O0 and -O2, C++ with exceptions through regions. Linked
# only: the program calls fnprof's API.
foreach(config gcc:-O0 gcc:-O2 clang:-O0 clang:-O2)
    string(REPLACE ":" ";" parts ${config})
    list(GET parts 0 cc)
    list(GET parts 1 opt)
    fnp_e2e_case(e2e.regions.${cc}${opt}.link ${cc} ${opt} link regions)
    set(cxx g++)
    if(cc STREQUAL "clang")
        set(cxx clang++)
    endif()
    fnp_e2e_case(e2e.regions_except.${cxx}${opt}.link ${cxx} ${opt} link regions_except)
    fnp_e2e_case(e2e.no_output.regions.${cc}${opt}.link ${cc} ${opt} link regions --check no-output)
endforeach()
# SPDX-License-Identifier: MIT
