#!/usr/bin/env python3
"""PROF_FILTER and fnprof suggest-filter end to end (docs/filter.md).

Builds tests/filter/filtered.c with one compiler, runs it unfiltered and filtered, and checks
the filtered profile against the unfiltered run's calling-context tree with the excluded
functions spliced out (their children hung from their parents), counted by fnptree's own
derivation of cProfile's numbers: every function's calls and primitive calls and every
edge's must be equal. Then count-only mode, the trace, broken and missing filter files, and
suggest-filter's file fed back in.
"""
import argparse
import os
import pstats
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "e2e"))
import fnptree  # noqa: E402

EXCLUDED = {"tiny", "mid", "helper", "lib_entry"}


def fail(msg):
    sys.exit(f"FAIL: {msg}")


def build(args, work):
    prog = work / "filtered"
    cmd = [args.cc, "-g", args.opt, "-finstrument-functions", "-I", str(HERE),
           str(HERE / "filtered.c"), str(HERE / "filtered_lib.c"), "-o", str(prog),
           f"-L{args.lib_dir}", f"-Wl,-rpath,{args.lib_dir}", "-lfnprof"]
    subprocess.run(cmd, check=True)
    return prog


def run(prog, work, name, **env):
    out = work / f"{name}.prof"
    out.unlink(missing_ok=True)
    e = dict(os.environ, PROF_OUTPUT=str(out), PROF_QUIET="1")
    e.pop("PROF_FILTER", None)
    e.update({k: str(v) for k, v in env.items()})
    r = subprocess.run([str(prog)], env=e, capture_output=True, text=True)
    if r.returncode != 0 or not r.stdout.startswith("filtered: "):
        fail(f"{name}: exit {r.returncode}, stdout {r.stdout!r}, stderr {r.stderr!r}")
    return out, r.stderr, r.stdout


def names(stats):
    return {k[2] for k in stats}


counts = fnptree.name_counts


def spliced(tree, excluded):
    """The tree with every node of an excluded function replaced by its children."""
    def keep(children, parent):
        out = []
        for c in children:
            if c.key[2] in excluded:
                out.extend(keep(c.children, parent))
            else:
                c.children = keep(c.children, c)
                c.parent = parent
                out.append(c)
        return out
    roots = keep(tree.roots(), None)
    nodes = []
    stack = list(reversed(roots))
    while stack:
        n = stack.pop()
        nodes.append(n)
        stack.extend(reversed(n.children))
    return fnptree.Tree(tree.kind, tree.tick_seconds, tree.threads, nodes, tree.meta)


