#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""fnprof ranks and fnprof merge over the 64 rank files of one MPI-style run (goal < 1 s).

    bench/ranks.py --fnprof build-bench/bin/fnprof --lib build-bench/lib \
        --program bench/.cache/build/sqlite/inst/sqlite [--ranks 64] [--runs 5]

Runs the instrumented SQLite speedtest1 once per rank, as a launcher would start it: each
process with OMPI_COMM_WORLD_RANK / OMPI_COMM_WORLD_SIZE set and the same PROF_OUTPUT, so
that the runtime names the files OUT.rank<r> itself. Then times the whole `fnprof ranks`
(text, and --json of every row) and `fnprof merge` over the 64 files as the median wall
time of RUNS runs, and checks that the merged calls equal the sum the ranks table gives.
bench/views.py prints its rows after the views'. python3 standard library only.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time


def make_ranks(program, lib, outdir, ranks, size):
    os.makedirs(outdir, exist_ok=True)
    out = os.path.join(outdir, "sqlite.prof")
    files = [f"{out}.rank{r}" for r in range(ranks)]
    if all(os.path.exists(f) for f in files):
        return files
    for r in range(ranks):
        env = dict(os.environ, OMPI_COMM_WORLD_RANK=str(r), OMPI_COMM_WORLD_SIZE=str(ranks),
                   PROF_OUTPUT=out, PROF_QUIET="1", LD_PRELOAD=os.path.join(lib, "libfnprof.so"))
        subprocess.run([program, "--memdb", "--size", str(size)], env=env, check=True,
                       stdout=subprocess.DEVNULL)
    missing = [f for f in files if not os.path.exists(f)]
    if missing:
        sys.exit(f"bench/ranks.py: no rank file {missing[0]}")
    return files


def timed(argv, runs):
    walls = []
    for _ in range(runs):
        t0 = time.monotonic()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
        walls.append(time.monotonic() - t0)
    return statistics.median(walls)


def report(fnprof, lib, program, ranks=64, runs=5, outdir="/tmp/fnprof-bench-ranks", size=5):
    files = make_ranks(program, lib, outdir, ranks, size)
    merged = os.path.join(outdir, "merged.prof")
    rows = [("fnprof ranks (text)", timed([fnprof, "ranks", *files], runs)),
            ("fnprof ranks --json (all rows)", timed([fnprof, "ranks", "--json", *files], runs)),
            ("fnprof merge", timed([fnprof, "merge", "-o", merged, *files], runs))]
    table = json.loads(subprocess.run([fnprof, "ranks", "--json", *files], check=True,
                                      capture_output=True, text=True).stdout)
    nfuncs = len(table["functions"])
    # The merge's calls, read back through the ranks table of the one merged file.
    one = json.loads(subprocess.run([fnprof, "ranks", "--json", merged], check=True,
                                    capture_output=True, text=True).stdout)
    want = {(f["file"], f["line"], f["name"]): f["calls"] for f in table["functions"]}
    got = {(f["file"], f["line"], f["name"]): f["calls"] for f in one["functions"]}
    check = "merged calls = the ranks' sums" if got == want else "MERGED CALLS DIFFER"
    mb = sum(os.path.getsize(f) for f in files) / 1e6
    lines = [f"fnprof ranks and merge over {ranks} rank files of SQLite speedtest1 "
             f"(--size {size}; {nfuncs} functions, {mb:.1f} MB), median of {runs} "
             f"(wall s, the whole command; goal < 1 s): {check}"]
    for name, wall in rows:
        lines.append(f"  {name:32s} {wall:7.3f} s  {'goal met' if wall < 1 else 'GOAL MISSED'}")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fnprof", required=True)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--program", required=True)
    ap.add_argument("--ranks", type=int, default=64)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--size", type=int, default=5)
    ap.add_argument("--outdir", default="/tmp/fnprof-bench-ranks")
    a = ap.parse_args()
    print(report(a.fnprof, a.lib, a.program, a.ranks, a.runs, a.outdir, a.size))
    return 0


if __name__ == "__main__":
    sys.exit(main())
