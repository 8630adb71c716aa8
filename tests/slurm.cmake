# A real Slurm (docs/mpi.md, "Under Slurm"): a single-node cluster of the test's own (munged,
# slurmctld, slurmd in a scratch folder, on loopback), srun of four Open MPI ranks through
# PMIx under fnprof run --mpi, and of four serial tasks named by SLURM_PROCID
# (tests/slurm/run_slurm.py). include()d from tests/CMakeLists.txt. Needs root and the
# slurm-wlm and munge packages (scripts/install-deps); skipped with the reason elsewhere.
find_package(MPI COMPONENTS C QUIET)

set(fnp_slurm_skip "")
if(NOT TARGET fnprof_mpi)
    set(fnp_slurm_skip
        "MPI not found when fnprof was configured (install openmpi-bin libopenmpi-dev)")
endif()
set(fnp_slurm_args)
if(fnp_slurm_skip)
    set(fnp_slurm_args --skip "${fnp_slurm_skip}")
endif()
add_test(NAME e2e.slurm.srun
         COMMAND Python3::Interpreter -B ${CMAKE_CURRENT_LIST_DIR}/slurm/run_slurm.py
                 --fnprof $<TARGET_FILE:fnprof> --lib-dir $<TARGET_FILE_DIR:fnprof_shared>
                 --mpicc "${MPI_C_COMPILER}" --cc ${CMAKE_C_COMPILER}
                 --workdir ${CMAKE_CURRENT_BINARY_DIR}/slurm/srun ${fnp_slurm_args})
# Four ranks and three daemons on a machine of two cores: alone, as the MPI tests run.
set_tests_properties(e2e.slurm.srun PROPERTIES LABELS "e2e;mpi;slurm" TIMEOUT 180
                     SKIP_RETURN_CODE 77 RUN_SERIAL TRUE)
# SPDX-License-Identifier: MIT
