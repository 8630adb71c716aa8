# fnprof-cc and fnprof-c++ (docs/wrappers.md) against the compilers they wrap: every check of
# tests/wrappers/check_wrappers.py with gcc and with clang, and a real project (Debian's lz4
# sources) built with `make CC=fnprof-cc`, its profile's calls compared with an exact
# counting hook's. Included from tests/CMakeLists.txt; label e2e.
set(fnp_wrappers_dir ${CMAKE_CURRENT_LIST_DIR}/wrappers)
set(fnp_wrappers_work ${CMAKE_CURRENT_BINARY_DIR}/wrappers)

foreach(fnp_cc gcc clang)
    foreach(fnp_check profile_c profile_cxx separate preprocess failure response info probes
                      shared env filter uninstrumented_link)
        add_test(NAME e2e.wrappers.${fnp_check}.${fnp_cc}
                 COMMAND Python3::Interpreter -B ${fnp_wrappers_dir}/check_wrappers.py
                         --bin $<TARGET_FILE_DIR:fnprof_wrapper_cc> --cc ${fnp_cc}
                         --workdir ${fnp_wrappers_work}/${fnp_check}.${fnp_cc} ${fnp_check})
        set_tests_properties(e2e.wrappers.${fnp_check}.${fnp_cc} PROPERTIES LABELS e2e
                             TIMEOUT 300 SKIP_RETURN_CODE 2)
    endforeach()
endforeach()

# A real project: apt-get source lz4 into the build tree (skipped, exit 77, where that is
# impossible), built with the wrapper; counts against count_hooks.c.
add_test(NAME e2e.wrappers.lz4
         COMMAND ${fnp_wrappers_dir}/lz4.sh $<TARGET_FILE_DIR:fnprof_wrapper_cc>
                 ${fnp_wrappers_work}/lz4)
set_tests_properties(e2e.wrappers.lz4 PROPERTIES LABELS e2e TIMEOUT 900 SKIP_RETURN_CODE 77)
# SPDX-License-Identifier: MIT
