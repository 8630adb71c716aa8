# SPDX-License-Identifier: MIT
# The patchable build's directory (docs/patchable.md), handed to gcc with -B by
# `fnprof-cc --patchable` and the fnprof-patchable pkg-config module:
#   as         fnprof-as (patch-as.c): gcc's profiling sites rewritten into fnprof_sites
#   gcrt1.o    the toolchain's Scrt1.o, grcrt1.o its rcrt1.o: a one-step `gcc -pg ... -o prog`
#              links gprof's start file, which would write gmon.out at exit; -B finds these
#              first.
# Build tree: build/patchable/, also reached as build/<libexecdir>/fnprof/patchable (a link),
# the installed layout, so the wrappers find it from bin/ by one relative path.
set(fnp_patch_dir ${PROJECT_BINARY_DIR}/patchable)
set(fnp_patch_install_dir ${CMAKE_INSTALL_LIBEXECDIR}/fnprof/patchable)

add_executable(fnprof_patch_as ${CMAKE_CURRENT_LIST_DIR}/patch-as.c
               ${CMAKE_CURRENT_LIST_DIR}/patch-sites.c)
set_target_properties(fnprof_patch_as PROPERTIES OUTPUT_NAME as C_STANDARD 11
                      C_VISIBILITY_PRESET hidden RUNTIME_OUTPUT_DIRECTORY ${fnp_patch_dir})
target_link_libraries(fnprof_patch_as PRIVATE fnp_flags)
install(TARGETS fnprof_patch_as RUNTIME DESTINATION ${fnp_patch_install_dir})

# The start files, from the compiler that builds fnprof (the libc the package is built for).
foreach(fnp_crt Scrt1.o:gcrt1.o rcrt1.o:grcrt1.o)
    string(REPLACE ":" ";" fnp_crt ${fnp_crt})
    list(GET fnp_crt 0 fnp_from)
    list(GET fnp_crt 1 fnp_to)
    execute_process(COMMAND ${CMAKE_C_COMPILER} -print-file-name=${fnp_from}
                    OUTPUT_VARIABLE fnp_from_path OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(NOT IS_ABSOLUTE "${fnp_from_path}" OR NOT EXISTS "${fnp_from_path}")
        message(WARNING "fnprof: ${CMAKE_C_COMPILER} knows no ${fnp_from}: a one-step "
                        "`gcc --patchable ... -o prog` will link gprof's ${fnp_to} (gmon.out)")
        continue()
    endif()
    file(REAL_PATH "${fnp_from_path}" fnp_from_path)
    configure_file(${fnp_from_path} ${fnp_patch_dir}/${fnp_to} COPYONLY)
    install(FILES ${fnp_patch_dir}/${fnp_to} DESTINATION ${fnp_patch_install_dir})
endforeach()

file(MAKE_DIRECTORY ${PROJECT_BINARY_DIR}/${CMAKE_INSTALL_LIBEXECDIR}/fnprof)
file(CREATE_LINK ${fnp_patch_dir} ${PROJECT_BINARY_DIR}/${fnp_patch_install_dir} SYMBOLIC)

# From bin/ to the directory, for the wrappers (installed and build tree alike).
file(RELATIVE_PATH fnp_rel_patchdir ${CMAKE_INSTALL_FULL_BINDIR}
     ${CMAKE_INSTALL_PREFIX}/${fnp_patch_install_dir})
