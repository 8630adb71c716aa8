#!/usr/bin/env python3
"""fnprof merge adds calling-context trees path by path: the merged file's tree still
derives its dict (tests/e2e/fnptree.py), counts per path add up, two runs' clocks are
reconciled, and an input without a tree (CPython's) or of another unit (count-only) leaves
the output without one, with a note on stderr."""
import os
import subprocess
import sys

import viewlib


def merge(fnprof, out, *inputs):
    return subprocess.run([fnprof, "merge", "-o", out] + list(inputs), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, check=False)


def paths(tree):
    return {tree.path(n) + (n.thread,): n.ncalls for n in tree.nodes}


def main():
    a = viewlib.args()
    v = viewlib.Verdict("merge")
    w = a.workdir
    prof = os.path.join(w, "paths.prof")
    # A second run of the same program: another clock calibration, the same paths.
    second = os.path.join(w, "paths-second.prof")
    env = {k: x for k, x in os.environ.items() if not k.startswith("PROF_")}
    subprocess.run([os.path.join(w, "paths")], env=dict(env, PROF_OUTPUT=second, PROF_QUIET="1"),
                   stdout=subprocess.DEVNULL, check=True)
    out = os.path.join(w, "merged.prof")
    r = merge(a.fnprof, out, prof, second, prof)
    v.check(r.returncode == 0 and not r.stderr, "merge failed: %r" % r.stderr)
    stats, tree = viewlib.fnptree.read(out)
    _, t1 = viewlib.fnptree.read(prof)
    _, t2 = viewlib.fnptree.read(second)
    if v.check(tree is not None, "the merged file has no tree"):
        for p in viewlib.fnptree.check(stats, tree):
            v.check(False, "merged tree vs dict: " + p)
        p1, p2, pm = paths(t1), paths(t2), paths(tree)
        v.check(set(pm) == set(p1) | set(p2), "merged paths are not the union")
        for k, calls in pm.items():
            v.check(calls == 2 * p1.get(k, 0) + p2.get(k, 0), "%r: %d calls" % (k, calls))
    # Inputs that cannot give a tree: CPython's file, a count-only file.
    for other in ("paths-py.prof", "paths-count.prof"):
        out2 = os.path.join(w, "merged-" + other)
        r = merge(a.fnprof, out2, prof, os.path.join(w, other))
        err = r.stderr.decode()
        v.check(r.returncode == 0, "merge with %s failed: %s" % (other, err))
        v.check(err.startswith("fnprof: merge: ") and "without a calling-context tree" in err
                and other in err, "no note naming %s: %r" % (other, err))
        _, t = viewlib.fnptree.read(out2)
        v.check(t is None, "a tree after merging with %s" % other)
    return v.done()


if __name__ == "__main__":
    sys.exit(main())
# SPDX-License-Identifier: MIT
