# The patchable build mode (docs/patchable.md): tests/patchable/check_patchable.py, one case
# per test, gcc and clang. Included from tests/CMakeLists.txt; label patchable. The pkg-config
# and CMake front doors use the installed tree of tests/install.cmake (fixture fnp_installed).
set(fnp_patchable_dir ${CMAKE_CURRENT_LIST_DIR}/patchable)
set(fnp_patchable_work ${CMAKE_CURRENT_BINARY_DIR}/patchable)

function(fnp_patchable_case case cc)
    set(name patchable.build.${case}.${cc})
    add_test(NAME ${name}
             COMMAND Python3::Interpreter -B ${fnp_patchable_dir}/check_patchable.py
                     --bin $<TARGET_FILE_DIR:fnprof_wrapper_cc>
                     --patchdir $<TARGET_FILE_DIR:fnprof_patch_as> --cc ${cc}
                     --work ${fnp_patchable_work}/${case}.${cc}
                     --prefix ${CMAKE_CURRENT_BINARY_DIR}/install/prefix ${case})
    set_tests_properties(${name} PROPERTIES LABELS patchable TIMEOUT 600 SKIP_RETURN_CODE 77)
    if(case MATCHES "^(pkgconfig|cmake)$")
        set_tests_properties(${name} PROPERTIES FIXTURES_REQUIRED fnp_installed)
    endif()
endfunction()

foreach(cc gcc clang)
    foreach(case pie nopie static shared gc cxx lto gmon wrapper pkgconfig cmake)
        fnp_patchable_case(${case} ${cc})
    endforeach()
endforeach()
fnp_patchable_case(filter gcc)
# SPDX-License-Identifier: MIT
