# MPI programs end to end (docs/mpi.md): four ranks under mpirun, each rank's profile exact,
# the MPI calls as functions, fnprof ranks and merge over the ranks' files
# (tests/mpi/run_mpi.py). include()d from tests/CMakeLists.txt. Where MPI was not found at
# configure time, the same tests are registered and report SKIPPED with the reason.
find_package(MPI COMPONENTS C QUIET)

set(fnp_mpi_skip "")
if(NOT TARGET fnprof_mpi)
    set(fnp_mpi_skip "MPI not found when fnprof was configured (install openmpi-bin libopenmpi-dev)")
elseif(NOT MPIEXEC_EXECUTABLE OR NOT MPI_C_COMPILER)
    set(fnp_mpi_skip "no mpirun or mpicc found (install openmpi-bin)")
endif()

# env_rank: -x PROF_OUTPUT=out.%r.prof; env_plain: out.prof, ".rank<r>" appended; linked:
# the program linked with -lfnprof, the wrappers alone preloaded; exported: PROF_OUTPUT and
# LD_PRELOAD in mpirun's own environment; run_rank, run_plain:
# fnprof run --mpi; count: PROF_TIMER=none; filter: PROF_FILTER on an MPI call and a
# function; no_lib: fnprof run --mpi where the wrappers were not built; reversed: the
# wrappers first in LD_PRELOAD; alone: the wrappers alone preloaded into a program not
# linked with fnprof (nothing recorded, said once a rank); fork: each rank's forked child
# folded into the rank's file by fnprof run; more: MPI-IO, topology, neighbourhood and
# one-sided wrappers (tests/mpi/more_calls.c); libcalls: fnprof run --mpi --libcalls, the
# MPI calls still the wrappers' and exact (docs/libcalls.md).
foreach(case env_rank env_plain exported linked run_rank run_plain count filter no_lib
        reversed alone fork more libcalls)
    set(fnp_mpi_args)
    if(fnp_mpi_skip AND NOT case STREQUAL "no_lib")
        set(fnp_mpi_args --skip "${fnp_mpi_skip}")
    endif()
    add_test(NAME e2e.mpi.${case}
             COMMAND Python3::Interpreter -B ${CMAKE_CURRENT_LIST_DIR}/mpi/run_mpi.py
                     --case ${case} --fnprof $<TARGET_FILE:fnprof>
                     --lib-dir $<TARGET_FILE_DIR:fnprof_shared>
                     --mpicc "${MPI_C_COMPILER}" --mpiexec "${MPIEXEC_EXECUTABLE}"
                     --workdir ${CMAKE_CURRENT_BINARY_DIR}/mpi/${case} ${fnp_mpi_args})
    # Four ranks on a machine of two cores or fewer: one MPI test at a time.
    set_tests_properties(e2e.mpi.${case} PROPERTIES LABELS "e2e;mpi" TIMEOUT 300
                         SKIP_RETURN_CODE 77 RUN_SERIAL TRUE)
endforeach()

set_tests_properties(e2e.mpi.libcalls PROPERTIES LABELS "e2e;mpi;libcalls")

# The same cases under MPICH beside Open MPI (mpicc.mpich, Hydra's mpiexec.hydra, the
# wrappers built for MPICH: libfnprof-mpich.so), as e2e.mpi.<case>.mpich; mismatch:
# fnprof run --mpi on an MPICH program where only Open MPI's wrappers were built refuses it
# in one line. no_lib has no MPI program, so it runs once, above.
find_program(FNP_MPICC_MPICH mpicc.mpich)
find_program(FNP_MPIEXEC_HYDRA mpiexec.hydra)
set(fnp_mpich_skip "")
if(NOT TARGET fnprof_mpich)
    set(fnp_mpich_skip "MPICH beside Open MPI not found when fnprof was configured (install "
                       "mpich libmpich-dev)")
elseif(NOT FNP_MPICC_MPICH OR NOT FNP_MPIEXEC_HYDRA)
    set(fnp_mpich_skip "no mpicc.mpich or mpiexec.hydra found (install mpich libmpich-dev)")
endif()
foreach(case env_rank env_plain exported linked run_rank run_plain count filter reversed
        alone fork more mismatch)
    set(fnp_mpi_args)
    if(fnp_mpich_skip)
        set(fnp_mpi_args --skip "${fnp_mpich_skip}")
    endif()
    add_test(NAME e2e.mpi.${case}.mpich
             COMMAND Python3::Interpreter -B ${CMAKE_CURRENT_LIST_DIR}/mpi/run_mpi.py
                     --case ${case} --fnprof $<TARGET_FILE:fnprof>
                     --lib-dir $<TARGET_FILE_DIR:fnprof_shared> --flavour mpich
                     --mpi-lib libfnprof-mpich.so --mpicc "${FNP_MPICC_MPICH}"
                     --mpiexec "${FNP_MPIEXEC_HYDRA}"
                     --workdir ${CMAKE_CURRENT_BINARY_DIR}/mpi/${case}.mpich ${fnp_mpi_args})
    set_tests_properties(e2e.mpi.${case}.mpich PROPERTIES LABELS "e2e;mpi;mpich" TIMEOUT 300
                         SKIP_RETURN_CODE 77 RUN_SERIAL TRUE)
endforeach()

# The README's MPI build line on an Open MPI-style Makefile ($(MPICC), never $(CC)): the
# program is instrumented; CC=fnprof-cc alone is not, and fnprof doctor says so. Needs
# mpicc and make only (no ranks are started).
add_test(NAME e2e.mpi.makefile_mpicc
         COMMAND Python3::Interpreter -B ${CMAKE_CURRENT_LIST_DIR}/mpi/makefile_mpicc.py
                 --bin $<TARGET_FILE_DIR:fnprof> --readme ${PROJECT_SOURCE_DIR}/README.md
                 --work ${CMAKE_CURRENT_BINARY_DIR}/mpi/makefile_mpicc)
set_tests_properties(e2e.mpi.makefile_mpicc PROPERTIES LABELS "e2e;mpi" SKIP_RETURN_CODE 77)
# The same line with FNPROF_CC=mpicc.mpich (MPICH beside Open MPI): the program needs
# libmpich.so.12 and is instrumented.
add_test(NAME e2e.mpi.makefile_mpicc.mpich
         COMMAND Python3::Interpreter -B ${CMAKE_CURRENT_LIST_DIR}/mpi/makefile_mpicc.py
                 --bin $<TARGET_FILE_DIR:fnprof> --readme ${PROJECT_SOURCE_DIR}/README.md
                 --work ${CMAKE_CURRENT_BINARY_DIR}/mpi/makefile_mpicc.mpich --mpicc mpicc.mpich)
set_tests_properties(e2e.mpi.makefile_mpicc.mpich PROPERTIES LABELS "e2e;mpi;mpich"
                     SKIP_RETURN_CODE 77)
# SPDX-License-Identifier: MIT
