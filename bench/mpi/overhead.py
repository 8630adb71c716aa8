#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What fnprof costs a call in an MPI rank, against a plain process (the goal: the
same figure).

    bench/mpi/overhead.py --fnprof build-bench/bin/fnprof [--calls 20000000] [--runs 5]
                          [--quick]

bench/mpi/loop.c, built plain (cc) and as an MPI program (mpicc), both -O2 -g
-finstrument-functions, times its own loop of CALLS calls of a tiny function (MPI_Init,
MPI_Finalize and the profile's writing are outside it), on its thread's CPU clock and on
the wall clock. Each launch runs twice: floor (the instrumented build, no fnprof: glibc's
empty hooks) and fnprof (`fnprof run`, with --mpi under mpirun). Launches:

    plain process      ./loop-plain CALLS
    2 plain at once    two plain processes started together (the control for -np 2)
    mpirun -np 1       one rank
    mpirun -np 2       two ranks at once, each making CALLS calls (a row per process)

ns/call>floor = (loop time under fnprof - loop time at floor) / calls, per process, the
median over RUNS rounds (every launch and configuration once a round, the order rotated).
The CPU figure is the one to compare: two processes on a 2-core machine shared with other
jobs wait for a core, which the wall figure counts and the CPU figure does not; "2 plain at
once" shows what sharing alone does to the wall figure. "vs plain" divides a row's CPU
figure by the plain process's: 1.00 is the goal.
Prints a line saying why and exits 0 when cc, mpicc or mpirun is missing.
python3 standard library only.
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
# How ranks are started on one machine: the same as the MPI tests' (tests/mpi/mpilaunch.py).
sys.path.insert(0, str(HERE.parent.parent / "tests" / "mpi"))
from mpilaunch import mpi_env, mpirun_cmd  # noqa: E402  pylint: disable=wrong-import-position
LINE = re.compile(r"^rank (\d+) ns (\d+) cpu (\d+) calls (\d+) ")
CONFIGS = ("floor", "fnprof")


def build(work):
    flags = ["-O2", "-g", "-finstrument-functions"]
    plain, mpi = work / "loop-plain", work / "loop-mpi"
    subprocess.run(["cc", *flags, str(HERE / "loop.c"), "-o", str(plain)], check=True)
    subprocess.run(["mpicc", *flags, "-DFNP_BENCH_MPI", str(HERE / "loop.c"), "-o", str(mpi)],
                   check=True)
    return plain, mpi


def parse(cmd, out, calls, first_rank=0):
    got = {}
    for ln in out.splitlines():
        m = LINE.match(ln)
        if m:
            if int(m.group(4)) != calls + 1:
                sys.exit(f"bench/mpi: {ln!r}: not {calls + 1} calls")
            got[int(m.group(1)) + first_rank] = (int(m.group(2)), int(m.group(3)))
    return got


def launch(kind, config, prog, calls, fnprof, work):
    """{process: (wall ns, cpu ns)} of one run of one launch."""
    env = mpi_env()
    args = [str(prog), str(calls)]
    if kind in ("plain", "plain2"):
        procs = []
        for i in range(1 if kind == "plain" else 2):
            cmd = args
            if config == "fnprof":
                cmd = [fnprof, "run", "-q", "-o", str(work / f"out{i}.prof"), "--"] + args
            procs.append((cmd, subprocess.Popen(cmd, env=env, cwd=work, text=True,
                                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)))
        got = {}
        for i, (cmd, p) in enumerate(procs):
            out, err = p.communicate()
            if p.returncode != 0:
                sys.exit(f"bench/mpi: {' '.join(cmd)}: exit {p.returncode}: {err.strip()}")
            got.update(parse(cmd, out, calls, first_rank=i))
        want = len(procs)
    else:
        wrap = [fnprof, "run", "--mpi", "-q", "-o", "out.%r.prof", "--"]
        cmd = mpirun_cmd("mpirun", kind) + (wrap if config == "fnprof" else []) + args
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=work)
        if r.returncode != 0:
            sys.exit(f"bench/mpi: {' '.join(cmd)}: exit {r.returncode}: {r.stderr.strip()}")
        got = parse(cmd, r.stdout, calls)
        want = kind
    if sorted(got) != list(range(want)):
        sys.exit(f"bench/mpi: {kind} {config}: printed {got}")
    for p in work.glob("out*"):
        p.unlink()
    return got


def report(fnprof, calls=20_000_000, runs=5, out=sys.stdout):
    for tool in ("cc", "mpicc", "mpirun"):
        if not shutil.which(tool):
            print(f"MPI ranks: skipped, no {tool} (install openmpi-bin libopenmpi-dev)", file=out)
            return
    launches = ["plain", "plain2", 1, 2]
    times = {}  # (launch, config, process) -> [(wall, cpu)]
    with tempfile.TemporaryDirectory(prefix="fnprof-bench-mpi-") as tmp:
        work = Path(tmp)
        plain, mpi = build(work)
        order = [(k, c) for k in launches for c in CONFIGS]
        for i in range(runs + 1):  # the first round warms the caches and is left out
            shift = i % len(order)
            for kind, config in order[shift:] + order[:shift]:
                prog = plain if kind in ("plain", "plain2") else mpi
                for proc, t in launch(kind, config, prog, calls, fnprof, work).items():
                    if i:
                        times.setdefault((kind, config, proc), []).append(t)
    n = calls + 1

    def med(kind, config, proc, which):
        return statistics.median(t[which] for t in times[(kind, config, proc)])

    print(f"MPI ranks: fnprof's cost per call above floor ({calls:,} calls of a tiny function "
          f"per process, loop timed by the program, median of {runs})", file=out)
    print(f"{'launch':<16} {'process':<8} {'floor cpu ms':>12} {'fnprof cpu ms':>13} "
          f"{'ns/call>floor cpu':>17} {'wall':>7} {'vs plain':>9}", file=out)
    ref = None
    names = {"plain": "plain process", "plain2": "2 plain at once", 1: "mpirun -np 1",
             2: "mpirun -np 2"}
    for kind in launches:
        procs = sorted({p for (k, _c, p) in times if k == kind})
        for proc in procs:
            floor_cpu, prof_cpu = med(kind, "floor", proc, 1), med(kind, "fnprof", proc, 1)
            per_cpu = (prof_cpu - floor_cpu) / n
            per_wall = (med(kind, "fnprof", proc, 0) - med(kind, "floor", proc, 0)) / n
            if kind == "plain":
                ref = per_cpu
            label = ("-" if kind == "plain" else
                     f"proc {proc}" if kind == "plain2" else f"rank {proc}")
            ratio = f"{per_cpu / ref:.2f}" if ref and ref > 0 else "-"
            print(f"{names[kind]:<16} {label:<8} {floor_cpu / 1e6:>12.1f} {prof_cpu / 1e6:>13.1f} "
                  f"{per_cpu:>17.2f} {per_wall:>7.2f} {ratio:>9}", file=out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fnprof", required=True, help="the fnprof command (bin/fnprof)")
    ap.add_argument("--calls", type=int, default=20_000_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="1,000,000 calls, one run")
    args = ap.parse_args()
    if args.quick:
        args.calls, args.runs = 1_000_000, 1
    report(os.path.abspath(args.fnprof), args.calls, args.runs)


if __name__ == "__main__":
    main()
