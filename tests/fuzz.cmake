# The fuzz targets (tests/fuzz_*.c, libFuzzer) and the unit tests under ASan and UBSan: both
# need clang, and the project builds with gcc. include()d from tests/CMakeLists.txt.
#
# A gcc build makes a second build of this same tree with clang inside its own build tree,
# <build>/clang-checks (ExternalProject, configured with FNPROF_SANITIZE=address,undefined
# and FNPROF_CLANG_CHECKS=OFF), and runs what that build made as its own tests:
#   ctest -L fuzz       fuzz.<target>: each fuzzer for FNP_FUZZ_SECONDS
#   ctest -L sanitize   sanitize.unit: the unit.check_* tests of the clang build
# so that `scripts/test` (and CI) runs them with everything else, and the fuzz tests can
# start from profiles other tests' fixtures made. Why not a second configure by hand or a
# custom command calling clang: CMake keeps the clang build's flags, sources and generated
# files (pprof's protobuf code, the HTML assets) the same as the gcc build's, and one ctest
# holds every test. A build configured with clang and FNPROF_CLANG_CHECKS=OFF (which is
# what the inner build is) compiles the fuzz targets itself.
#
# A fuzzer that fails (crash, sanitizer report, leak, timeout, out of memory) fails its
# test; tests/fuzz/run_fuzz.py then prints the path of the input that did it, kept in
# <build>/tests/fuzz/<target>.<kind>-<sha1>. Inputs the fuzzers find accumulate in
# <build>/tests/fuzz/<target>.corpus and are replayed on the next run.
find_program(FNP_CLANG NAMES clang clang-14)
set(fnp_clang_default OFF)
if(FNP_CLANG AND NOT FNPROF_SANITIZE)
    set(fnp_clang_default ON)
endif()
option(FNPROF_CLANG_CHECKS "Build fuzzers and sanitized unit tests with clang in <build>/clang-checks"
       ${fnp_clang_default})
set(FNP_FUZZ_SECONDS 20 CACHE STRING "How long each fuzz test runs, in seconds")

set(fnp_fuzz_work ${CMAKE_CURRENT_BINARY_DIR}/fuzz)
set(fnp_fuzz_run ${CMAKE_CURRENT_LIST_DIR}/fuzz/run_fuzz.py)
file(MAKE_DIRECTORY ${fnp_fuzz_work})

