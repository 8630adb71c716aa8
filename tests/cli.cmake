# The fnprof command: report and merge against CPython's pstats on files CPython wrote,
# run's environment, and the exit codes and one-line errors of docs/conventions.md (0 ok, 1 failure,
# 2 usage). include()d from tests/CMakeLists.txt.
find_package(Python3 REQUIRED COMPONENTS Interpreter)
include(${CMAKE_CURRENT_LIST_DIR}/data/pstats_data.cmake)

set(fnp_cli_check ${CMAKE_CURRENT_LIST_DIR}/data/cli_check.py)

# report: byte for byte what pstats.Stats(f).sort_stats(...).print_stats(N)... prints.
function(fnp_cli_report name)
    add_test(NAME cli.${name}
             COMMAND Python3::Interpreter ${fnp_cli_check} report $<TARGET_FILE:fnprof>
                     ${FNP_PSTATS_DATA} ${ARGN})
    set_tests_properties(cli.${name} PROPERTIES LABELS unit FIXTURES_REQUIRED pstats_data)
endfunction()

fnp_cli_report(report_matches_pstats_by_cumtime)
fnp_cli_report(report_matches_pstats_by_tottime --sort tottime)
fnp_cli_report(report_matches_pstats_by_ncalls --sort ncalls)
fnp_cli_report(report_matches_pstats_by_pcalls --sort pcalls)
fnp_cli_report(report_matches_pstats_by_name --sort name)
fnp_cli_report(report_matches_pstats_by_file --sort file)
fnp_cli_report(report_matches_pstats_by_several_keys --sort nfl --sort stdname --sort line)
fnp_cli_report(report_matches_pstats_with_limit --sort tottime --limit 3)
fnp_cli_report(report_matches_pstats_without_limit --limit 0)
fnp_cli_report(report_matches_pstats_callers_callees --callers --callees --limit 4)
# --unit: pstats' text with every time rebuilt from the dict in the unit; s is pstats' own.
fnp_cli_report(report_unit_s_is_pstats --unit s --callers --limit 4)
fnp_cli_report(report_unit_ms_converts_every_time --unit ms --callers --callees --limit 4)
fnp_cli_report(report_unit_us_converts_every_time -u us --sort tottime --limit 0)
fnp_cli_report(report_unit_ns_converts_every_time --unit ns --callers --callees --limit 0)
add_test(NAME cli.report_unit_leaves_count_only_calls_alone
         COMMAND Python3::Interpreter ${fnp_cli_check} report-count-only $<TARGET_FILE:fnprof>)
set_tests_properties(cli.report_unit_leaves_count_only_calls_alone PROPERTIES LABELS unit)
# Metadata (a trailer fnptree.py writes): first, then pstats' text; --no-meta leaves it out.
fnp_cli_report(report_prints_metadata_before_pstats --with-meta --callers --limit 4)
fnp_cli_report(report_no_meta_is_pstats --with-meta --no-meta --callees --limit 4)
fnp_cli_report(report_metadata_with_unit --with-meta --unit ms --limit 3)

add_test(NAME cli.merge_matches_pstats_add
         COMMAND Python3::Interpreter ${fnp_cli_check} merge $<TARGET_FILE:fnprof>
                 ${FNP_PSTATS_DATA})
set_tests_properties(cli.merge_matches_pstats_add PROPERTIES LABELS unit
                     FIXTURES_REQUIRED pstats_data)
add_test(NAME cli.merge_keeps_first_metadata_and_counts_runs
         COMMAND Python3::Interpreter ${fnp_cli_check} merge-meta $<TARGET_FILE:fnprof>
                 ${FNP_PSTATS_DATA})
set_tests_properties(cli.merge_keeps_first_metadata_and_counts_runs PROPERTIES LABELS unit
                     FIXTURES_REQUIRED pstats_data)

