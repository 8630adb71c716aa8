#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""PROF_MEMORY's rows (bench/run --memory): what a memory profile costs on a malloc-bound
workload (workloads/allocs.c) against heaptrack and valgrind's DHAT, what the allocator
wrappers cost when PROF_MEMORY is unset, and fnprof's allocation counts per function
against heaptrack's on Lua's interpreter (tests/memory/heaptrack_agree.py).

    python3 bench/memory.py --lib build-bench/lib [--runs 5] [--rounds 20000]

Configurations, all on the same -O2 -g -finstrument-functions binary:
  floor          glibc's no-op hooks, glibc's allocator, nothing preloaded
  fnprof-off     libfnprof.so preloaded, no variable set: hooks and wrappers pass through
  fnprof-count   PROF_OUTPUT, PROF_TIMER=none (what PROF_MEMORY alone records of the calls)
  fnprof         PROF_OUTPUT (timed)
  memory         PROF_MEMORY alone (calls counted, every allocation recorded)
  memory+timed   PROF_MEMORY and PROF_OUTPUT
  heaptrack      heaptrack's recording run (its analysis, heaptrack_print, not counted)
  dhat           valgrind --tool=dhat
Wall time: median of --runs interleaved runs. ns/alloc: (config - its reference) / the
run's allocations, the reference being fnprof-count for memory, fnprof for memory+timed,
floor for the others.
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ALLOCS_PER_ROUND = 262  # workloads/allocs.c: 200 + 50 + 12


def build(src, out):
    subprocess.run(["gcc", "-O2", "-g", "-finstrument-functions", src, "-o", out], check=True)


def timed(cmd, env, cwd):
    t0 = time.perf_counter()
    subprocess.run(cmd, env=env, cwd=cwd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return (time.perf_counter() - t0) * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=20000)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--label", default="", help="said in the title (bench/run --rev)")
    a = ap.parse_args()
    if a.quick:
        a.runs, a.rounds = 1, 200
    lib = os.path.abspath(os.path.join(a.lib, "libfnprof.so"))
    tmp = tempfile.mkdtemp(prefix="fnp-bench-memory-")
    prog = os.path.join(tmp, "allocs")
    build(os.path.join(ROOT, "bench", "workloads", "allocs.c"), prog)
    argv = [prog, str(a.rounds)]
    clean = {k: v for k, v in os.environ.items() if not k.startswith("PROF_")}
    pre = dict(clean, LD_PRELOAD=lib, PROF_QUIET="1")
    configs = [
        ("floor", argv, clean),
        ("fnprof-off", argv, pre),
        ("fnprof-count", argv, dict(pre, PROF_OUTPUT="t.prof", PROF_TIMER="none")),
        ("fnprof", argv, dict(pre, PROF_OUTPUT="t.prof")),
        ("memory", argv, dict(pre, PROF_MEMORY="m.prof")),
        ("memory+timed", argv, dict(pre, PROF_MEMORY="m.prof", PROF_OUTPUT="t.prof")),
    ]
    if shutil.which("heaptrack"):
        configs.append(("heaptrack", ["heaptrack", "-o", os.path.join(tmp, "ht")] + argv, clean))
    if shutil.which("valgrind"):
        configs.append(("dhat", ["valgrind", "--tool=dhat",
                                 "--dhat-out-file=" + os.path.join(tmp, "dhat.out")] + argv,
                        clean))
    times = {name: [] for name, _, _ in configs}
    for _ in range(a.runs):
        for name, cmd, env in configs:
            times[name].append(timed(cmd, env, tmp))
            for f in os.listdir(tmp):
                if f.startswith("ht"):
                    os.unlink(os.path.join(tmp, f))
    allocs = a.rounds * ALLOCS_PER_ROUND + 1  # + stdout's buffer
    med = {k: statistics.median(v) for k, v in times.items()}
    ref = {"memory": "fnprof-count", "memory+timed": "fnprof"}
    print("allocs: %d rounds, %d allocations, median of %d runs (wall ms) %s" % (
        a.rounds, allocs, a.runs, a.label))
    print("%-13s %9s %13s %8s %13s" % ("config", "wall ms", "min-max", "x floor",
                                       "ns/alloc>ref"))
    for name, _, _ in configs:
        r = ref.get(name, "floor")
        extra = "" if name == "floor" else "%.1f (%s)" % (
            (med[name] - med[r]) * 1e6 / allocs, r)
        print("%-13s %9.1f %6.0f-%-6.0f %8.2f  %s" % (
            name, med[name], min(times[name]), max(times[name]), med[name] / med["floor"],
            extra))
    if "heaptrack" in med:
        print("heaptrack / memory: %.1fx (goal: memory at least 5x cheaper in added time: "
              "%.1fx)" % (med["heaptrack"] / med["memory"],
                          (med["heaptrack"] - med["floor"]) / max(med["memory"] - med["floor"],
                                                                  1e-9)))
    lua = os.path.join(ROOT, "bench", ".cache", "build", "lua", "inst", "lua")
    if os.path.exists(lua) and shutil.which("heaptrack"):
        print("\nallocation counts per function, fnprof against heaptrack, Lua bench.lua 1:")
        sys.stdout.flush()
        subprocess.run([sys.executable, os.path.join(ROOT, "tests", "memory",
                                                     "heaptrack_agree.py"), "--lib", lib, "--",
                        lua, os.path.join(ROOT, "bench", "workloads", "bench.lua"), "1"])
    shutil.rmtree(tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
