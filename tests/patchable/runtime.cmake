# The patchable build's runtime (runtime/patch*.c): tests/patchable/run_runtime.py, one case
# per test, each on programs of tests/patchable/progs/rt_*.c built here with fnprof-cc
# --patchable (gcc: fnprof-as; clang: XRay sleds, clang 14 or later). Included from
# tests/CMakeLists.txt; label patchable, ctest names patchable.runtime.<case>.<cc>.
set(fnp_rt_src ${CMAKE_CURRENT_LIST_DIR}/progs)
set(fnp_rt_bin ${CMAKE_CURRENT_BINARY_DIR}/patchable-rt)
set(fnp_rt_outputs)

if(NOT CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
    return() # patchable builds are x86_64's only
endif()

set(fnp_rt_compilers gcc)
find_program(FNP_RT_CLANG clang)
if(FNP_RT_CLANG)
    list(APPEND fnp_rt_compilers clang)
endif()

# fnp_rt_build(<output> <wrapper target> <compiler> <source> [flags...])
function(fnp_rt_build out wrapper compiler src)
    if(wrapper STREQUAL "fnprof_wrapper_cxx")
        set(env FNPROF_CXX=${compiler})
    else()
        set(env FNPROF_CC=${compiler})
    endif()
    add_custom_command(OUTPUT ${out}
                       COMMAND ${CMAKE_COMMAND} -E env ${env} $<TARGET_FILE:${wrapper}> --patchable
                               -O2 -g -I${PROJECT_SOURCE_DIR}/include ${ARGN} ${src} -o ${out}
                       DEPENDS ${src} ${fnp_rt_src}/rt_common.h ${wrapper} fnprof_patch_as
                               fnprof_shared
                       COMMENT "patchable runtime test program ${out}" VERBATIM)
    set(fnp_rt_outputs ${fnp_rt_outputs} ${out} PARENT_SCOPE)
endfunction()

foreach(cc ${fnp_rt_compilers})
    if(cc STREQUAL "gcc")
        set(cxx g++)
    else()
        set(cxx clang++)
    endif()
    foreach(p rt_calls rt_signals rt_storm rt_fork rt_dlopen rt_dirty rt_longjmp rt_pausehot)
        fnp_rt_build(${fnp_rt_bin}/${p}.${cc} fnprof_wrapper_cc ${cc} ${fnp_rt_src}/${p}.c -pthread)
    endforeach()
    # every function starting with endbr64 (the site after it: fn = site - 4)
    fnp_rt_build(${fnp_rt_bin}/rt_calls_cet.${cc} fnprof_wrapper_cc ${cc} ${fnp_rt_src}/rt_calls.c
                 -pthread -fcf-protection=full)
    foreach(p rt_except rt_toggle)
        fnp_rt_build(${fnp_rt_bin}/${p}.${cc} fnprof_wrapper_cxx ${cxx} ${fnp_rt_src}/${p}.cc)
    endforeach()
    fnp_rt_build(${fnp_rt_bin}/rt_plugin.${cc}.so fnprof_wrapper_cc ${cc} ${fnp_rt_src}/rt_plugin.c
                 -fPIC -shared)
endforeach()
# The seccomp launcher (refused): a plain program.
add_executable(fnp_rt_seccomp ${fnp_rt_src}/rt_seccomp.c)
set_target_properties(fnp_rt_seccomp PROPERTIES OUTPUT_NAME rt_seccomp
                      RUNTIME_OUTPUT_DIRECTORY ${fnp_rt_bin})
add_custom_target(fnp_rt_programs ALL DEPENDS ${fnp_rt_outputs})

foreach(cc ${fnp_rt_compilers})
    foreach(case calls calls_cet except longjmp signals storm toggle fork dlopen dlstorm
                 pausehot refused off)
        set(name patchable.runtime.${case}.${cc})
        add_test(NAME ${name}
                 COMMAND Python3::Interpreter -B ${CMAKE_CURRENT_LIST_DIR}/run_runtime.py
                         --progs ${fnp_rt_bin} --cc ${cc}
                         --work ${CMAKE_CURRENT_BINARY_DIR}/patchable-rt-work/${case}.${cc} ${case})
        set_tests_properties(${name} PROPERTIES LABELS patchable TIMEOUT 600
                             SKIP_RETURN_CODE 77)
    endforeach()
endforeach()
# SPDX-License-Identifier: MIT