# fnp_cli_expect(name STATUS [STDERR regex] [STDOUT regex] ARGS fnprof-args...)
function(fnp_cli_expect name status)
    cmake_parse_arguments(PARSE_ARGV 2 arg "" "STDERR;STDOUT" "ARGS")
    set(checks)
    if(DEFINED arg_STDERR)
        list(APPEND checks --stderr ${arg_STDERR})
    endif()
    if(DEFINED arg_STDOUT)
        list(APPEND checks --stdout ${arg_STDOUT})
    endif()
    add_test(NAME cli.${name}
             COMMAND Python3::Interpreter ${fnp_cli_check} expect ${status} ${checks} --
                     $<TARGET_FILE:fnprof> ${arg_ARGS})
    set_tests_properties(cli.${name} PROPERTIES LABELS unit FIXTURES_REQUIRED pstats_data)
endfunction()

set(fnp_cli_prof ${FNP_PSTATS_DATA}/prof/py${Python3_VERSION_MAJOR}.${Python3_VERSION_MINOR}-cprofile.prof)
set(fnp_cli_out ${CMAKE_CURRENT_BINARY_DIR}/cli_merged.prof)
set(fnp_usage "\\(see 'fnprof( [a-z]+)? --help'\\)$")

fnp_cli_expect(version_is_the_project_version 0 STDOUT "^fnprof ${PROJECT_VERSION}$"
               ARGS --version)
fnp_cli_expect(help_exits_0 0 STDOUT "^usage: fnprof" ARGS --help)
fnp_cli_expect(report_help_exits_0 0 STDOUT "^usage: fnprof report" ARGS report --help)
fnp_cli_expect(run_help_exits_0 0 STDOUT "^usage: fnprof run" ARGS run --help)
fnp_cli_expect(merge_help_exits_0 0 STDOUT "^usage: fnprof merge" ARGS merge --help)
fnp_cli_expect(convert_help_exits_0 0 STDOUT "^usage: fnprof convert" ARGS convert --help)

fnp_cli_expect(usage_no_command_exits_2 2)
fnp_cli_expect(usage_unknown_command_exits_2 2 STDERR "^fnprof: unknown command 'frob' ${fnp_usage}"
               ARGS frob)
fnp_cli_expect(usage_report_without_file_exits_2 2 STDERR "^fnprof: report: no profile given ${fnp_usage}"
               ARGS report)
fnp_cli_expect(usage_report_unknown_sort_key_exits_2 2
               STDERR "^fnprof: report: unknown sort key 'speed' ${fnp_usage}"
               ARGS report --sort speed ${fnp_cli_prof})
fnp_cli_expect(usage_report_bad_limit_exits_2 2 STDERR "^fnprof: report: --limit wants a count"
               ARGS report --limit -3 ${fnp_cli_prof})
fnp_cli_expect(usage_report_bad_unit_exits_2 2
               STDERR "^fnprof: report: --unit wants s, ms, us or ns, not 'sec' ${fnp_usage}"
               ARGS report --unit sec ${fnp_cli_prof})
fnp_cli_expect(usage_report_unknown_option_exits_2 2
               STDERR "^fnprof: report: unknown option '--frob' ${fnp_usage}"
               ARGS report --frob ${fnp_cli_prof})
fnp_cli_expect(usage_run_without_program_exits_2 2 STDERR "^fnprof: run: no program given"
               ARGS run -o x.prof)
fnp_cli_expect(usage_merge_without_output_exits_2 2 STDERR "^fnprof: merge: no output file"
               ARGS merge ${fnp_cli_prof})
fnp_cli_expect(usage_merge_without_input_exits_2 2 STDERR "^fnprof: merge: no input profile"
               ARGS merge -o ${fnp_cli_out})
# --compensate is a profile's: for a trace it is refused before the file is even opened.
fnp_cli_expect(usage_convert_trace_compensate_exits_2 2
               STDERR "^fnprof: convert: --compensate applies to profiles, not to a trace \\(none.pftrace\\) ${fnp_usage}"
               ARGS convert none.pftrace --to chrome-trace --compensate)