def expect_equal(got, want, what):
    if got != want:
        lines = [f"{what}: counts differ"]
        for k in sorted(set(got) | set(want)):
            if got.get(k) != want.get(k):
                lines.append(f"  {k}: got {got.get(k)}, expected {want.get(k)}")
        fail("\n".join(lines))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cc", required=True)
    ap.add_argument("--opt", default="-O2")
    ap.add_argument("--lib-dir", required=True)
    ap.add_argument("--fnprof", required=True)
    ap.add_argument("--workdir", required=True)
    args = ap.parse_args()
    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    prog = build(args, work)
    filt = HERE / "filter.txt"

    plain, _, out_plain = run(prog, work, "plain")
    stats, tree = fnptree.read(str(plain))
    if not EXCLUDED <= names(stats):
        fail(f"unfiltered run lacks {EXCLUDED - names(stats)}")
    want = counts(fnptree.derive(spliced(tree, EXCLUDED)))

    # Filtered, timed: no excluded function, every other count as the spliced tree says.
    got_path, err, out = run(prog, work, "filtered", PROF_FILTER=filt)
    if out != out_plain:
        fail("the program's output changed under the filter")
    if err:
        fail(f"filtered run wrote to stderr: {err!r}")
    got = pstats.Stats(str(got_path)).stats
    if names(got) & EXCLUDED:
        fail(f"excluded functions in the profile: {names(got) & EXCLUDED}")
    expect_equal(counts(got), want, "filtered")
    # the recursion through helper became direct: rec calls rec, 3 of its 4 calls recursive
    # (the edge rec->rec is primitive once per descent, when no rec->rec call is open yet)
    rec = counts(got)["rec"]
    if rec[:2] != (5, 20) or rec[2].get("rec") != (15, 5) or rec[2].get("work") != (5, 5):
        fail(f"rec's numbers: {rec}")
    # leaf's callers: work (its own call), mid's ten loops through work, lib_entry's through main
    leaf = counts(got)["leaf"][2]
    if leaf.get("work") != (46, 46) or leaf.get("main") != (5, 5):
        fail(f"leaf's callers: {leaf}")
    # the profile's own check: the tree reproduces the dict
    fnptree.check(*fnptree.read(str(got_path)))
    meta = dict(fnptree.read_meta(str(got_path)))
    if meta.get("filter") != str(filt) or not re.fullmatch(r"4 of \d+ functions",
                                                            meta.get("filter excluded", "")):
        fail(f"metadata: {meta}")

    # Count-only: the same counts.
    co, _, _ = run(prog, work, "count", PROF_FILTER=filt, PROF_TIMER="none")
    expect_equal(counts(pstats.Stats(str(co)).stats), want, "count-only")

    # The trace: excluded calls have no event; the checker matches events to ncalls.
    trace = work / "filtered.json"
    tp, _, _ = run(prog, work, "traced", PROF_FILTER=filt, PROF_TRACE=trace)
    subprocess.run([sys.executable, "-B", str(HERE.parent / "trace" / "check_trace.py"),
                    str(trace), str(tp)], check=True)
    if any(f'"name":"{n}"' in trace.read_text() for n in EXCLUDED):
        fail("an excluded function has trace events")

    # A broken filter and a missing one: one line each, and everything recorded.
    bad = work / "bad.txt"
    bad.write_text("SCOREP_REGION_NAMES_BEGIN\n  EXCLUDE tiny\nSCOREP_FILE_NAMES_END\n")
    for path, why in ((bad, f"{bad}:3: SCOREP_FILE_NAMES_END without its BEGIN"),
                      (work / "missing.txt", f"{work / 'missing.txt'}: No such file or directory")):
        p, err, _ = run(prog, work, "unfiltered", PROF_FILTER=path)
        if err != f"fnprof: PROF_FILTER: {why}; recording every function\n":
            fail(f"stderr for {path.name}: {err!r}")
        expect_equal(counts(pstats.Stats(str(p)).stats), counts(stats), path.name)

    # suggest-filter: tiny's 1,025 calls are the only ones >= 1000; fed back, only tiny goes.
    fnprof = args.fnprof
    r = subprocess.run([fnprof, "suggest-filter", "--min-calls", "1000", "--max-per-call", "1s",
                        str(plain)], capture_output=True, text=True)
    if r.returncode != 0 or r.stderr:
        fail(f"suggest-filter: {r.returncode} {r.stderr!r}")
    rules = [ln.strip() for ln in r.stdout.splitlines() if ln.strip().startswith("EXCLUDE")]
    if rules != ["EXCLUDE tiny"]:
        fail(f"suggested rules: {rules}\n{r.stdout}")
    if "1025 calls" not in r.stdout:
        fail(f"suggest-filter's comment lacks tiny's 1025 calls:\n{r.stdout}")
    suggested = work / "suggested.txt"
    r = subprocess.run([fnprof, "suggest-filter", "--min-calls", "1000", "-o", str(suggested),
                        str(plain)], capture_output=True, text=True)
    if r.returncode != 0 or r.stdout or not suggested.exists():
        fail(f"suggest-filter -o: {r.returncode} {r.stdout!r} {r.stderr!r}")
    sp, _, _ = run(prog, work, "suggested", PROF_FILTER=suggested)
    expect_equal(counts(pstats.Stats(str(sp)).stats),
                 counts(fnptree.derive(spliced(fnptree.read(str(plain))[1], {"tiny"}))),
                 "suggested")
    # nothing is that fast: no rule
    r = subprocess.run([fnprof, "suggest-filter", "--max-per-call", "0.001ns", "--min-calls",
                        "1", str(plain)], capture_output=True, text=True)
    if r.returncode != 0 or "EXCLUDE" in r.stdout:
        fail(f"suggest-filter with a 0.001ns bound: {r.stdout}")
    for bad_args in (["--max-per-call", "2 parsecs", str(plain)], ["--min-calls", "-3", str(plain)],
                     [], [str(plain), str(plain)]):
        r = subprocess.run([fnprof, "suggest-filter", *bad_args], capture_output=True, text=True)
        if r.returncode != 2 or not r.stderr.startswith("fnprof: suggest-filter: "):
            fail(f"suggest-filter {bad_args}: exit {r.returncode}, {r.stderr!r}")
    r = subprocess.run([fnprof, "suggest-filter", str(work / "nope.prof")], capture_output=True,
                       text=True)
    if r.returncode != 1 or r.stderr.count("\n") != 1:
        fail(f"suggest-filter on a missing file: exit {r.returncode}, {r.stderr!r}")
    print("filter test passed")


if __name__ == "__main__":
    main()
# SPDX-License-Identifier: MIT