# clang without its runtimes (Debian's libclang-rt-dev) cannot link a fuzzer: say so here
# rather than fail the build.
if(FNPROF_CLANG_CHECKS AND FNP_CLANG AND NOT DEFINED CACHE{FNP_CLANG_FUZZER_WORKS})
    set(probe ${fnp_fuzz_work}/probe.c)
    file(WRITE ${probe} "#include <stddef.h>\n#include <stdint.h>\n"
         "int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { return d && n == 7; }\n")
    execute_process(COMMAND ${FNP_CLANG} -fsanitize=fuzzer,address,undefined ${probe}
                            -o ${fnp_fuzz_work}/probe
                    RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
    if(rc EQUAL 0)
        set(FNP_CLANG_FUZZER_WORKS ON CACHE INTERNAL "clang links -fsanitize=fuzzer")
    else()
        set(FNP_CLANG_FUZZER_WORKS OFF CACHE INTERNAL "clang links -fsanitize=fuzzer")
    endif()
endif()

if(CMAKE_C_COMPILER_ID STREQUAL "Clang" AND NOT FNPROF_CLANG_CHECKS)
    set(fnp_fuzz_mode here)
elseif(FNPROF_CLANG_CHECKS AND FNP_CLANG AND FNP_CLANG_FUZZER_WORKS)
    set(fnp_fuzz_mode external)
    set(fnp_clang_dir ${PROJECT_BINARY_DIR}/clang-checks)
else()
    set(fnp_fuzz_mode none)
    message(STATUS "fuzz and sanitize tests: skipped (they need clang with its runtimes, "
                   "libclang-rt-dev, and FNPROF_CLANG_CHECKS=ON)")
endif()

if(fnp_fuzz_mode STREQUAL "here")
    # The reader, the model and the views compiled once more, instrumented for the fuzzer,
    # from the very source lists of their targets; fnp_profile's objects are not.
    set(fnp_fuzz_sources)
    foreach(target fnp_profile fnp_profile_read fnp_views)
        get_target_property(dir ${target} SOURCE_DIR)
        get_target_property(srcs ${target} SOURCES)
        list(TRANSFORM srcs PREPEND ${dir}/ REGEX "^[^/]")
        list(APPEND fnp_fuzz_sources ${srcs})
    endforeach()
    # The Perfetto trace's reader is the command's own (fuzz_pftrace): one file, on its own.
    list(APPEND fnp_fuzz_sources ${PROJECT_SOURCE_DIR}/toolchain/pftrace-chrome.c)
    get_target_property(fnp_fuzz_views_bin fnp_views BINARY_DIR)
    add_library(fnp_fuzz_lib STATIC ${fnp_fuzz_sources})
    set_target_properties(fnp_fuzz_lib PROPERTIES C_STANDARD 11)
    target_include_directories(fnp_fuzz_lib PUBLIC ${PROJECT_SOURCE_DIR}/profile
                               ${PROJECT_SOURCE_DIR}/views ${PROJECT_SOURCE_DIR}/symbolizer
                               ${PROJECT_SOURCE_DIR}/toolchain
                               PRIVATE ${fnp_fuzz_views_bin} ${fnp_fuzz_views_bin}/pprof)
    target_compile_definitions(fnp_fuzz_lib PUBLIC _GNU_SOURCE)
    set(fnp_fuzz_flags -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined
                       -fno-sanitize-recover=undefined)
    target_compile_options(fnp_fuzz_lib PUBLIC -Wall -Wextra -Wshadow ${fnp_fuzz_flags}
                           PRIVATE -fsanitize=fuzzer-no-link)
    target_link_libraries(fnp_fuzz_lib PUBLIC PkgConfig::PROTOBUF_C ZLIB::ZLIB m)
    add_dependencies(fnp_fuzz_lib fnp_views) # its generated sources
endif()

# fnp_fuzz_target(<name> <max_len> [libFuzzer arguments...] [SEEDS_FROM dirs...]
#                 [TREE_SEEDS dir]): tests/<name>.c run as the test fuzz.<name minus fuzz_>.
# SEEDS_FROM: directories whose *.prof and *.raw files (made by fixtures) are copied in as
# seeds at test time; TREE_SEEDS: tree bodies made whole files (tests/fuzz/run_fuzz.py).
function(fnp_fuzz_target name max_len)
    cmake_parse_arguments(PARSE_ARGV 2 arg "" "TREE_SEEDS" "SEEDS_FROM")
    string(REPLACE "fuzz_" "fuzz." test ${name})
    set(run Python3::Interpreter -B ${fnp_fuzz_run} --name ${name} --workdir ${fnp_fuzz_work})
    foreach(dir ${arg_SEEDS_FROM})
        list(APPEND run --seeds-from ${dir})
    endforeach()
    if(arg_TREE_SEEDS)
        list(APPEND run --tree-seeds ${arg_TREE_SEEDS})
    endif()
    set(fuzz_args -max_total_time=${FNP_FUZZ_SECONDS} -timeout=10 -rss_limit_mb=2048
                  -max_len=${max_len} ${arg_UNPARSED_ARGUMENTS})
    if(fnp_fuzz_mode STREQUAL "here")
        add_executable(${name} ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/${name}.c)
        set_target_properties(${name} PROPERTIES C_STANDARD 11)
        target_link_libraries(${name} PRIVATE fnp_fuzz_lib)
        target_link_options(${name} PRIVATE -fsanitize=fuzzer,address,undefined)
        set_property(GLOBAL APPEND PROPERTY fnp_fuzz_targets ${name})
        list(APPEND run --fuzzer $<TARGET_FILE:${name}>)
    elseif(fnp_fuzz_mode STREQUAL "external")
        list(APPEND run --fuzzer ${fnp_clang_dir}/${CMAKE_INSTALL_BINDIR}/${name})
    else()
        list(APPEND run --skip "needs clang with libFuzzer (libclang-rt-dev), FNPROF_CLANG_CHECKS=ON")
    endif()
    add_test(NAME ${test} COMMAND ${run} -- ${fuzz_args})
    # The timeout bounds a hang of the harness itself; libFuzzer stops on its own.
    math(EXPR limit "${FNP_FUZZ_SECONDS} * 3 + 60")
    set_tests_properties(${test} PROPERTIES LABELS fuzz TIMEOUT ${limit} SKIP_RETURN_CODE 77)
endfunction()

# The pstats reader starts from the files CPython writes; the raw reader from its own
# sample; the tree's reader and the views from tree bodies.
fnp_fuzz_target(fuzz_pstats_read 65536 -dict=${CMAKE_CURRENT_LIST_DIR}/data/pstats.dict
                ${FNP_PSTATS_DATA}/prof)
set_tests_properties(fuzz.pstats_read PROPERTIES FIXTURES_REQUIRED pstats_data)
fnp_fuzz_target(fuzz_raw_read 8192)
fnp_fuzz_target(fuzz_tree_read 8192 ${CMAKE_CURRENT_LIST_DIR}/data/tree_seeds)
fnp_fuzz_target(fuzz_views 8192 ${CMAKE_CURRENT_LIST_DIR}/data/tree_seeds)
# Any file through everything the command does with it: real profiles of fnprof (timed,
# count-only) and CPython from the fixtures, and the cases in data/pipeline_seeds.
fnp_fuzz_target(fuzz_pipeline 16384 -dict=${CMAKE_CURRENT_LIST_DIR}/data/pstats.dict
                ${CMAKE_CURRENT_LIST_DIR}/data/pipeline_seeds
                SEEDS_FROM ${CMAKE_CURRENT_BINARY_DIR}/views ${CMAKE_CURRENT_BINARY_DIR}/diff
                ${FNP_PSTATS_DATA}/prof TREE_SEEDS ${CMAKE_CURRENT_LIST_DIR}/data/tree_seeds)
set_tests_properties(fuzz.pipeline PROPERTIES FIXTURES_REQUIRED
                     "views_profiles;diff_profiles;pstats_data")
# The Perfetto trace's reader (convert --to chrome-trace) from real streamed traces and its
# regression inputs; no single allocation may be far past what the input holds.
fnp_fuzz_target(fuzz_pftrace 16384 -malloc_limit_mb=256
                ${CMAKE_CURRENT_LIST_DIR}/data/pftrace_seeds)

# After every file of tests/ has added its targets: what the clang build makes (here), or
# the clang build itself and the test that runs its unit tests (external).
function(fnp_clang_checks_finish)
    if(fnp_fuzz_mode STREQUAL "here")
        get_property(fuzzers GLOBAL PROPERTY fnp_fuzz_targets)
        get_directory_property(targets BUILDSYSTEM_TARGETS)
        list(FILTER targets INCLUDE REGEX "^check_")
        add_custom_target(fnp_clang_checks)
        add_dependencies(fnp_clang_checks ${fuzzers} ${targets})
    elseif(fnp_fuzz_mode STREQUAL "external")
        include(ExternalProject)
        # Under make, the inner make shares the outer one's jobs (-j); else as many as cores.
        if(CMAKE_GENERATOR MATCHES "Makefiles")
            set(build $(MAKE) fnp_clang_checks)
        else()
            cmake_host_system_information(RESULT jobs QUERY NUMBER_OF_LOGICAL_CORES)
            set(build ${CMAKE_COMMAND} --build <BINARY_DIR> --target fnp_clang_checks
                      --parallel ${jobs})
        endif()
        ExternalProject_Add(fnp_clang_build
            SOURCE_DIR ${PROJECT_SOURCE_DIR}
            BINARY_DIR ${fnp_clang_dir}
            PREFIX ${PROJECT_BINARY_DIR}/clang-checks-ep
            CMAKE_ARGS -DCMAKE_C_COMPILER=${FNP_CLANG} -DCMAKE_BUILD_TYPE=RelWithDebInfo
                       -DFNPROF_SANITIZE=address,undefined -DFNPROF_CLANG_CHECKS=OFF
                       -DFNPROF_BUILD_EXAMPLES=OFF -DFNP_FUZZ_SECONDS=${FNP_FUZZ_SECONDS}
            BUILD_COMMAND ${build}
            BUILD_ALWAYS ON
            INSTALL_COMMAND ""
            # Its output goes to clang-checks-ep/src/fnp_clang_build-stamp/*.log, shown when
            # a step fails: the linker's notes on the sanitizer runtime's tmpnam stay there.
            LOG_CONFIGURE ON
            LOG_BUILD ON
            LOG_OUTPUT_ON_FAILURE ON)
        # Every unit test of the clang build (compensate.unit too), under ASan and UBSan: any
        # report fails it.
        # One ctest of two jobs, accounted as two processors: the pstats reader's and the
        # symbolizer's take about a minute each under the sanitizers.
        add_test(NAME sanitize.unit
                 COMMAND ${CMAKE_CTEST_COMMAND} --test-dir ${fnp_clang_dir}
                         -R "^(unit\\.check_|compensate\\.unit$)"
                         --output-on-failure -j2)
        set_tests_properties(sanitize.unit PROPERTIES LABELS sanitize TIMEOUT 900 PROCESSORS 2
                             ENVIRONMENT "UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1")
    endif()
endfunction()
cmake_language(DEFER CALL fnp_clang_checks_finish)
# SPDX-License-Identifier: MIT
