# SPDX-License-Identifier: MIT
# fnprof's CMake functions, from find_package(fnprof) or add_subdirectory(fnprof).
#
# fnprof_instrument(<target> [STATIC] [DEPENDENCIES] [PATCHABLE])
#   Builds <target>'s own sources with -g and the compiler's instrumentation flags and links
#   the fnprof runtime (libfnprof.so; STATIC: libfnprof.a). DEPENDENCIES: every library
#   target of this build that <target> links, directly or through other targets, is
#   instrumented too (its sources only: it gets no runtime of its own, the program's serves
#   the whole process). PATCHABLE: the patchable build (docs/patchable.md) instead of
#   -finstrument-functions: no-op sites at function entries and returns, patched only while
#   the program records; x86_64, gcc or clang.
#
# fnprof_instrument_directory([<dir>] [STATIC] [PATCHABLE] [EXCLUDE <target>...])
#   At the end of the calling directory's CMakeLists.txt: every executable and library
#   target defined in <dir> (default: the calling directory) and its subdirectories is
#   instrumented, and the executables link the runtime. EXCLUDE leaves targets alone.
#   A library instrumented here but loaded by a program that has no runtime binds the hooks
#   to glibc's no-ops: run that program under `fnprof run` (LD_PRELOAD).
#
# Run the program with PROF_OUTPUT=out.prof to get a pstats file.
#
# The flags keep the system's headers (the C++ standard library's templates above all) out of
# the profile, where the compiler can: they would swamp it and cost a hook pair each.
#   gcc:   -finstrument-functions -finstrument-functions-exclude-file-list=/usr/include
#   clang: -finstrument-functions-after-inlining: a function inlined into its caller (most
#          of std::) is no call of its own; functions that stay out of line are counted.
# docs/integration.md compares the routes.

# fnprof's own build tree when it is added with add_subdirectory: its targets are never
# instrumented (a hook calling a hook recurses forever). Cached: the functions run in the
# caller's directory, where fnprof's variables are not seen.
if(EXISTS "${CMAKE_CURRENT_LIST_DIR}/../runtime/hooks.c" AND PROJECT_NAME STREQUAL "fnprof")
    set(_FNPROF_BUILD_TREE "${PROJECT_BINARY_DIR}" CACHE INTERNAL "fnprof's build tree, if built here")
else()
    set(_FNPROF_BUILD_TREE "" CACHE INTERNAL "fnprof's build tree, if built here")
endif()

# The patchable build's directory, handed to gcc with -B (fnprof-as and the start files):
# fnprof's build tree when fnprof is built here or found there (-Dfnprof_DIR=<build>/cmake),
# else the install's, by the path fnprofConfig.cmake knows.
if(_FNPROF_BUILD_TREE)
    set(_fnprof_patchable_dir "${_FNPROF_BUILD_TREE}/patchable")
elseif(EXISTS "${CMAKE_CURRENT_LIST_DIR}/fnprofBuildTree.cmake")
    get_filename_component(_fnprof_patchable_dir "${CMAKE_CURRENT_LIST_DIR}/../patchable"
                           ABSOLUTE)
elseif(DEFINED _FNPROF_PATCHABLE_REL)
    get_filename_component(_fnprof_patchable_dir
                           "${CMAKE_CURRENT_LIST_DIR}/${_FNPROF_PATCHABLE_REL}" ABSOLUTE)
else()
    set(_fnprof_patchable_dir "")
endif()
set(_FNPROF_PATCHABLE_DIR "${_fnprof_patchable_dir}" CACHE INTERNAL
    "fnprof's patchable build directory (fnprof-as)")
unset(_fnprof_patchable_dir)

function(_fnprof_gcc_patchable out)
    set(${out} -pg -mfentry -mrecord-mcount -minstrument-return=nop5 -mrecord-return
        "-B${_FNPROF_PATCHABLE_DIR}/" PARENT_SCOPE)
endfunction()

