# What PROF_OUTPUT, PROF_QUIET and an unwritable path do, end to end.
add_executable(fnp_exit_deep env/exit_deep.c)
target_compile_options(fnp_exit_deep PRIVATE -g -O2 -finstrument-functions)
add_test(NAME e2e.env.prof_output
         COMMAND Python3::Interpreter ${CMAKE_CURRENT_SOURCE_DIR}/env/run_env_test.py
                 --prog $<TARGET_FILE:fnp_exit_deep> --lib $<TARGET_FILE:fnprof_shared>)
set_tests_properties(e2e.env.prof_output PROPERTIES LABELS e2e)
