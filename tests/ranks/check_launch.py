#!/usr/bin/env python3
"""The names the runtime gives the files of a launcher's ranks and of forked children.

A launcher (instrumented, fnprof preloaded, PROF_OUTPUT in its own environment, as when a
user exports both before mpirun) starts ranks with Open MPI's variables: each rank owns the
name its rank gives it, and the launcher keeps its own. Under srun, the launcher itself may
have a rank: a rank whose name would be the launcher's is its child and appends its pid,
so no file is overwritten. "%%p" is a percent sign, not the pid: a forked child still
appends its pid. Usage: check_launch.py CC LIBFNPROF WORKDIR
"""
import os
import pstats
import shutil
import subprocess
import sys

CC, LIB, WORK = sys.argv[1], sys.argv[2], sys.argv[3]
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))
import fnptree  # noqa: E402  pylint: disable=wrong-import-position

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
prog = os.path.join(WORK, "launch")
subprocess.run([CC, "-g", "-O0", "-finstrument-functions", os.path.join(HERE, "launch.c"), "-o",
                prog], check=True)


def run(case, args, extra, template):
    out = os.path.join(WORK, case)
    os.makedirs(out)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PROF_", "OMPI_", "PMI", "SLURM_", "MV2_", "JSM_", "PALS_"))}
    env.update(extra, PROF_OUTPUT=os.path.join(out, template), LD_PRELOAD=LIB, PROF_QUIET="1")
    p = subprocess.run([prog, *args], env=env, capture_output=True, text=True, check=False)
    if p.returncode or p.stderr:
        fail(f"{case}: exit {p.returncode}, stderr {p.stderr!r}")
    return out, sorted(os.listdir(out))


def work_calls(path):
    stats = pstats.Stats(path).stats
    return sum(v[1] for k, v in stats.items() if k[2] == "work")


def rank_of(path):
    return dict(fnptree.read_meta(path)).get("rank")


def check_launch(case, extra, launcher_name, child_of_launcher):
    """3 ranks: rank r works r + 1 times, the launcher once."""
    out, files = run(case, ["launch", "3"], extra, "out.prof")
    want = sorted([launcher_name] + [f"out.prof.rank{r}" for r in range(3)
                                     if f"out.prof.rank{r}" != launcher_name])
    pid_files = [f for f in files if f not in want]
    if child_of_launcher:
        # the rank named as the launcher is: its own file, with its pid appended
        if len(pid_files) != 1 or not pid_files[0].startswith(launcher_name + "."):
            fail(f"{case}: files {files}, wanted {want} and one {launcher_name}.<pid>")
    elif files != want:
        fail(f"{case}: files {files}, wanted {want}")
    total = sum(work_calls(os.path.join(out, f)) for f in files)
    if total != 1 + 1 + 2 + 3:
        fail(f"{case}: work's calls over the files: {total}, wanted 7 (nothing overwritten)")
    for r in range(3):
        name = f"out.prof.rank{r}"
        path = os.path.join(out, name)
        if name == launcher_name:
            path = os.path.join(out, pid_files[0]) if pid_files else path
        if os.path.exists(path):
            if work_calls(path) != r + 1:
                fail(f"{case}: {os.path.basename(path)}: work called {work_calls(path)}, "
                     f"wanted {r + 1}")
            if rank_of(path) != str(r):
                fail(f"{case}: {os.path.basename(path)}: rank metadata {rank_of(path)}")


# The launcher outside any launcher: its own out.prof, each rank out.prof.rank<r>.
check_launch("plain", {}, "out.prof", False)
# A launcher that is srun's only task: size 1, so still out.prof.
check_launch("srun1", {"SLURM_PROCID": "0", "SLURM_STEP_NUM_TASKS": "1"}, "out.prof", False)
# A batch script's shell (SLURM_PROCID without a step): no rank at all.
check_launch("batch", {"SLURM_PROCID": "0", "SLURM_NTASKS": "4"}, "out.prof", False)
# A launcher that is task 0 of 2 under srun names itself out.prof.rank0, as Open MPI's
# rank 0 below it would: that rank is its child, and appends its pid.
check_launch("srun2", {"SLURM_PROCID": "0", "SLURM_STEP_NUM_TASKS": "2"}, "out.prof.rank0",
             True)

# "%%p": a literal "%p" in the name, so the forked child appends its pid.
out, files = run("percent", ["fork"], {}, "out%%p.prof")
if len(files) != 2 or "out%p.prof" not in files or not any(
        f.startswith("out%p.prof.") and f[len("out%p.prof."):].isdigit() for f in files):
    fail(f"%%p: files {files}, wanted out%p.prof and out%p.prof.<pid>")
# "%p": each process its own name, no suffix.
out, files = run("pid", ["fork"], {}, "out.%p.prof")
if len(files) != 2 or any(f.count(".") != 2 for f in files):
    fail(f"%p: files {files}, wanted two out.<pid>.prof")

if failures:
    sys.exit(1)
print("ok")
# SPDX-License-Identifier: MIT
