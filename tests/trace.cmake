# The Chrome trace (PROF_TRACE): the writer's unit test, the independent checker's own test,
# and the checker run on files the writer made. include()d from tests/CMakeLists.txt.
if(NOT TARGET PkgConfig::CHECK)
    pkg_check_modules(CHECK REQUIRED IMPORTED_TARGET check)
endif()
find_package(Python3 REQUIRED COMPONENTS Interpreter)

add_executable(check_trace ${CMAKE_CURRENT_LIST_DIR}/check_trace.c)
set_target_properties(check_trace PROPERTIES C_STANDARD 11)
target_link_libraries(check_trace PRIVATE fnp_profile PkgConfig::CHECK fnp_flags m)
add_test(NAME unit.check_trace COMMAND check_trace)
set_tests_properties(unit.check_trace PROPERTIES LABELS unit)

# The checker must accept good traces and reject each planted fault: a checker that passes
# everything would pass the end-to-end tests too.
add_test(NAME unit.check_trace_py_selftest
         COMMAND Python3::Interpreter -B ${CMAKE_CURRENT_LIST_DIR}/trace/check_trace.py --selftest)
set_tests_properties(unit.check_trace_py_selftest PROPERTIES LABELS unit)

# The writer's files (one trace complete, one cut short by the event limit) with their
# profiles, read by the checker: JSON, nesting, thread names, one event per call.
set(fnp_trace_work ${CMAKE_CURRENT_BINARY_DIR}/trace)
add_test(NAME unit.check_trace_files
         COMMAND sh -c "mkdir -p \"$2\" && \"$0\" --write \"$2\" \
&& \"$1\" -B \"$3\" \"$2/full.json\" \"$2/full.prof\" \
&& \"$1\" -B \"$3\" \"$2/dropped.json\" \"$2/dropped.prof\""
                 $<TARGET_FILE:check_trace> ${Python3_EXECUTABLE} ${fnp_trace_work}
                 ${CMAKE_CURRENT_LIST_DIR}/trace/check_trace.py)
set_tests_properties(unit.check_trace_files PROPERTIES LABELS unit)

# The streamed Perfetto trace (PROF_TRACE=*.pftrace): the independent reader's own test,
# then programs traced and decoded by it (tests/trace/run_stream.py).
add_test(NAME trace.perfetto.reader_selftest
         COMMAND Python3::Interpreter -B ${CMAKE_CURRENT_LIST_DIR}/trace/read_pftrace.py
                 --selftest)
set_tests_properties(trace.perfetto.reader_selftest PROPERTIES LABELS "trace;unit")
# One case of a runner script (run_<kind>.py), its files under trace_<kind>/<name>.
function(fnp_trace_case kind name case)
    add_test(NAME ${name}
             COMMAND Python3::Interpreter -B ${CMAKE_CURRENT_LIST_DIR}/trace/run_${kind}.py
                     --case ${case} --lib-dir $<TARGET_FILE_DIR:fnprof_shared>
                     --workdir ${CMAKE_CURRENT_BINARY_DIR}/trace_${kind}/${name} ${ARGN})
    set_tests_properties(${name} PROPERTIES LABELS "trace;e2e" TIMEOUT 600
                         SKIP_RETURN_CODE 77)
endfunction()
fnp_trace_case(stream trace.perfetto.nesting nesting)
fnp_trace_case(stream trace.stream.long long)
fnp_trace_case(stream trace.stream.fork fork)
fnp_trace_case(stream trace.stream.sigsegv segv)
fnp_trace_case(stream trace.stream.sigabrt abort)
fnp_trace_case(stream trace.stream.full_disk full_disk)
fnp_trace_case(stream trace.stream.short_threads short_threads --calls 5000)
fnp_trace_case(stream trace.stream.exec exec)
fnp_trace_case(stream trace.stream.busy_exec busyexec)
fnp_trace_case(stream trace.stream.busy_exit busy)
fnp_trace_case(stream trace.stream.signal_handler signal)
fnp_trace_case(stream trace.stream.deep deep)
fnp_trace_case(stream trace.regions regions)
fnp_trace_case(stream trace.stream.exit_race exit_race)
fnp_trace_case(stream trace.stream.crash_in_malloc crash_in_malloc)
fnp_trace_case(stream trace.convert.chrome convert --fnprof $<TARGET_FILE:fnprof>)
# The issue's sizes: 100 M calls, 100k short threads (minutes: label slow).
fnp_trace_case(stream trace.stream.long_100m long --calls 100000000)
fnp_trace_case(stream trace.stream.short_threads_100k short_threads --calls 100000)
set_tests_properties(trace.stream.long_100m trace.stream.short_threads_100k
                     PROPERTIES LABELS "trace;e2e;slow")

# The flight recorder's fatal path on a fake clock: the last N calls, each record read twice at
# most. --wrap: the test counts the records the ring reads and keeps what it writes.
add_executable(check_ring ${CMAKE_CURRENT_LIST_DIR}/check_ring.c)
set_target_properties(check_ring PROPERTIES C_STANDARD 11)
target_include_directories(check_ring PRIVATE ${PROJECT_SOURCE_DIR}/runtime
                           ${PROJECT_SOURCE_DIR}/profile)
target_link_libraries(check_ring PRIVATE fnprof_static PkgConfig::CHECK fnp_flags)
target_link_options(check_ring PRIVATE -Wl,--wrap=fnp_trace_unpack -Wl,--wrap=fnp_raw_put
                    -Wl,--wrap=fnp_raw_put_u64)
add_test(NAME trace.ring.unit COMMAND check_ring)
set_tests_properties(trace.ring.unit PROPERTIES LABELS "trace;unit")

# The flight recorder (PROF_TRACE_LAST): the last N calls of a known sequence, written at
# exit, after SIGSEGV and abort(), on PROF_DUMP_SIGNAL and from fnprof_dump(); and memory
# bounded by N over 20 M calls (tests/trace/run_ring.py).
fnp_trace_case(ring trace.ring.exit exit)
fnp_trace_case(ring trace.ring.sigsegv segv)
fnp_trace_case(ring trace.ring.sigabrt abort)
fnp_trace_case(ring trace.ring.dump_signal signal)
fnp_trace_case(ring trace.ring.fnprof_dump api)
fnp_trace_case(ring trace.ring.memory memory)
fnp_trace_case(ring trace.ring.settings settings)
fnp_trace_case(ring trace.ring.many_threads many)
# The same endings written as Perfetto files, read by the independent reader.
fnp_trace_case(ring trace.ring.pftrace.exit exit --format pftrace)
fnp_trace_case(ring trace.ring.pftrace.sigsegv segv --format pftrace)
fnp_trace_case(ring trace.ring.pftrace.sigabrt abort --format pftrace)
fnp_trace_case(ring trace.ring.pftrace.dump_signal signal --format pftrace)
fnp_trace_case(ring trace.ring.pftrace.fnprof_dump api --format pftrace)
# SPDX-License-Identifier: MIT
