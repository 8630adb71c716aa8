# SPDX-License-Identifier: MIT
# fnprof-cc and fnprof-c++: the compiler wrappers (docs/wrappers.md), one source built twice.
# Included from toolchain/CMakeLists.txt, after fnp_rel_libdir is set: the wrappers find the
# runtime's directory by the same relative path as `fnprof run`.

# What libfnprof.a needs after it in a -static link: fnprof.pc's Libs.private.
set(fnp_static_libs "-ldwarf -lelf -lz -lstdc++ -lpthread -ldl")

foreach(fnp_lang cc c++)
    set(fnp_target fnprof_wrapper_${fnp_lang})
    string(REPLACE "+" "x" fnp_target ${fnp_target})
    # No libelf, no libstdc++: the wrapper starts on every compile of a build, and every
    # shared library it loads costs start-up time. The filter parser is plain C.
    add_executable(${fnp_target} ${CMAKE_CURRENT_LIST_DIR}/cc-wrapper.c
                   ${CMAKE_CURRENT_LIST_DIR}/cc-args.c ${CMAKE_CURRENT_LIST_DIR}/cc-detect.c
                   ${CMAKE_CURRENT_LIST_DIR}/cc-filter.c ${CMAKE_CURRENT_LIST_DIR}/cc-symbols.c
                   ${CMAKE_CURRENT_LIST_DIR}/cc-patchable.c ${CMAKE_CURRENT_LIST_DIR}/libdir.c
                   ${PROJECT_SOURCE_DIR}/profile/filter.c)
    set_target_properties(${fnp_target} PROPERTIES OUTPUT_NAME fnprof-${fnp_lang} C_STANDARD 11
                          C_VISIBILITY_PRESET hidden)
    target_include_directories(${fnp_target} PRIVATE ${CMAKE_CURRENT_LIST_DIR}
                               ${PROJECT_SOURCE_DIR}/profile)
    target_compile_definitions(${fnp_target} PRIVATE FNPROF_REL_LIBDIR="${fnp_rel_libdir}"
                               FNPROF_STATIC_LIBS="${fnp_static_libs}"
                               FNPROF_REL_PATCHDIR="${fnp_rel_patchdir}")
    if(fnp_lang STREQUAL "c++")
        target_compile_definitions(${fnp_target} PRIVATE FNPROF_CC_CXX)
    endif()
    target_link_libraries(${fnp_target} PRIVATE fnp_flags ${CMAKE_DL_LIBS})
    # `make CC=fnprof-cc` runs it from bin/; the runtime must be there to link with.
    add_dependencies(${fnp_target} fnprof_shared fnprof_static fnprof_patch_as)
    install(TARGETS ${fnp_target} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endforeach()
