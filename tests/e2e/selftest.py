#!/usr/bin/env python3
"""Tests the e2e harness itself, without fnprof: the mirrors give the numbers worked out by
hand, compare.py accepts a file that matches cProfile and rejects every kind of wrong file.

    selftest.py [--progs-dir DIR] [--workdir DIR]

Exit 0 when every check holds, 1 otherwise. python3 standard library only.
"""

import argparse
import cProfile
import io
import marshal
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree

import compare  # noqa: E402  (after the path is set)
import timing  # noqa: E402

failures = []


def check(ok, what):
    print("%s: %s" % ("ok  " if ok else "FAIL", what))
    if not ok:
        failures.append(what)


def named(stats):
    """{name: (pcalls, ncalls, tottime, cumtime, {caller name: edge})}, '~' keys left out."""
    out = {}
    for key, (pc, nc, tt, ct, callers) in stats.items():
        if key[0] == "~":
            continue
        out[key[2]] = (pc, nc, tt, ct,
                       {c[2]: e for c, e in callers.items() if c[0] != "~"})
    return out


def counts_of(stats):
    """{name: (ncalls, pcalls, {caller: (ncalls, pcalls)})}: the numbers the e2e tests compare."""
    return {n: (nc, pc, {c: e[:2] for c, e in callers.items()})
            for n, (pc, nc, _, _, callers) in named(stats).items()}


def hand_derived_counts(progs):
    """The mirrors give the numbers derived by hand (docs/pstats.md)."""
    stats, out = compare.profile_mirror(os.path.join(progs, "fib.py"))
    check(counts_of(stats) == {
        "main": (1, 1, {}),
        "run_all": (1, 1, {"main": (1, 1)}),
        "fib": (16722, 2, {"fib": (16720, 4), "run_all": (2, 2)}),
    }, "fib.py: fib 16722/2, fib->fib 16720/4, run_all->fib 2/2")
    check(out == "fib(18) = 2584\nfib(18) = 2584\n", "fib.py: prints fib(18) = 2584 twice")

    stats, _ = compare.profile_mirror(os.path.join(progs, "worked.py"))
    check(counts_of(stats) == {
        "main": (1, 1, {}),
        "run_all": (1, 1, {"main": (1, 1)}),
        "fib": (15, 1, {"fib": (14, 2), "run_all": (1, 1)}),
        "a": (2, 1, {"b": (1, 1), "run_all": (1, 1)}),
        "b": (2, 1, {"a": (2, 1)}),
    }, "worked.py: the counts of docs/pstats.md's worked example")

    # Derived by hand: is_even(n) and is_odd(n) for n in 7, 10, 0, 3, 1 are two chains of
    # n + 1 alternating calls: n + 1 calls of each function per n (26), one primitive call per
    # chain it appears in (9), n calls of each edge per n (21) and one primitive call per chain
    # it appears in (7: chains of 2 calls hold one edge, of 1 call none).
    stats, _ = compare.profile_mirror(os.path.join(progs, "mutual.py"))
    got = counts_of(stats)
    check(got.get("is_even") == (26, 9, {"is_odd": (21, 7), "run_all": (5, 5)})
          and got.get("is_odd") == (26, 9, {"is_even": (21, 7), "run_all": (5, 5)}),
          "mutual.py: is_even and is_odd 26/9 each, edges 21/7 each way")


def fake_clock_worked_example():
    """docs/pstats.md's worked example, times included, on a fake clock: 1 tick per fib and
    per a call, 10 per b, 100 for main itself. cProfile must give the doc's table."""
    clock = [0]

    def fib(n):
        clock[0] += 1
        if n < 2:
            return n
        return fib(n - 1) + fib(n - 2)

    def a(n):
        clock[0] += 1
        b(n)

    def b(n):
        clock[0] += 10
        if n > 0:
            a(n - 1)

    def main():
        clock[0] += 100
        fib(5)
        a(1)

    profiler = cProfile.Profile(lambda: clock[0], 1.0)
    profiler.runcall(main)
    profiler.create_stats()
    got = named(profiler.stats)
    want = {
        "fib": (1, 15, 15, 15, {"fib": (14, 2, 14, 14), "main": (1, 1, 1, 15)}),
        "a": (1, 2, 2, 22, {"b": (1, 1, 1, 11), "main": (1, 1, 1, 22)}),
        "b": (1, 2, 20, 21, {"a": (2, 1, 20, 21)}),
        "main": (1, 1, 100, 137, {}),
    }
    check(got == want, "docs/pstats.md worked example: cProfile gives the doc's table, times too")
    if got != want:
        print("  got  %r\n  want %r" % (got, want))


