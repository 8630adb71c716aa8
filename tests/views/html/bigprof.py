#!/usr/bin/env python3
"""A large synthetic fnprof profile, for load-time tests of the views:

    bigprof.py OUT.prof [--nodes 250000] [--funcs 3000] [--chain 1500] [--seed 1]

Thread 1: main over a random tree of about --nodes call paths through --funcs functions in
30 files, each calling 2-12 others (recursion included, as paths repeat functions).
Thread 2: worker over a chain --chain functions deep, a fifth of the time: a tree as deep
as a Lua interpreter's.
The dict is derived from the tree with tests/e2e/fnptree.py's rules, and the tree appended
as docs/tree-format.md lays it out, so fnprof reads the file like one of its own.
python3 standard library only; deterministic for a seed.
"""
import argparse
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "e2e"))
import fnptree  # noqa: E402  pylint: disable=wrong-import-position


def make_tree(nodes, nfuncs, chain, seed):
    """(keys, [(func, parent index or None, thread, ncalls, own ticks)]) in canonical
    pre-order: siblings of distinct functions by function index, roots by thread."""
    rng = random.Random(seed)
    keys = [("/src/gen/mod%02d.c" % (i % 30), 10 + 7 * i, "fn%d" % i) for i in range(nfuncs)]
    keys += [("/src/gen/main.c", 5, "main"), ("/src/gen/main.c", 50, "worker")]
    main, worker = nfuncs, nfuncs + 1
    # As in a real program, each function calls a few others, so the edges stay about ten
    # times the functions while the paths through them multiply.
    callees = [sorted(rng.sample(range(nfuncs), rng.randint(2, 12))) for _ in range(nfuncs)]
    callees.append(sorted(rng.sample(range(nfuncs), 12)))
    out = []
    # Thread 1: each node spends a budget of descendants on 1-8 children.
    stack = [(main, None, nodes - chain - 2)]
    while stack:
        func, parent, budget = stack.pop()
        index = len(out)
        out.append((func, parent, 0, rng.randint(1, 40), rng.randint(1, 5000)))
        if budget <= 0:
            continue
        k = min(budget, rng.randint(1, 8), len(callees[func]))
        funcs = sorted(rng.sample(callees[func], k))
        rest = budget - k
        cuts = sorted(rng.randint(0, rest) for _ in range(k - 1))
        shares = [b - a for a, b in zip([0] + cuts, cuts + [rest])]
        for f, share in reversed(list(zip(funcs, shares))):
            stack.append((f, index, share))
    # Thread 2: worker -> a chain of distinct functions, a fifth of the whole time.
    each = max(1, sum(own for (_, _, _, _, own) in out) // (4 * max(chain, 1)))
    parent = len(out)
    out.append((worker, None, 1, 1, 10))
    for i in range(chain):
        out.append((i % nfuncs, parent, 1, 1, rng.randint(each // 2, each * 3 // 2)))
        parent = len(out) - 1
    return keys, out


def build(nodes, nfuncs, chain, seed, tick_seconds=1e-9):
    """The bytes of the profile: marshalled dict, then the FNPTREE trailer."""
    keys, raw = make_tree(nodes, nfuncs, chain, seed)
    return encode(keys, raw, ["thread 1", "thread 2"], tick_seconds)


def encode(keys, raw, threads, tick_seconds=1e-9, kind=fnptree.KIND_TIME):
    """A profile file from a tree: raw is [(index into keys, parent index or None, thread,
    ncalls, own ticks)] in canonical pre-order (see make_tree)."""
    ticks = [own for (_, _, _, _, own) in raw]
    for i in range(len(raw) - 1, -1, -1):
        if raw[i][1] is not None:
            ticks[raw[i][1]] += ticks[i]
    rows = [(f, parent, thread, ncalls, ticks[i])
            for i, (f, parent, thread, ncalls, _) in enumerate(raw)]
    tree = fnptree.build(kind, tick_seconds, threads, keys, rows)
    derived = fnptree.derive(tree)
    order = [k for k in keys if k in derived]
    if fnptree.PROCESS_KEY in derived:
        order.append(fnptree.PROCESS_KEY)
    if not order:  # pstats refuses an empty dict: a function that made no call
        order, derived = [keys[0]], {keys[0]: (0, 0, 0.0, 0.0, {})}
    return fnptree.encode({k: derived[k] for k in order}, tree)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--nodes", type=int, default=250000)
    ap.add_argument("--funcs", type=int, default=3000)
    ap.add_argument("--chain", type=int, default=1500)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    data = build(a.nodes, a.funcs, a.chain, a.seed)
    with open(a.out, "wb") as f:
        f.write(data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
# SPDX-License-Identifier: MIT
