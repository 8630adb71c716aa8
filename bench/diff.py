#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""fnprof diff on two large profiles (issue 14's goal: 100,000 functions each, under 1 s).

    bench/diff.py --fnprof build-bench/bin/fnprof [--functions 100000] [--runs 5]

Writes two synthetic pstats files shaped as cProfile's dumps (marshal of {(file, line,
name): (pcalls, ncalls, tottime, cumtime, {caller: (pcalls, ncalls, tottime, cumtime)})},
each function with 1-3 callers), the second with most numbers changed, 1% of the
functions gone and 1% new, then times `fnprof diff` (the text table, and --json of every
row) as the median wall time of RUNS runs of the whole command. bench/views.py prints its
row after the views'. python3 standard library only.
"""
import argparse
import marshal
import os
import random
import statistics
import subprocess
import sys
import time


def make_stats(n, seed, changed):
    """n functions in 1,000 files; changed: the second run's version of the same program."""
    rnd = random.Random(seed)
    keys = [(f"/src/module{i % 1000:03d}/file{i % 1000}.c", 10 + i // 1000 * 7, f"func_{i}")
            for i in range(n)]
    if changed:
        gone = n // 100
        keys = keys[gone:] + [(f"/src/new/file{i % 50}.c", 3 + i, f"fresh_{i}")
                              for i in range(gone)]
    stats = {}
    for i, k in enumerate(keys):
        nc = rnd.randint(1, 100000)
        pc = nc if rnd.random() < 0.9 else rnd.randint(1, nc)
        tt = rnd.random() * 0.01
        ct = tt + rnd.random() * 0.1
        callers = {}
        for _ in range(rnd.randint(1, 3)):
            c = keys[rnd.randrange(len(keys))]
            cn = rnd.randint(1, nc)
            callers[c] = (cn, cn, tt * cn / nc, ct * cn / nc)
        stats[k] = (pc, nc, tt, ct, callers)
    return stats


def write(path, stats):
    with open(path, "wb") as f:
        marshal.dump(stats, f)


def time_cmd(cmd, runs):
    times = []
    for _ in range(runs):
        t0 = time.monotonic_ns()
        r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        times.append(time.monotonic_ns() - t0)
        if r.returncode not in (0, 1):
            raise RuntimeError(r.stderr.decode(errors="replace").strip())
    return statistics.median(times) / 1e6


def report(fnprof, functions=100000, runs=5, outdir="/tmp/fnprof-bench-diff"):
    """The benchmark's lines, as text."""
    os.makedirs(outdir, exist_ok=True)
    base = os.path.join(outdir, f"base-{functions}.prof")
    new = os.path.join(outdir, f"new-{functions}.prof")
    write(base, make_stats(functions, 1, False))
    write(new, make_stats(functions, 2, True))
    lines = [f"fnprof diff, two {functions:,}-function profiles "
             f"({os.path.getsize(base) >> 20} MiB each), median of {runs} (wall ms, the "
             "whole command; goal < 1000):"]
    for label, extra in (("table (top 30)", []),
                         ("--json, every row", ["--json"]),
                         ("--fail-on cumtime>+10%,min=5ms", ["--fail-on", "cumtime>+10%,min=5ms"])):
        try:
            ms = f"{time_cmd([fnprof, 'diff', base, new] + extra, runs):.0f}"
        except RuntimeError as e:
            ms = f"failed: {e}"
        lines.append(f"  {label:<34} {ms}")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fnprof", required=True)
    ap.add_argument("--functions", type=int, default=100000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--outdir", default="/tmp/fnprof-bench-diff")
    a = ap.parse_args()
    print(report(a.fnprof, a.functions, a.runs, a.outdir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
