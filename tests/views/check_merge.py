#!/usr/bin/env python3
"""fnprof merge adds calling-context trees path by path: the merged file's tree still
derives its dict (tests/e2e/fnptree.py), counts per path add up, two runs' clocks are
reconciled, and an input without a tree (CPython's) leaves the output without one, with a
note on stderr. A timed and a count-only profile are not added (calls are not seconds): one
line, exit 1, no output. Sums saturate at the edges (2^64 - 1 calls, DBL_MAX seconds)."""
import marshal
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
    # An input that cannot give a tree: CPython's file.
    other = "paths-py.prof"
    out2 = os.path.join(w, "merged-" + other)
    r = merge(a.fnprof, out2, prof, os.path.join(w, other))
    err = r.stderr.decode()
    v.check(r.returncode == 0, "merge with %s failed: %s" % (other, err))
    v.check(err.startswith("fnprof: merge: ") and "without a calling-context tree" in err
            and other in err, "no note naming %s: %r" % (other, err))
    _, t = viewlib.fnptree.read(out2)
    v.check(t is None, "a tree after merging with %s" % other)
    check_units(a.fnprof, w, prof, v)
    check_saturation(a.fnprof, w, v)
    return v.done()


def check_units(fnprof, w, prof, v):
    """Timed + count-only, in either order and through an earlier merge: refused."""
    count = os.path.join(w, "paths-count.prof")
    counts2 = os.path.join(w, "merged-counts.prof")
    r = merge(fnprof, counts2, count, count)
    v.check(r.returncode == 0, "count-only + count-only: %r" % r.stderr)
    for inputs in ((prof, count), (count, prof), (counts2, prof),
                   (os.path.join(w, "paths-py.prof"), count)):
        out = os.path.join(w, "merged-mixed.prof")
        if os.path.exists(out):
            os.unlink(out)
        r = merge(fnprof, out, *inputs)
        err = r.stderr.decode()
        names = [os.path.basename(i) for i in inputs]
        v.check(r.returncode == 1, "%s: exit %d, wanted 1" % (names, r.returncode))
        v.check(err.count("\n") == 1 and err.startswith("fnprof: merge: ")
                and "count-only" in err and "timed" in err,
                "%s: not one line saying count-only and timed: %r" % (names, err))
        v.check(not os.path.exists(out), "%s: an output was written" % names)


def check_saturation(fnprof, w, v):
    """Two files whose sums pass 2^64 calls and DBL_MAX seconds: the sum stays at the edge
    (wrapped, 2^64 - 1 + 2 calls would be 1; DBL_MAX + DBL_MAX / 2 would be inf, which no
    pstats reader, fnprof's included, takes back)."""
    top = 2 ** 64 - 1
    dbl_max = sys.float_info.max
    key, caller = ("/src/s.c", 1, "big"), ("/src/s.c", 2, "caller")
    files = []
    for i, (nc, tt) in enumerate(((top, dbl_max), (2, dbl_max / 2))):
        stats = {caller: (1, 1, 0.0, 1.0, {}),
                 key: (nc, nc, tt, tt, {caller: (nc, nc, tt, tt)})}
        path = os.path.join(w, "saturate-%d.prof" % i)
        with open(path, "wb") as f:
            marshal.dump(stats, f)
        files.append(path)
    out = os.path.join(w, "merged-saturated.prof")
    r = merge(fnprof, out, *files)
    if not v.check(r.returncode == 0, "saturating merge: exit %d: %r" % (r.returncode, r.stderr)):
        return
    with open(out, "rb") as f:
        got = marshal.load(f)
    want = (top, top, dbl_max, dbl_max)
    v.check(got[key][:4] == want, "function sum %r, wanted %r" % (got[key][:4], want))
    v.check(got[key][4][caller] == want, "edge sum %r" % (got[key][4][caller],))
    r = subprocess.run([fnprof, "report", out], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       check=False)
    v.check(r.returncode == 0, "fnprof report of the saturated sum: %r" % r.stderr)


if __name__ == "__main__":
    sys.exit(main())
# SPDX-License-Identifier: MIT