def fake_fnprof(py_stats, c_path, synthetic_root=False):
    """What fnprof should write for c_path: cProfile's stats for the mirror, keys renamed to
    (absolute .c path, line of the name, name). Python's builtins stay: their file is '~',
    like fnprof's synthetic keys, so compare.py must leave them out of the match, and
    keeping them keeps cProfile's time invariants whole."""
    lines = compare.decl_lines(c_path)

    def rename(key):
        return key if key[0] == "~" else (c_path, lines[key[2]], key[2])

    out = {}
    for key, (pc, nc, tt, ct, callers) in py_stats.items():
        out[rename(key)] = (pc, nc, float(tt), float(ct),
                            {rename(c): (e[0], e[1], float(e[2]), float(e[3]))
                             for c, e in callers.items()})
    if synthetic_root:
        root = ("~", 0, "<program>")
        main_key = rename(("", 0, "main"))
        pc, nc, tt, ct, callers = out[main_key]
        out[main_key] = (pc, nc, tt, ct, {root: (nc, pc, tt, ct)})
        out[root] = (1, 1, 0.0, ct, {})
    return out


def write(path, stats, trailing=b""):
    with open(path, "wb") as f:
        f.write(marshal.dumps(stats) + trailing)


def harness_accepts_and_rejects(progs, workdir):
    names = sorted(f[:-2] for f in os.listdir(progs)
                   if f.endswith(".c") and os.path.exists(os.path.join(progs, f[:-2] + ".py")))
    check(len(names) >= 6, "at least 6 mirrored programs: %s" % " ".join(names))
    for name in names:
        c_path = os.path.join(progs, name + ".c")
        py_path = os.path.join(progs, name + ".py")
        py_stats, _ = compare.profile_mirror(py_path)
        py_funcs = set(named(py_stats))
        c_funcs = set(compare.decl_lines(c_path))
        check(py_funcs == c_funcs,
              "%s: the C program defines exactly the mirror's functions (%d)"
              % (name, len(py_funcs)))
        if py_funcs != c_funcs:
            print("  only in C: %s; only in Python: %s"
                  % (sorted(c_funcs - py_funcs), sorted(py_funcs - c_funcs)))
            continue
        for root in (False, True):
            path = os.path.join(workdir, "%s%s.prof" % (name, ".root" if root else ""))
            write(path, fake_fnprof(py_stats, c_path, root))
            sink = io.StringIO()
            ok = compare.compare(c_path, py_path, path, out=sink)
            check(ok, "%s: compare.py accepts cProfile's own numbers under C keys%s"
                  % (name, " and a '~' synthetic root" if root else ""))
            if not ok:
                print(sink.getvalue())

    # Every kind of wrong file, on fib: each must fail.
    c_path = os.path.join(progs, "fib.c")
    py_path = os.path.join(progs, "fib.py")
    py_stats, _ = compare.profile_mirror(py_path)
    good = fake_fnprof(py_stats, c_path)
    lines = compare.decl_lines(c_path)
    fib = (c_path, lines["fib"], "fib")
    run_all = (c_path, lines["run_all"], "run_all")
    main_key = (c_path, lines["main"], "main")

    def mutant(edit):
        stats = {k: (v[0], v[1], v[2], v[3], dict(v[4])) for k, v in good.items()}
        edit(stats)
        return stats

    def set_func(stats, key, **kw):
        v = list(stats[key])
        for i, f in enumerate(("pcalls", "ncalls", "tottime", "cumtime")):
            if f in kw:
                v[i] = kw[f]
        stats[key] = tuple(v)

    def set_edge(stats, callee, caller, value):
        stats[callee][4][caller] = value

    def drop_edge(stats, callee, caller):
        del stats[callee][4][caller]

    def rekey(stats, old, new):
        stats[new] = stats.pop(old)
        for v in stats.values():
            if old in v[4]:
                v[4][new] = v[4].pop(old)

    e = good[fib][4][fib]
    cases = [
        ("fib has 1 primitive call, not 2", lambda s: set_func(s, fib, pcalls=1), b""),
        ("fib has one call too many", lambda s: set_func(s, fib, ncalls=16723), b""),
        ("fib->fib has 3 primitive calls, not 4",
         lambda s: set_edge(s, fib, fib, (e[0], 3, e[2], e[3])), b""),
        ("fib->fib edge missing", lambda s: drop_edge(s, fib, fib), b""),
        ("an extra edge main->fib", lambda s: set_edge(s, fib, main_key, (1, 1, 0.0, 0.0)), b""),
        ("run_all missing (and its edges)",
         lambda s: (s.pop(run_all), drop_edge(s, fib, run_all)), b""),
        ("an extra function", lambda s: s.update({(c_path, 1, "extra"): (1, 1, 0.0, 0.0, {})}),
         b""),
        ("two keys for fib (a clone not merged)",
         lambda s: s.update({(c_path, lines["fib"] + 1, "fib"): (1, 1, 0.0, 0.0, {})}), b""),
        ("a caller that is not a top-level key",
         lambda s: set_edge(s, fib, (c_path, 99, "ghost"), (1, 1, 0.0, 0.0)), b""),
        ("a NaN tottime", lambda s: set_func(s, fib, tottime=float("nan")), b""),
        ("an infinite cumtime", lambda s: set_func(s, main_key, cumtime=float("inf")), b""),
        ("a negative edge tottime",
         lambda s: set_edge(s, fib, fib, (e[0], e[1], -1e-6, e[3])), b""),
        ("an int where a float time belongs", lambda s: set_func(s, fib, tottime=0), b""),
        ("fib's line is the '{' line", lambda s: rekey(s, fib, (c_path, lines["fib"] + 1, "fib")),
         b""),
        ("a relative file name", lambda s: rekey(s, fib, ("fib.c", lines["fib"], "fib")), b""),
        ("bytes after the dict", lambda s: None, b"0"),
        ("a damaged tree after the dict", lambda s: None, b"FNPTREE\n" + b"\x01\x00\x00\x00" * 9),
        ("edge calls exceed the function's",
         lambda s: set_edge(s, run_all, main_key, (2, 1, 0.0, 0.0)), b""),
        ("cumtime below tottime", lambda s: set_func(s, fib, cumtime=0.0, tottime=1.0), b""),
    ]
    for what, edit, trailing in cases:
        path = os.path.join(workdir, "mutant.prof")
        write(path, mutant(edit), trailing)
        sink = io.StringIO()
        ok = compare.compare(c_path, py_path, path, out=sink)
        check(not ok, "compare.py rejects: %s" % what)
        if ok:
            print(sink.getvalue())
    sink = io.StringIO()
    ok = compare.compare(c_path, py_path, os.path.join(workdir, "absent.prof"), out=sink)
    check(not ok, "compare.py rejects: no file")
    with open(os.path.join(workdir, "empty.prof"), "wb") as f:
        f.write(marshal.dumps({}))
    ok = compare.compare(c_path, py_path, os.path.join(workdir, "empty.prof"), out=sink)
    check(not ok, "compare.py rejects: an empty dict")


