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
    add_executable(fuzz_pstats_read ${CMAKE_CURRENT_LIST_DIR}/fuzz_pstats_read.c
                   ${fnp_fuzz_sources})
    set_target_properties(fuzz_pstats_read PROPERTIES C_STANDARD 11)
    target_include_directories(fuzz_pstats_read PRIVATE ${fnp_fuzz_dir})
    target_compile_definitions(fuzz_pstats_read PRIVATE _GNU_SOURCE)
    target_compile_options(fuzz_pstats_read PRIVATE -Wall -Wextra -Wshadow -g -O1
                           -fsanitize=fuzzer,address,undefined
                           -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
    target_link_options(fuzz_pstats_read PRIVATE -fsanitize=fuzzer,address,undefined)
    target_link_libraries(fuzz_pstats_read PRIVATE m)

    # ~20 s from the CPython files; new inputs it finds accumulate in the build tree, and
    # an input that fails lands beside them as fuzz_pstats_read.crash-<sha1> (rerun the
    # target with that file to see why).
    set(fnp_fuzz_corpus ${CMAKE_CURRENT_BINARY_DIR}/fuzz_pstats_read.corpus)
    file(MAKE_DIRECTORY ${fnp_fuzz_corpus})
    add_test(NAME fuzz.pstats_read
             COMMAND fuzz_pstats_read -max_total_time=20 -timeout=10
                     -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1
                     -artifact_prefix=${CMAKE_CURRENT_BINARY_DIR}/fuzz_pstats_read.
                     -dict=${CMAKE_CURRENT_LIST_DIR}/data/pstats.dict
                     ${fnp_fuzz_corpus} ${FNP_PSTATS_DATA}/prof)
    set_tests_properties(fuzz.pstats_read PROPERTIES LABELS fuzz FIXTURES_REQUIRED pstats_data
                         TIMEOUT 120)

    add_executable(fuzz_raw_read ${CMAKE_CURRENT_LIST_DIR}/fuzz_raw_read.c ${fnp_fuzz_sources})
    set_target_properties(fuzz_raw_read PROPERTIES C_STANDARD 11)
    target_include_directories(fuzz_raw_read PRIVATE ${fnp_fuzz_dir}
                               ${PROJECT_SOURCE_DIR}/symbolizer)
    target_compile_definitions(fuzz_raw_read PRIVATE _GNU_SOURCE)
    target_compile_options(fuzz_raw_read PRIVATE -Wall -Wextra -Wshadow -g -O1
                           -fsanitize=fuzzer,address,undefined
                           -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
    target_link_options(fuzz_raw_read PRIVATE -fsanitize=fuzzer,address,undefined)
    target_link_libraries(fuzz_raw_read PRIVATE m)
    set(fnp_fuzz_raw_corpus ${CMAKE_CURRENT_BINARY_DIR}/fuzz_raw_read.corpus)
    file(MAKE_DIRECTORY ${fnp_fuzz_raw_corpus})
    add_test(NAME fuzz.raw_read
             COMMAND fuzz_raw_read -max_total_time=20 -timeout=10 -rss_limit_mb=2048
                     -max_len=8192 -print_final_stats=1
                     -artifact_prefix=${CMAKE_CURRENT_BINARY_DIR}/fuzz_raw_read.
                     ${fnp_fuzz_raw_corpus})
    set_tests_properties(fuzz.raw_read PROPERTIES LABELS fuzz TIMEOUT 120)
else()
    message(STATUS "fuzz_pstats_read: needs clang (configure a build with CC=clang)")
endif()
