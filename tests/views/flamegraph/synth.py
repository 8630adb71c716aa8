"""Profiles with a calling-context tree made up for the views' edge cases (names with any
byte, an empty tree, one name in two files, deep recursion, a large tree), written as
fnprof writes them: cProfile's dict derived from the tree (tests/e2e/fnptree.py's derive),
then the FNPTREE trailer of docs/tree-format.md. Used by check_speedscope.py and
check_flamegraph.py. python3 standard library only.
"""
import random

import viewlib

fnptree = viewlib.fnptree


def write(path, keys, nodes, threads=("thread 1",), kind=fnptree.KIND_TIME, tick=1e-9):
    """keys: [(file, line, name)]; nodes: [(func, parent index or None, thread, ncalls,
    ticks)] in pre-order, siblings sorted by func (the canonical form). Every key is in the
    dict, in the order given, whether the tree uses it or not."""
    tree = fnptree.build(kind, tick, threads, keys, nodes)
    derived = fnptree.derive(tree)
    stats = {}
    for k in keys + ([fnptree.PROCESS_KEY] if fnptree.PROCESS_KEY in derived else []):
        pc, nc, tt, ct, callers = derived.get(k, (0, 0, 0.0, 0.0, {}))
        stats[k] = (pc, nc, tt, ct, callers)
    if not stats:
        stats[("x.c", 1, "unused")] = (0, 0, 0.0, 0.0, {})
    with open(path, "wb") as f:
        f.write(fnptree.encode(stats, tree))


def odd_names(path):
    """Names with what formats reserve or cannot hold (quotes, <, &, ;, ]]>, tab,
    newline; a lone surrogate, which marshal writes as invalid UTF-8), multibyte
    characters, a long name, and one name in two files."""
    keys = [("/src/a.c", 10, 'main'),
            ("/src/a.c", 20, 'op<"&\'>;x\ty\nz'),
            ("/src/a.c", 30, "init\udcff"),
            ("/src/b.c", 40, "init"),
            ("/src/b.c", 41, "init"),
            ("/src/\u00e9t\u00e9.c", 50, "\u00fcber_\u4e2d\u6587_\U0001f600" * 8),
            ("~", 0, "<built-in method ]]> x>")]
    nodes = [(0, None, 0, 1, 1000000),
             (1, 0, 0, 2, 300000),
             (6, 1, 0, 1, 100000),
             (2, 0, 0, 3, 200000),
             (3, 0, 0, 4, 150000),
             (4, 0, 0, 4, 100000),
             (5, 0, 0, 5, 240000)]
    write(path, keys, nodes)


def long_threads(path):
    """Thread names longer than every function label (the frame text must still fit its
    buffer), holding bytes no XML or JSON may carry as they are: a lead byte past F4, an
    overlong form, U+FFFF."""
    keys = [("/src/a.c", 1, "m"), ("/src/a.c", 2, "f")]
    nodes = [(0, None, 0, 1, 1000), (1, 0, 0, 1, 500), (0, None, 1, 1, 7000),
             (1, 2, 1, 1, 3000)]
    names = (b"t" * 300 + b"\xf8\x80\x80", b"thread \xc0\xaf \xef\xbf\xbf" + b"x" * 200)
    write(path, keys, nodes, threads=names)


def empty(path):
    write(path, [("/src/a.c", 1, "main")], [], threads=())


def deep(path, depth=5000):
    """A chain depth long: main -> f -> f -> ... (one node per level, no folding)."""
    keys = [("/src/d.c", 1, "main"), ("/src/d.c", 2, "f")]
    nodes = [(0, None, 0, 1, depth * 10 + 10)]
    for i in range(1, depth + 1):
        nodes.append((1, i - 1, 0, 1, (depth - i) * 10 + 10))
    write(path, keys, nodes)


def large(path, n=200000, nfuncs=5000, seed=7):
    """A random tree of n nodes over nfuncs functions in 4 threads, in canonical form."""
    rnd = random.Random(seed)
    keys = [("/src/f%d.c" % (i % 50), i, "fn_%d" % i) for i in range(nfuncs)]
    # children lists first, then a pre-order walk with siblings by func
    kids = {None: []}
    funcs_of = {}
    for i in range(n):
        parent = None if i < 40 or rnd.random() < 0.0005 else rnd.randrange(max(0, i - 2000), i)
        if parent is None:
            key = ("root", rnd.randrange(4))
        else:
            key = parent
        used = funcs_of.setdefault(key, set())
        f = rnd.randrange(nfuncs)
        if f in used:
            continue
        used.add(f)
        kids.setdefault(key, []).append((f, i))
        kids.setdefault(i, [])
    nodes = []
    order = []
    for t in range(4):
        for f, i in sorted(kids.get(("root", t), [])):
            order.append((i, None, t))
    ticks = {}
    # pre-order, iteratively; ticks: own random + children's
    out = []
    stack = [(i, None, t) for i, _, t in reversed(order)]
    while stack:
        i, parent, t = stack.pop()
        idx = len(out)
        out.append([i, parent, t])
        for f, c in sorted(kids[i], reverse=True):
            stack.append((c, idx, t))
    func_of = {}
    for key, lst in kids.items():
        for f, i in lst:
            func_of[i] = f
    own = [rnd.randrange(0, 50000) for _ in out]
    incl = list(own)
    for k in range(len(out) - 1, -1, -1):
        if out[k][1] is not None:
            incl[out[k][1]] += incl[k]
    nodes = [(func_of[i], parent, t, rnd.randrange(1, 100), incl[k])
             for k, (i, parent, t) in enumerate(out)]
    write(path, keys, nodes, threads=("thread 1", "thread 2", "thread 3", "thread 4"))
# SPDX-License-Identifier: MIT