# The compile options of an instrumented target, one set per compiler family. PATCHABLE:
#   gcc:   -pg -mfentry -mrecord-mcount -minstrument-return=nop5 -mrecord-return -B<dir>/
#   clang: -fxray-instrument -fxray-instruction-threshold=1 (the link gets no XRay flag,
#          so no XRay runtime: fnprof's runtime patches the sleds)
function(_fnprof_compile_options out patchable)
    if(patchable)
        if(NOT CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
            message(FATAL_ERROR "fnprof: PATCHABLE: x86_64 only, not ${CMAKE_SYSTEM_PROCESSOR}")
        endif()
        if(NOT EXISTS "${_FNPROF_PATCHABLE_DIR}/as" AND NOT _FNPROF_BUILD_TREE)
            message(FATAL_ERROR "fnprof: PATCHABLE: no fnprof-as in '${_FNPROF_PATCHABLE_DIR}'")
        endif()
        get_property(languages GLOBAL PROPERTY ENABLED_LANGUAGES)
        foreach(lang C CXX)
            if(lang IN_LIST languages AND NOT CMAKE_${lang}_COMPILER_ID MATCHES "^(GNU|Clang)$")
                message(FATAL_ERROR "fnprof: PATCHABLE: gcc or clang only, not "
                                    "${CMAKE_${lang}_COMPILER_ID} (${lang})")
            endif()
        endforeach()
        _fnprof_gcc_patchable(gnu)
        set(clang -fxray-instrument -fxray-instruction-threshold=1)
        set(${out}
            -g
            "$<$<COMPILE_LANG_AND_ID:C,GNU>:${gnu}>"
            "$<$<COMPILE_LANG_AND_ID:CXX,GNU>:${gnu}>"
            "$<$<COMPILE_LANG_AND_ID:C,Clang>:${clang}>"
            "$<$<COMPILE_LANG_AND_ID:CXX,Clang>:${clang}>"
            PARENT_SCOPE)
        return()
    endif()
    set(${out}
        -g
        $<$<COMPILE_LANG_AND_ID:C,GNU>:-finstrument-functions>
        $<$<COMPILE_LANG_AND_ID:CXX,GNU>:-finstrument-functions>
        $<$<COMPILE_LANG_AND_ID:C,GNU>:-finstrument-functions-exclude-file-list=/usr/include>
        $<$<COMPILE_LANG_AND_ID:CXX,GNU>:-finstrument-functions-exclude-file-list=/usr/include>
        $<$<COMPILE_LANG_AND_ID:C,Clang,AppleClang>:-finstrument-functions-after-inlining>
        $<$<COMPILE_LANG_AND_ID:CXX,Clang,AppleClang>:-finstrument-functions-after-inlining>
        PARENT_SCOPE)
endfunction()

# Whether <target> is something fnprof may instrument: built here, from sources, not fnprof's.
function(_fnprof_instrumentable target out)
    set(${out} FALSE PARENT_SCOPE)
    if(NOT TARGET ${target})
        return()
    endif()
    get_target_property(imported ${target} IMPORTED)
    get_target_property(type ${target} TYPE)
    if(imported OR NOT type MATCHES "^(EXECUTABLE|STATIC_LIBRARY|SHARED_LIBRARY|MODULE_LIBRARY|OBJECT_LIBRARY)$")
        return()
    endif()
    get_target_property(dir ${target} BINARY_DIR)
    if(_FNPROF_BUILD_TREE)
        string(FIND "${dir}/" "${_FNPROF_BUILD_TREE}/" at)
        if(at EQUAL 0)
            return()
        endif()
    endif()
    set(${out} TRUE PARENT_SCOPE)
endfunction()

# Compile options once per target, whichever function reaches it first or again.
function(_fnprof_compile target patchable)
    get_target_property(done ${target} _FNPROF_INSTRUMENTED)
    if(done)
        return()
    endif()
    set_property(TARGET ${target} PROPERTY _FNPROF_INSTRUMENTED TRUE)
    _fnprof_compile_options(options "${patchable}")
    target_compile_options(${target} PRIVATE ${options})
    if(patchable)
        # gcc's LTO compiles at the link, without the -pg of the objects: the link of a
        # target with INTERPROCEDURAL_OPTIMIZATION gets the gcc flags again (docs/patchable.md).
        get_target_property(type ${target} TYPE)
        if(NOT type MATCHES "^(EXECUTABLE|SHARED_LIBRARY|MODULE_LIBRARY)$")
            return()
        endif()
        _fnprof_gcc_patchable(gnu)
        set(ipo "$<BOOL:$<TARGET_PROPERTY:INTERPROCEDURAL_OPTIMIZATION>>")
        set(gcc "$<OR:$<LINK_LANG_AND_ID:C,GNU>,$<LINK_LANG_AND_ID:CXX,GNU>>")
        foreach(option IN LISTS gnu) # one each: a list inside a link option's $<> is split
            target_link_options(${target} PRIVATE "$<$<AND:${ipo},${gcc}>:${option}>")
        endforeach()
    endif()
endfunction()

# The rpath an installed program needs to find libfnprof.so, into <out>: its directory, or
# nothing when that is a system directory (an installed package's /usr/lib: one the compiler
# links from by default, which the loader searches), where an rpath is redundant.
function(_fnprof_rpath out)
    set(${out} "$<TARGET_FILE_DIR:fnprof::fnprof>" PARENT_SCOPE)
    get_target_property(imported fnprof::fnprof IMPORTED)
    if(NOT imported)
        return() # fnprof's own build tree (add_subdirectory)
    endif()
    get_target_property(configs fnprof::fnprof IMPORTED_CONFIGURATIONS)
    set(location "")
    foreach(config IN LISTS configs)
        get_target_property(location fnprof::fnprof IMPORTED_LOCATION_${config})
        if(location)
            break()
        endif()
    endforeach()
    if(NOT location)
        return()
    endif()
    get_filename_component(dir "${location}" DIRECTORY)
    get_filename_component(dir "${dir}" REALPATH)
    set(system ${CMAKE_PLATFORM_IMPLICIT_LINK_DIRECTORIES})
    get_property(languages GLOBAL PROPERTY ENABLED_LANGUAGES)
    foreach(lang IN LISTS languages)
        list(APPEND system ${CMAKE_${lang}_IMPLICIT_LINK_DIRECTORIES})
    endforeach()
    foreach(d IN LISTS system)
        get_filename_component(d "${d}" REALPATH)
        if(d STREQUAL dir)
            set(${out} "" PARENT_SCOPE)
            return()
        endif()
    endforeach()
endfunction()

function(_fnprof_link target static)
    get_target_property(done ${target} _FNPROF_LINKED)
    if(done)
        return()
    endif()
    set_property(TARGET ${target} PROPERTY _FNPROF_LINKED TRUE)
    if(static)
        if(NOT TARGET fnprof::fnprof_static)
            message(FATAL_ERROR "fnprof: ${target}: STATIC asks for fnprof::fnprof_static, which "
                    "this fnprof package does not define (libelf, libdwarf or zlib was not found "
                    "when fnprof was found)")
        endif()
        target_link_libraries(${target} PRIVATE fnprof::fnprof_static)
    else()
        target_link_libraries(${target} PRIVATE fnprof::fnprof)
        # CMake gives the build tree's binaries an rpath to libfnprof.so's directory, and the
        # installed ones none: an installed profiled program would not start unless that
        # directory is the loader's. Keep it after install too.
        get_target_property(type ${target} TYPE)
        _fnprof_rpath(rpath)
        if(rpath AND NOT type STREQUAL "STATIC_LIBRARY" AND NOT type STREQUAL "OBJECT_LIBRARY")
            set_property(TARGET ${target} APPEND PROPERTY INSTALL_RPATH "${rpath}")
        endif()
    endif()
endfunction()

# The library targets built here that <target> links, transitively, into the variable <out>.
# Link items may be generator expressions or plain names: only names of targets count.
function(_fnprof_linked_targets target out)
    set(seen "")
    set(todo ${target})
    while(todo)
        list(POP_FRONT todo t)
        foreach(prop LINK_LIBRARIES INTERFACE_LINK_LIBRARIES)
            get_target_property(items ${t} ${prop})
            if(NOT items)
                continue()
            endif()
            foreach(item IN LISTS items)
                # $<LINK_ONLY:x> is how a static library records its private links.
                if(item MATCHES "^\\$<LINK_ONLY:([^$<>]+)>$")
                    set(item "${CMAKE_MATCH_1}")
                endif()
                if(NOT TARGET "${item}")
                    continue()
                endif()
                get_target_property(real "${item}" ALIASED_TARGET)
                if(real)
                    set(item ${real})
                endif()
                get_target_property(imported ${item} IMPORTED)
                if(imported OR item IN_LIST seen)
                    continue()
                endif()
                list(APPEND seen ${item})
                list(APPEND todo ${item})
            endforeach()
        endforeach()
    endwhile()
    set(${out} ${seen} PARENT_SCOPE)
endfunction()

function(fnprof_instrument target)
    cmake_parse_arguments(PARSE_ARGV 1 FNP "STATIC;DEPENDENCIES;PATCHABLE" "" "")
    if(FNP_UNPARSED_ARGUMENTS)
        message(FATAL_ERROR "fnprof_instrument: unknown arguments: ${FNP_UNPARSED_ARGUMENTS}")
    endif()
    _fnprof_compile(${target} "${FNP_PATCHABLE}")
    _fnprof_link(${target} "${FNP_STATIC}")
    if(FNP_DEPENDENCIES)
        _fnprof_linked_targets(${target} deps)
        foreach(dep IN LISTS deps)
            _fnprof_instrumentable(${dep} ok)
            if(ok)
                _fnprof_compile(${dep} "${FNP_PATCHABLE}")
            endif()
        endforeach()
    endif()
endfunction()

# Every target of <dir> and below, into the variable <out>.
function(_fnprof_directory_targets dir out)
    get_property(targets DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
    get_property(subdirs DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
    foreach(sub IN LISTS subdirs)
        _fnprof_directory_targets("${sub}" more)
        list(APPEND targets ${more})
    endforeach()
    set(${out} ${targets} PARENT_SCOPE)
endfunction()

# Runs when the directory that called fnprof_instrument_directory has been read whole.
function(_fnprof_instrument_directory_now dir static exclude patchable)
    _fnprof_directory_targets("${dir}" targets)
    foreach(target IN LISTS targets)
        _fnprof_instrumentable(${target} ok)
        if(NOT ok OR target IN_LIST exclude)
            continue()
        endif()
        _fnprof_compile(${target} "${patchable}")
        get_target_property(type ${target} TYPE)
        if(type STREQUAL "EXECUTABLE")
            _fnprof_link(${target} "${static}")
        endif()
    endforeach()
endfunction()

function(fnprof_instrument_directory)
    cmake_parse_arguments(PARSE_ARGV 0 FNP "STATIC;PATCHABLE" "" "EXCLUDE")
    list(LENGTH FNP_UNPARSED_ARGUMENTS n)
    if(n GREATER 1)
        message(FATAL_ERROR "fnprof_instrument_directory: unknown arguments: ${FNP_UNPARSED_ARGUMENTS}")
    endif()
    set(dir "${CMAKE_CURRENT_SOURCE_DIR}")
    if(n EQUAL 1)
        get_filename_component(dir "${FNP_UNPARSED_ARGUMENTS}" ABSOLUTE
                               BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    endif()
    # Deferred: the targets of this directory defined after the call count too.
    cmake_language(EVAL CODE "
        cmake_language(DEFER CALL _fnprof_instrument_directory_now
                       [[${dir}]] [[${FNP_STATIC}]] [[${FNP_EXCLUDE}]] [[${FNP_PATCHABLE}]])")
endfunction()
