#!/usr/bin/env python3
"""fnprof convert --to collapsed, against the tree as tests/e2e/fnptree.py reads it: one
line per calling context with a non-zero own value, frames from the thread (when several)
down, value = own time in integer ns (count-only: calls). Also: c calls d only under a, a
CPython file gets rebuilt paths and a note, and the checker rejects a wrong file."""
import os
import sys

import viewlib


def parse(text):
    stacks = {}
    for line in text.splitlines():
        stack, _, value = line.rpartition(" ")
        if not stack or not value.isdigit():
            raise ValueError("bad line %r" % line)
        if stack in stacks:
            raise ValueError("stack twice: %r" % stack)
        stacks[stack] = int(value)
    return stacks


def expected(prof):
    stats, tree = viewlib.fnptree.read(prof)
    names = viewlib.labels(stats)
    want = {}
    for node in tree.nodes:
        value = viewlib.ns(tree, tree.self_value(node))
        if not value:
            continue
        frames = [names[k] for k in tree.path(node)]
        if len(tree.threads) > 1:
            frames.insert(0, tree.threads[node.thread])
        want[";".join(frames)] = value
    return tree, want


def compare(v, got, want, tree):
    v.check(set(got) == set(want), "stacks differ: missing %s, extra %s"
            % (sorted(set(want) - set(got))[:5], sorted(set(got) - set(want))[:5]))
    for stack, value in want.items():
        if stack in got:
            # Count-only values are exact; times within the rounding of one conversion.
            slack = 0 if tree.kind == viewlib.fnptree.KIND_CALLS else 1
            v.check(abs(got[stack] - value) <= slack, "%s: %d, the tree says %d"
                    % (stack, got[stack], value))


def main():
    a = viewlib.args()
    v = viewlib.Verdict("collapsed")
    for name in ("paths.prof", "paths-count.prof"):
        prof = os.path.join(a.workdir, name)
        got = parse(viewlib.convert(a.fnprof, prof, "collapsed").stdout.decode())
        tree, want = expected(prof)
        compare(v, got, want, tree)
        # The tree's shape, independent of the reader: d only under a;c, never b;c.
        v.check(any(s.endswith(";a;c;d;burn") for s in got), name + ": no a;c;d")
        v.check(not any(";b;c;d" in s for s in got), name + ": d under b;c")
        v.check(all(s.startswith(("thread 1;main", "thread 2;worker")) for s in got),
                name + ": a stack not rooted at its thread")
        if tree.kind == viewlib.fnptree.KIND_CALLS:
            for node in tree.nodes:  # count-only: a context's own value is its calls
                v.check(tree.self_value(node) == node.ncalls, "count-only self != calls")
        # The checker catches a wrong file: one value off, one stack moved under b.
        bad = dict(got)
        k = next(iter(bad))
        bad[k] += 5
        probe = viewlib.Verdict("self-check")
        compare(probe, bad, want, tree)
        v.check(probe.problems, "the checker accepts a wrong value")
        bad = {s.replace(";a;c;d", ";b;c;d"): x for s, x in got.items()}
        probe = viewlib.Verdict("self-check")
        compare(probe, bad, want, tree)
        v.check(probe.problems, "the checker accepts d under b")
    # CPython's file has no tree: paths rebuilt from edges, and said once on stderr.
    r = viewlib.convert(a.fnprof, os.path.join(a.workdir, "paths-py.prof"), "collapsed")
    err = r.stderr.decode()
    v.check(err.count("rebuilt from caller edges") == 1 and err.startswith("fnprof: convert: "),
            "no single note on the rebuilt paths: %r" % err)
    try:
        rebuilt = parse(r.stdout.decode())
        v.check(any(s.endswith("main;a;c;d") for s in rebuilt), "rebuilt: no main;a;c;d")
    except ValueError as e:
        v.check(False, "rebuilt output: %s" % e)
    # -o writes the same bytes as standard output.
    out = os.path.join(a.workdir, "paths.collapsed")
    viewlib.convert(a.fnprof, os.path.join(a.workdir, "paths.prof"), "collapsed", out=out)
    with open(out, "rb") as f:
        v.check(f.read() == viewlib.convert(a.fnprof, os.path.join(a.workdir, "paths.prof"),
                                             "collapsed").stdout, "-o differs from stdout")
    return v.done()


if __name__ == "__main__":
    sys.exit(main())
# SPDX-License-Identifier: MIT