# so is every view option: a trace converts as it is
fnp_cli_expect(usage_convert_trace_max_depth_exits_2 2
               STDERR "^fnprof: convert: --max-depth applies to profiles, not to a trace \\(none.pftrace\\) ${fnp_usage}"
               ARGS convert none.pftrace --to chrome-trace --max-depth 3)
fnp_cli_expect(usage_convert_trace_short_names_exits_2 2
               STDERR "^fnprof: convert: --no-short-names applies to profiles, not to a trace \\(none.pftrace\\) ${fnp_usage}"
               ARGS convert none.pftrace --to chrome-trace --no-short-names)

fnp_cli_expect(report_missing_file_exits_1 1
               STDERR "^fnprof: report: /nonexistent/x\\.prof: No such file or directory$"
               ARGS report /nonexistent/x.prof)
fnp_cli_expect(report_directory_exits_1 1
               STDERR "^fnprof: report: ${FNP_PSTATS_DATA}: Is a directory$"
               ARGS report ${FNP_PSTATS_DATA})
fnp_cli_expect(report_malformed_file_names_the_reason 1
               STDERR "^fnprof: report: .*pstats\\.dict: not a valid pstats file: offset 0: unknown type code '#'$"
               ARGS report ${CMAKE_CURRENT_LIST_DIR}/data/pstats.dict)
fnp_cli_expect(report_empty_file_names_the_reason 1
               STDERR "^fnprof: report: /dev/null: not a valid pstats file: offset 0: unexpected end of data"
               ARGS report /dev/null)
fnp_cli_expect(merge_missing_input_exits_1 1
               STDERR "^fnprof: merge: /nonexistent/x\\.prof: No such file or directory$"
               ARGS merge -o ${fnp_cli_out} ${fnp_cli_prof} /nonexistent/x.prof)
fnp_cli_expect(merge_unwritable_output_exits_1 1
               STDERR "^fnprof: merge: /nonexistent/out\\.prof: No such file or directory$"
               ARGS merge -o /nonexistent/out.prof ${fnp_cli_prof})
fnp_cli_expect(run_missing_program_exits_127 127
               STDERR "^fnprof: run: /nonexistent/prog: No such file or directory$"
               ARGS run -- /nonexistent/prog)
# A bare name is searched in PATH only (as a shell does); one that the current directory
# holds gets a line that says how to run it, and the same 127.
add_test(NAME cli.run_bare_name_in_current_directory_says_how
         COMMAND sh -c "cd \"$1\" && err=$(PATH=/nonexistent ./fnprof run -o /dev/null -- fnprof 2>&1); \
s=$?; echo \"$err\"; [ $s -eq 127 ] && echo \"$err\" | \
grep -qx 'fnprof: run: fnprof: not found in PATH (the current directory is not searched): run ./fnprof'"
                 sh $<TARGET_FILE_DIR:fnprof>)
set_tests_properties(cli.run_bare_name_in_current_directory_says_how PROPERTIES LABELS unit)

add_test(NAME cli.run_without_library_says_so
         COMMAND Python3::Interpreter ${fnp_cli_check} run-without-library $<TARGET_FILE:fnprof>)
set_tests_properties(cli.run_without_library_says_so PROPERTIES LABELS unit)
if(TARGET fnprof_shared)
    add_test(NAME cli.run_sets_environment_and_keeps_exit_status
             COMMAND Python3::Interpreter ${fnp_cli_check} run $<TARGET_FILE:fnprof>
                     $<TARGET_FILE_DIR:fnprof_shared>/libfnprof.so)
    set_tests_properties(cli.run_sets_environment_and_keeps_exit_status PROPERTIES LABELS unit)
endif()
# SPDX-License-Identifier: MIT
