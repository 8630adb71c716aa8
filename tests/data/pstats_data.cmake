# pstats files written by real CPython, made at test time by the fixture pstats_data into
# ${FNP_PSTATS_DATA}/prof (with what CPython reads back from each in .../expect).
# Included by pstats_read.cmake and cli.cmake, whichever comes first.
include_guard(DIRECTORY)

set(FNP_PSTATS_DATA ${CMAKE_CURRENT_BINARY_DIR}/pstats_data)

# Besides the build's python3, every other CPython 3.8-3.13 that pyenv holds writes its
# files too: the marshal writer changed between them (immortal objects in 3.12 are flagged
# for references, for one). Machines without pyenv test with python3 alone.
set(fnp_pyenv_root $ENV{PYENV_ROOT})
if(NOT fnp_pyenv_root)
    set(fnp_pyenv_root $ENV{HOME}/.pyenv)
endif()
file(GLOB fnp_other_pythons ${fnp_pyenv_root}/versions/3.*/bin/python3)
list(FILTER fnp_other_pythons INCLUDE REGEX "/versions/3\\.(8|9|10|11|12|13)\\.[0-9]+/")

add_test(NAME setup.pstats_data
         COMMAND Python3::Interpreter ${CMAKE_CURRENT_LIST_DIR}/pstats_gen.py
                 ${FNP_PSTATS_DATA} --also ${fnp_other_pythons})
set_tests_properties(setup.pstats_data PROPERTIES FIXTURES_SETUP pstats_data LABELS unit
                     TIMEOUT 120)
# SPDX-License-Identifier: MIT
