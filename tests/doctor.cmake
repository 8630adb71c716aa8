# fnprof doctor (what a program's profile will see) and fnprof run's statuses and
# per-process files, end to end; include()d from tests/CMakeLists.txt. The programs are
# built at test time (tests/doctor/check_doctor.py) with this build's C compiler, each the
# way its case needs: linked with -lfnprof or not, with shared libraries, static, with its
# DWARF in a separate file (objcopy).
find_package(Python3 REQUIRED COMPONENTS Interpreter)

# app.c with libfnprof.a linked in: the executable defines the hooks itself.
add_executable(fnp_doctor_static_rt doctor/app.c)
target_compile_options(fnp_doctor_static_rt PRIVATE -g -O0 -finstrument-functions)
target_link_libraries(fnp_doctor_static_rt PRIVATE fnprof_static)

# fnp_doctor_test(NAME CASE): ctest e2e.NAME runs check_doctor.py's CASE.
function(fnp_doctor_test name case)
    add_test(NAME e2e.${name}
             COMMAND Python3::Interpreter ${CMAKE_CURRENT_SOURCE_DIR}/doctor/check_doctor.py
                     --fnprof $<TARGET_FILE:fnprof> --cc ${CMAKE_C_COMPILER}
                     --libdir $<TARGET_FILE_DIR:fnprof_shared>
                     --src ${CMAKE_CURRENT_SOURCE_DIR}/doctor
                     --work ${CMAKE_CURRENT_BINARY_DIR}/doctor-work
                     --static-rt $<TARGET_FILE:fnp_doctor_static_rt> ${case})
    set_tests_properties(e2e.${name} PROPERTIES LABELS e2e SKIP_RETURN_CODE 77)
endfunction()

fnp_doctor_test(doctor.linked_binds_to_libfnprof linked)
fnp_doctor_test(doctor.unlinked_binds_to_glibc_noops_exits_1 not_linked)
fnp_doctor_test(doctor.uninstrumented_exits_1 uninstrumented)
fnp_doctor_test(doctor.lists_libraries_instrumented_or_not libraries)
fnp_doctor_test(doctor.finds_separate_debug_file debuglink)
fnp_doctor_test(doctor.not_elf_or_missing_exits_2 not_elf)
fnp_doctor_test(doctor.static_program static)
fnp_doctor_test(doctor.counts_functions_not_call_sites counts)
fnp_doctor_test(doctor.bare_name_path_then_current_directory current_directory)
fnp_doctor_test(doctor.non_pie_and_libfnprof_a non_pie_and_static_runtime)
fnp_doctor_test(run.missing_127_not_executable_126 run_status)
fnp_doctor_test(run.wrapper_running_twice_merges_one_profile run_wrapper_two_processes)
fnp_doctor_test(run.wrapper_exec_and_single_child_profile_at_path run_wrapper_exec)
# SPDX-License-Identifier: MIT
