# SPDX-License-Identifier: MIT
# The Python package (python/): python3 -m fnprof against cProfile on pure Python, mixed
# Python and C exact against the loops' counts, threads, the printed report. Only when the
# package is built (Python's headers found). The tests run with the interpreter the build
# found (python.CASE), and again with each of Python 3.12 and 3.13 (python.3.12.CASE), whose
# sys.monitoring path differs from 3.11's profile hook: for those the extension is built
# once more, into the same package directory (its file name carries the interpreter's ABI
# tag, so each interpreter imports its own). Where one is missing, its tests skip with the
# reason.
if(NOT TARGET fnprof_python)
    return()
endif()
set(fnp_py_cases pure mixed_linked mixed_flags threads report fork trace trace_mixed memory schedule
    dump_signal filter together signals)
set(fnp_py_runner ${CMAKE_CURRENT_LIST_DIR}/python/run_python_test.py)

foreach(case ${fnp_py_cases})
    add_test(NAME python.${case} COMMAND ${Python3_EXECUTABLE} ${fnp_py_runner} ${case}
                                         ${PROJECT_BINARY_DIR})
    set_tests_properties(python.${case} PROPERTIES LABELS "e2e;python" SKIP_RETURN_CODE 77)
endforeach()

# The interpreter python3.X with its headers: pyenv's (not its shims, which refuse a
# version that is not selected) or the PATH's. Sets out_exe (empty when none), out_include
# and out_suffix, or out_why.
function(fnp_find_python version out_exe out_include out_suffix out_why)
    set(root $ENV{PYENV_ROOT})
    if(NOT root)
        set(root $ENV{HOME}/.pyenv)
    endif()
    file(GLOB candidates ${root}/versions/${version}*/bin/python${version})
    find_program(fnp_py_path_${version} NAMES python${version} NAMES_PER_DIR
                 PATHS /usr/local/bin /usr/bin NO_CACHE)
    list(APPEND candidates ${fnp_py_path_${version}})
    set(${out_exe} "" PARENT_SCOPE)
    set(${out_why} "python${version} not found (pyenv's ${root}/versions or the PATH)"
        PARENT_SCOPE)
    foreach(exe ${candidates})
        execute_process(
            COMMAND ${exe} -c "import sys, sysconfig; print(sys.executable); \
print(sysconfig.get_paths()['include']); print(sysconfig.get_config_var('EXT_SUFFIX')); \
print('%d.%d' % sys.version_info[:2])"
            OUTPUT_VARIABLE info OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc
            ERROR_QUIET)
        if(NOT rc EQUAL 0)
            continue()
        endif()
        string(REPLACE "\n" ";" info "${info}")
        list(GET info 0 real)
        list(GET info 1 include)
        list(GET info 2 suffix)
        list(GET info 3 got)
        if(NOT got STREQUAL version)
            continue()
        endif()
        if(NOT EXISTS ${include}/Python.h)
            set(${out_why} "${real} has no headers (${include}/Python.h)" PARENT_SCOPE)
            continue()
        endif()
        set(${out_exe} ${real} PARENT_SCOPE)
        set(${out_include} ${include} PARENT_SCOPE)
        set(${out_suffix} ${suffix} PARENT_SCOPE)
        return()
    endforeach()
endfunction()

foreach(version 3.12 3.13)
    if(Python3_VERSION VERSION_GREATER_EQUAL ${version}
       AND Python3_VERSION VERSION_LESS ${version}.999)
        continue() # the main interpreter's tests run these already
    endif()
    fnp_find_python(${version} exe include suffix why)
    string(REPLACE "." "" tag ${version})
    if(exe)
        message(STATUS "fnprof: Python ${version} tests with ${exe}")
        add_library(fnprof_python${tag} MODULE ${PROJECT_SOURCE_DIR}/python/_fnprof.c)
        set_target_properties(fnprof_python${tag} PROPERTIES
                              OUTPUT_NAME _fnprof PREFIX "" SUFFIX ${suffix} C_STANDARD 11
                              C_VISIBILITY_PRESET hidden
                              LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/python/fnprof)
        target_include_directories(fnprof_python${tag} PRIVATE ${include})
        target_link_libraries(fnprof_python${tag} PRIVATE fnprof_shared fnp_flags)
        target_compile_options(fnprof_python${tag}
                               PRIVATE $<$<C_COMPILER_ID:GNU>:-fno-instrument-functions>)
        set(command ${exe} ${fnp_py_runner})
    else()
        set(command ${Python3_EXECUTABLE} ${fnp_py_runner} --skip "${why}")
    endif()
    foreach(case ${fnp_py_cases})
        add_test(NAME python.${version}.${case} COMMAND ${command} ${case}
                                                        ${PROJECT_BINARY_DIR})
        set_tests_properties(python.${version}.${case} PROPERTIES LABELS "e2e;python"
                             SKIP_RETURN_CODE 77)
    endforeach()
endforeach()
# Python and native frames in one stack in every view and in PROF_TRACE's timeline
# (tests/python/check_views.py).
foreach(case views trace_nesting example)
    add_test(NAME python.${case}
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/python/check_views.py
                     ${case} ${PROJECT_BINARY_DIR})
    set_tests_properties(python.${case} PROPERTIES LABELS "e2e;python;views")
endforeach()
# A real extension nobody here wrote: Debian's markupsafe speedups built with fnprof-cc,
# native calls against a counting hook, the Python side against cProfile (skipped, 77,
# where apt-get source cannot fetch it).
add_test(NAME python.real_extension
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/python/check_real_extension.py
                 ${PROJECT_BINARY_DIR} ${CMAKE_CURRENT_BINARY_DIR}/python-real-extension)
set_tests_properties(python.real_extension PROPERTIES LABELS "e2e;python" TIMEOUT 900
                                                      SKIP_RETURN_CODE 77)
