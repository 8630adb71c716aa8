#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""fnprof's memory profile against heaptrack's, allocation counts per function.

    heaptrack_agree.py --lib libfnprof.so [--keep DIR] -- PROG ARGS...

Runs the (instrumented, deterministic) program twice with the same arguments: once with
PROF_MEMORY, once under heaptrack. heaptrack records every allocation with its whole stack
(inlined frames included); fnprof charges it to the innermost instrumented call. So each
heaptrack stack (heaptrack_print's flame-graph output, cost type allocations) is given to
its innermost frame that names a function of fnprof's profile (by name and source file),
and the counts per function must be equal. Stacks with no such frame are allocations
outside the instrumented code (before main, in libraries' constructors, after main): fnprof
counts those after its constructor only, under '<outside recorded calls>', so that row is
compared loosely (printed). Exit 0 agree, 1 differ, 77 heaptrack missing.

python3 standard library only.
"""

import argparse
import collections
import glob
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))
import fnptree  # noqa: E402
from run_case import clean_env  # noqa: E402

OUTSIDE = "<outside recorded calls>"


def fnprof_counts(a, tmp):
    env = clean_env()
    env.update(PROF_MEMORY=os.path.join(tmp, "mem.prof"), PROF_QUIET="1", LD_PRELOAD=a.lib)
    subprocess.run(a.prog, env=env, check=True, stdout=subprocess.DEVNULL, cwd=tmp)
    stats, tree = fnptree.read(os.path.join(tmp, "mem.prof"))
    counts = collections.Counter()
    for n in tree.nodes:
        counts[(n.key[2], os.path.basename(n.key[0]))] += n.mem[0]
    return counts


def frame_key(frame):
    """heaptrack's 'name (file.c)' -> (name, file.c); a bare address -> (address, '')."""
    frame = frame.strip()
    if frame.endswith(")") and " (" in frame:
        name, file = frame[:-1].rsplit(" (", 1)
        return name, os.path.basename(file)
    return frame, ""


def heaptrack_counts(a, tmp, known):
    out = os.path.join(tmp, "ht")
    subprocess.run(["heaptrack", "-o", out] + a.prog, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, cwd=tmp)
    data = glob.glob(out + "*")
    if len(data) != 1:
        raise SystemExit("heaptrack wrote %r" % data)
    stacks = os.path.join(tmp, "stacks.txt")
    subprocess.run(["heaptrack_print", "-f", data[0], "--flamegraph-cost-type", "allocations",
                    "-F", stacks], check=True, stdout=subprocess.DEVNULL)
    counts = collections.Counter()
    # fnprof names C++ functions with their parameters, heaptrack without: match by the
    # name up to '(' too
    short = collections.defaultdict(list)
    for name, file in known:
        short[(name.split("(")[0], file)].append((name, file))
    with open(stacks) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            frames, count = line.rsplit(" ", 1)
            owner = (OUTSIDE, "")
            for fr in reversed([x for x in frames.split(";") if x]):
                k = frame_key(fr)
                if k in known:
                    owner = k
                    break
                hit = short.get((k[0].split("(")[0], k[1]))
                if hit and len(hit) == 1:
                    owner = hit[0]
                    break
            counts[owner] += int(count)
    return counts


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--keep")
    ap.add_argument("prog", nargs="+")
    a = ap.parse_args()
    if not shutil.which("heaptrack") or not shutil.which("heaptrack_print"):
        print("SKIP: heaptrack is not installed (Debian: apt-get install heaptrack)")
        return 77
    a.lib = os.path.abspath(a.lib)
    a.prog[0] = os.path.abspath(a.prog[0])
    with tempfile.TemporaryDirectory(prefix="fnp-heaptrack-") as tmp:
        mine = fnprof_counts(a, tmp)
        known = {k for k in mine if k[0] != OUTSIDE}
        theirs = heaptrack_counts(a, tmp, known)
        if a.keep:
            shutil.copytree(tmp, a.keep, dirs_exist_ok=True)
    outside = (OUTSIDE, "")
    mine_out = sum(v for k, v in mine.items() if k[0] == OUTSIDE)
    diff = []
    total = 0
    for k in sorted(known | set(theirs) - {outside}):
        total += mine.get(k, 0)
        if mine.get(k, 0) != theirs.get(k, 0):
            diff.append((k, mine.get(k, 0), theirs.get(k, 0)))
    print("functions compared: %d, allocations in them: %d (fnprof) %d (heaptrack)" % (
        len(known), total, sum(v for k, v in theirs.items() if k != outside)))
    print("outside instrumented calls: %d (fnprof, from its constructor on), %d (heaptrack, "
          "from the start)" % (mine_out, theirs.get(outside, 0)))
    for k, m, t in diff:
        print("DIFFER %s (%s): fnprof %d, heaptrack %d" % (k[0], k[1], m, t))
    return 1 if diff else 0


if __name__ == "__main__":
    sys.exit(main())
