# The pstats reader's tests: files real CPython writes (made at test time), malformed input,
# round trips (unit), and a libFuzzer run (fuzz). include()d from tests/CMakeLists.txt.
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

# libFuzzer needs clang. The project builds with gcc by default, so the fuzzer comes with a
# second configure of its own (CC=clang cmake -B build-fuzz ...; ctest -L fuzz): CMake then
# knows its flags and dependencies, where a custom command calling clang by hand would copy
# them and go stale as profile/ changes. The reader and the model are compiled again here,
# instrumented, rather than linked from fnp_profile, whose objects are not.
if(CMAKE_C_COMPILER_ID STREQUAL "Clang")
    get_target_property(fnp_fuzz_dir fnp_profile SOURCE_DIR)
    get_target_property(fnp_fuzz_sources fnp_profile SOURCES)
    get_target_property(fnp_fuzz_read_sources fnp_profile_read SOURCES)
    list(APPEND fnp_fuzz_sources ${fnp_fuzz_read_sources})
    list(TRANSFORM fnp_fuzz_sources PREPEND ${fnp_fuzz_dir}/ REGEX "^[^/]")
    # fnp_fuzz_target(<name> <max_len> [libFuzzer arguments...]): tests/<name>.c with the
    # profile sources, run ~20 s as the test fuzz.<name minus fuzz_>. New inputs it finds
    # accumulate in <name>.corpus in the build tree; an input that fails lands beside them
    # as <name>.crash-<sha1> (rerun the target with that file to see why).
    function(fnp_fuzz_target name max_len)
        add_executable(${name} ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/${name}.c ${fnp_fuzz_sources})
        set_target_properties(${name} PROPERTIES C_STANDARD 11)
        target_include_directories(${name} PRIVATE ${fnp_fuzz_dir}
                                   ${PROJECT_SOURCE_DIR}/symbolizer)
        target_compile_definitions(${name} PRIVATE _GNU_SOURCE)
        target_compile_options(${name} PRIVATE -Wall -Wextra -Wshadow -g -O1
                               -fsanitize=fuzzer,address,undefined
                               -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
        target_link_options(${name} PRIVATE -fsanitize=fuzzer,address,undefined)
        target_link_libraries(${name} PRIVATE m)
        set(corpus ${CMAKE_CURRENT_BINARY_DIR}/${name}.corpus)
        file(MAKE_DIRECTORY ${corpus})
        string(REPLACE "fuzz_" "fuzz." test ${name})
        add_test(NAME ${test}
                 COMMAND ${name} -max_total_time=20 -timeout=10 -rss_limit_mb=2048
                         -max_len=${max_len} -print_final_stats=1
                         -artifact_prefix=${CMAKE_CURRENT_BINARY_DIR}/${name}. ${corpus} ${ARGN})
        set_tests_properties(${test} PROPERTIES LABELS fuzz TIMEOUT 120)
    endfunction()

    # The pstats reader starts from the CPython files; the raw reader from its own sample.
    fnp_fuzz_target(fuzz_pstats_read 65536 -dict=${CMAKE_CURRENT_LIST_DIR}/data/pstats.dict
                    ${FNP_PSTATS_DATA}/prof)
    set_tests_properties(fuzz.pstats_read PROPERTIES FIXTURES_REQUIRED pstats_data)
    fnp_fuzz_target(fuzz_raw_read 8192)
    fnp_fuzz_target(fuzz_tree_read 8192 ${CMAKE_CURRENT_LIST_DIR}/data/tree_seeds)
    # The views draw whatever tree the reader accepts: compiled again here, instrumented,
    # with their generated sources (pprof's protobuf code, the HTML report's assets).
    get_target_property(fnp_views_dir fnp_views SOURCE_DIR)
    get_target_property(fnp_views_bin fnp_views BINARY_DIR)
    get_target_property(fnp_views_sources fnp_views SOURCES)
    list(TRANSFORM fnp_views_sources PREPEND ${fnp_views_dir}/ REGEX "^[^/]")
    fnp_fuzz_target(fuzz_views 8192 ${CMAKE_CURRENT_LIST_DIR}/data/tree_seeds)
    target_sources(fuzz_views PRIVATE ${fnp_views_sources})
    target_include_directories(fuzz_views PRIVATE ${fnp_views_dir} ${fnp_views_bin}
                               ${fnp_views_bin}/pprof)
    target_link_libraries(fuzz_views PRIVATE PkgConfig::PROTOBUF_C ZLIB::ZLIB)
    add_dependencies(fuzz_views fnp_views)
else()
    message(STATUS "fuzz_pstats_read: needs clang (configure a build with CC=clang)")
endif()
# SPDX-License-Identifier: MIT
