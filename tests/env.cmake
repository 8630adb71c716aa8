# What PROF_OUTPUT, PROF_QUIET and an unwritable path do, end to end.
add_executable(fnp_exit_deep env/exit_deep.c)
target_compile_options(fnp_exit_deep PRIVATE -g -O2 -finstrument-functions)
# The same, linked with libfnprof.so by absolute rpath: a setuid program loads no
# LD_PRELOAD from outside the system paths, but it does load its own libraries.
add_executable(fnp_exit_deep_linked env/exit_deep.c)
target_compile_options(fnp_exit_deep_linked PRIVATE -g -O2 -finstrument-functions)
target_link_libraries(fnp_exit_deep_linked PRIVATE fnprof_shared)
set_target_properties(fnp_exit_deep_linked PROPERTIES BUILD_RPATH $<TARGET_FILE_DIR:fnprof_shared>)
add_test(NAME e2e.env.prof_output
         COMMAND Python3::Interpreter ${CMAKE_CURRENT_SOURCE_DIR}/env/run_env_test.py
                 --prog $<TARGET_FILE:fnp_exit_deep> --lib $<TARGET_FILE:fnprof_shared>
                 --linked $<TARGET_FILE:fnp_exit_deep_linked>)
set_tests_properties(e2e.env.prof_output PROPERTIES LABELS e2e SKIP_RETURN_CODE 77)

# The hooks the loader picks (ifunc): glibc's no-op pair when nothing will be recorded.
if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
    add_executable(fnp_hooks_pick env/hooks_pick.c)
    target_link_libraries(fnp_hooks_pick PRIVATE fnprof_shared)
    set_target_properties(fnp_hooks_pick PROPERTIES BUILD_RPATH $<TARGET_FILE_DIR:fnprof_shared>)
    add_executable(fnp_hooks_pick_static env/hooks_pick.c)
    target_link_libraries(fnp_hooks_pick_static PRIVATE fnprof_static)
    add_test(NAME e2e.env.hooks_pick
             COMMAND Python3::Interpreter ${CMAKE_CURRENT_SOURCE_DIR}/env/run_pick_test.py
                     $<TARGET_FILE:fnp_hooks_pick> $<TARGET_FILE:fnp_hooks_pick_static>)
    set_tests_properties(e2e.env.hooks_pick PROPERTIES LABELS e2e)
endif()
# SPDX-License-Identifier: MIT
