# SPDX-License-Identifier: MIT
# The Python package (python/): python3 -m fnprof against cProfile on pure Python, mixed
# Python and C exact against the loops' counts, threads, the printed report. Only when the
# package is built (Python's headers found); with the interpreter the build found.
if(NOT TARGET fnprof_python)
    return()
endif()
foreach(case pure mixed_linked mixed_flags threads report)
    add_test(NAME python.${case}
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/python/run_python_test.py
                     ${case} ${PROJECT_BINARY_DIR})
    set_tests_properties(python.${case} PROPERTIES LABELS "e2e;python")
endforeach()
# Python and native frames in one stack in every view and in PROF_TRACE's timeline
# (tests/python/check_views.py).
foreach(case views trace example)
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