def spin_log(scale=1.0):
    """The log progs/spin.c prints, made on a fake clock: its busy-waits take scale times
    their nominal length, and each logged event 1 us."""
    clock = [1000.0]
    lines = []

    def event(kind, name):
        lines.append("%s %s %.9f" % (kind, name, clock[0]))
        clock[0] += 1e-6

    def busy(ms):
        clock[0] += ms * scale / 1000.0

    def spin(name, ms):
        event("E", name)
        busy(ms)
        event("X", name)

    def outer():
        event("E", "outer")
        busy(40)
        spin("spin_20", 20)
        spin("spin_30", 30)
        spin("spin_20", 20)
        busy(20)
        event("X", "outer")

    def spin_rec(n):
        event("E", "spin_rec")
        busy(10)
        if n > 0:
            spin_rec(n - 1)
        event("X", "spin_rec")

    event("E", "main")
    event("E", "run_all")
    outer()
    busy(30)
    spin("spin_50", 50)
    outer()
    spin_rec(3)
    spin("spin_50", 50)
    spin("spin_20", 20)
    event("X", "run_all")
    event("X", "main")
    return "\n".join(lines) + "\n"


def timing_accepts_and_rejects(progs, workdir):
    """timing.py passes fnprof numbers equal to the log's and fails wrong ones."""
    c_path = os.path.join(progs, "spin.c")
    lines = compare.decl_lines(c_path)

    def fake(log, edit=None):
        stats = {}
        for key, (pc, nc, tt, ct, callers) in timing.replay(timing.parse_log(log)).items():
            if key[0] == "~":
                continue
            stats[(c_path, lines[key[2]], key[2])] = [
                pc, nc, tt, ct,
                {(c_path, lines[c[2]], c[2]): list(e) for c, e in callers.items()
                 if c[0] != "~"}]
        if edit:
            edit({k[2]: v for k, v in stats.items()})
        path = os.path.join(workdir, "spin.prof")
        write(path, {k: tuple(v[:4]) + ({c: tuple(e) for c, e in v[4].items()},)
                     for k, v in stats.items()})
        return path

    def scale_self(f, factor):
        f[2] *= factor
        for e in f[4].values():
            e[2] *= factor

    def runs(log, path, wall=10.0):
        sink = io.StringIO()
        ok = timing.check_timing(c_path, path, log, wall, sink)
        return ok, sink.getvalue()

    log = spin_log()
    ok, text = runs(log, fake(log))
    check(ok, "timing.py accepts the log's own numbers")
    if not ok:
        print(text)
    cases = [
        ("outer's tottime 10% high", log, lambda f: scale_self(f["outer"], 1.1), 10.0),
        ("spin_rec's cumtime counting the recursion (80 ms)", log,
         lambda f: f["spin_rec"].__setitem__(3, 0.080), 10.0),
        ("spin_rec->spin_rec's edge cumtime counting the recursion", log,
         lambda f: [e.__setitem__(3, 0.060) for c, e in f["spin_rec"][4].items()
                    if c[2] == "spin_rec"], 10.0),
        ("a call of spin_50 missing", log,
         lambda f: (f["spin_50"].__setitem__(1, 1), f["spin_50"].__setitem__(0, 1)), 10.0),
        ("busy-waits 10% shorter than nominal", spin_log(0.9), None, 10.0),
        ("main longer than the process's wall time", log, None, 0.3),
    ]
    for what, case_log, edit, wall in cases:
        ok, text = runs(case_log, fake(case_log, edit), wall)
        check(not ok, "timing.py rejects: %s" % what)
        if ok:
            print(text)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--progs-dir", default=os.path.join(HERE, "progs"))
    parser.add_argument("--workdir", help="scratch directory (default: a temporary one)")
    args = parser.parse_args()
    progs = os.path.abspath(args.progs_dir)
    if args.workdir:
        workdir = os.path.abspath(args.workdir)
        shutil.rmtree(workdir, ignore_errors=True)
        os.makedirs(workdir)
    else:
        workdir = tempfile.mkdtemp(prefix="fnprof-e2e-selftest.")
    hand_derived_counts(progs)
    fake_clock_worked_example()
    harness_accepts_and_rejects(progs, workdir)
    timing_accepts_and_rejects(progs, workdir)
    if not args.workdir:
        shutil.rmtree(workdir, ignore_errors=True)
    print("selftest: %d failures" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
# SPDX-License-Identifier: MIT
