# PROF_FILTER and fnprof suggest-filter (docs/filter.md): the parser's unit test, its fuzz
# target, and the runtime filter end to end with each compiler. include()d from
# tests/CMakeLists.txt.
fnp_unit_test(check_filter)

foreach(cc gcc clang)
    foreach(opt -O0 -O2)
        add_test(NAME e2e.filter.${cc}${opt}
                 COMMAND Python3::Interpreter -B ${CMAKE_CURRENT_LIST_DIR}/filter/run_filter.py
                         --cc ${cc} --opt=${opt} --lib-dir $<TARGET_FILE_DIR:fnprof_shared>
                         --fnprof $<TARGET_FILE:fnprof>
                         --workdir ${CMAKE_CURRENT_BINARY_DIR}/filter/${cc}${opt})
        set_tests_properties(e2e.filter.${cc}${opt} PROPERTIES LABELS e2e TIMEOUT 120)
    endforeach()
endforeach()

# suggest-filter's patterns and comments for names holding newlines, escape sequences and
# invalid UTF-8: printable lines that read back as the names.
add_test(NAME e2e.filter.suggest_escapes
         COMMAND Python3::Interpreter -B ${CMAKE_CURRENT_LIST_DIR}/filter/run_suggest_escapes.py
                 --fnprof $<TARGET_FILE:fnprof>)
set_tests_properties(e2e.filter.suggest_escapes PROPERTIES LABELS e2e TIMEOUT 60)

if(COMMAND fnp_fuzz_target)
    fnp_fuzz_target(fuzz_filter 4096)
endif()

# The exit line naming the program's own libraries that call no hook (runtime/coverage.c).
foreach(cc gcc clang)
    add_test(NAME e2e.coverage.${cc}
             COMMAND ${CMAKE_CURRENT_LIST_DIR}/coverage/run_coverage.sh ${cc}
                     $<TARGET_FILE_DIR:fnprof_shared> ${CMAKE_CURRENT_BINARY_DIR}/coverage/${cc}
                     ${Python3_EXECUTABLE})
    set_tests_properties(e2e.coverage.${cc} PROPERTIES LABELS e2e TIMEOUT 60)
endforeach()
# SPDX-License-Identifier: MIT
