"""How the MPI tests and bench/mpi start ranks on one machine, under Open MPI's mpirun or
MPICH's Hydra (mpiexec.hydra).

    mpirun_cmd(mpiexec, np, yield_when_idle=False, flavour="openmpi") -> the command up to
        the program
    env_args(flavour, name, value) -> the launcher's options passing name=value to the ranks
    mpi_env() -> the environment: nothing of fnprof's or the loader's, and plain copies

python3 standard library only.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from run_case import clean_env  # noqa: E402  pylint: disable=wrong-import-position


def mpirun_cmd(mpiexec, np, yield_when_idle=False, flavour="openmpi"):
    if flavour == "mpich":
        # Hydra runs as root, oversubscribes and forks local ranks without being told.
        return [mpiexec, "-n", str(np)]
    cmd = [mpiexec, "--oversubscribe", "-np", str(np)]
    # OpenMPI refuses to start as root without being told (CI containers run as root).
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    # One node: shared memory (vader) and self only. The TCP transport would probe every
    # interface of the container, slowly, for peers that are all local.
    cmd += ["--mca", "btl", "self,vader"]
    # Ranks waiting in MPI yield the CPU: more ranks than cores, and a spinning waiter would
    # take the working rank's time.
    if yield_when_idle:
        cmd += ["--mca", "mpi_yield_when_idle", "1"]
    return cmd


def env_args(flavour, name, value):
    """Open MPI's -x NAME=VALUE; Hydra's -genv NAME VALUE (its -x is not an option)."""
    if flavour == "mpich":
        return ["-genv", name, value]
    return ["-x", f"{name}={value}"]


def mpi_env():
    env = clean_env()
    # vader's single-copy transfers use process_vm_readv (CMA), which containers without
    # CAP_SYS_PTRACE refuse ("Read -1, expected ..., errno = 1"); plain copies work anywhere.
    env["OMPI_MCA_btl_vader_single_copy_mechanism"] = "none"
    return env
# SPDX-License-Identifier: MIT
