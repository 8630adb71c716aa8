#!/usr/bin/env python3
"""End to end: programs of known cost (known.c) run under fnprof, raw and with
PROF_COMPENSATE=1, and their compensated times checked three ways.

1. Against an independent reading: the raw profile's tree read by tests/e2e/fnptree.py and
   compensated here, from docs/compensation.md's rule (not from profile/compensate.c), must
   give what `fnprof report --compensate` prints and `fnprof convert --compensate --to
   collapsed` writes, to the nanosecond.
2. The runtime against the command: the raw tree is rebuilt from the runtime's compensated
   file (its metadata says nothing was clamped, so each context's own time is the
   compensated one plus what was taken off), written as a raw profile, and `fnprof report
   --compensate` of it must print what `fnprof report` prints of the runtime's file; the
   runtime's dict must match its tree (fnptree's check), and --compensate on it must note
   that it is compensated already and change nothing.
3. Direction, no timing asserts: every function's compensated times are at most its raw
   ones, a leaf loses exactly its calls times the calibrated in, and a section of 300,000
   tiny calls, whose raw time is several times what the uninstrumented build measures,
   comes closer to that figure compensated than raw.

    check_e2e.py --fnprof BIN --lib-dir DIR --workdir DIR
"""
import argparse
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "e2e"))
import fnptree  # noqa: E402

SKIP = 77
FAILED = []
TINY_CALLS = 300000


def check(cond, what):
    if not cond:
        FAILED.append(what)
        print("FAIL: " + what)


def run(cmd, env=None, ok=(0,)):
    r = subprocess.run([str(c) for c in cmd], env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if r.returncode not in ok:
        sys.exit(f"{' '.join(map(str, cmd))} exited {r.returncode}:\n{r.stderr}")
    return r


def compensate(tree, meta):
    """The rule of docs/compensation.md on a fnptree.Tree, in place: each context's own
    time less ncalls * in less its children's calls * out, in ticks, rounded to the
    nearest; a context of a folded recursion left below 0 (negative back) made up from the
    nodes of its function with positive back; then anything below 0 is 0; ticks rebuilt from
    the subtree's own times, back kept. Returns the number clamped."""
    cin = float(meta["fnprof.hook_in_ns"]) * 1e-9 / tree.tick_seconds
    cout = float(meta["fnprof.hook_out_ns"]) * 1e-9 / tree.tick_seconds
    own = {}
    for n in tree.nodes:
        left = float(n.ticks - n.back - sum(c.ticks for c in n.children)) - (
            float(n.ncalls) * cin + float(sum(c.ncalls for c in n.children)) * cout)
        own[n.index] = math.floor(left + 0.5) if left >= 0 else -math.floor(0.5 - left)
    by_func = {}
    for n in tree.nodes:
        if n.back:
            by_func.setdefault(n.key, []).append(n)
    for nodes in by_func.values():
        need = 0
        for n in nodes:
            if n.back < 0 and own[n.index] < 0:
                need -= own[n.index]
                own[n.index] = 0
        for n in nodes:
            if n.back > 0 and own[n.index] > 0 and need:
                take = min(own[n.index], need)
                own[n.index] -= take
                need -= take
        for n in nodes:
            if need and n.back < 0 and own[n.index] == 0:
                own[n.index] = -need
                need = 0
    clamped = 0
    for n in reversed(tree.nodes):
        if own[n.index] < 0:
            clamped += 1
            own[n.index] = 0
        n.ticks = own[n.index] + n.back + sum(c.ticks for c in n.children)
    return clamped


def report_rows(text):
    """{name: (tottime ns, cumtime ns)} from `fnprof report --unit ns` output."""
    rows = {}
    for line in text.splitlines():
        m = re.match(r"\s*[\d/]+\s+(\d+)\s+\d+\s+(\d+)\s+\d+\s+\S*\((\w+)\)$", line)
        if m:
            rows[m.group(3)] = (int(m.group(1)), int(m.group(2)))
    return rows


def expected_rows(tree):
    """What the report prints for a tree: cProfile's numbers (fnptree.derive) in ns."""
    return {key[2]: (int("%.0f" % (v[2] * 1e9)), int("%.0f" % (v[3] * 1e9)))
            for key, v in fnptree.derive(tree).items()}


def collapsed(text):
    out = {}
    for line in text.splitlines():
        stack, value = line.rsplit(" ", 1)
        out[stack] = int(value)
    return out


def expected_collapsed(tree):
    """One line per context with its own time in ns (fnp_tree_ns: to the nearest), left
    out when 0; one thread: paths start at the outermost function."""
    out = {}
    scale = tree.tick_seconds * 1e9
    for n in tree.nodes:
        ns = int(max(tree.self_value(n), 0) * scale + 0.5)
        if ns:
            out[";".join(k[2] for k in tree.path(n))] = ns
    return out


def meta_of(path):
    return dict(fnptree.read_meta(path))


def check_independent(fnprof, prof, label):
    """1: the command's compensation of prof against this file's."""
    stats, tree = fnptree.read(prof)
    meta = meta_of(prof)
    check("fnprof.hook_in_ns" in meta and "fnprof.hook_out_ns" in meta,
          f"{label}: the calibration is in the metadata")
    check("fnprof.compensated" not in meta, f"{label}: a raw profile says it is not compensated")
    clamped = compensate(tree, meta)
    rep = run([fnprof, "report", prof, "--compensate", "--unit", "ns", "--limit", "0"]).stdout
    check(f"fnprof.clamped: {clamped}" in rep, f"{label}: clamped {clamped} as here")
    got, want = report_rows(rep), expected_rows(tree)
    check(got == want, f"{label}: report --compensate {got} is the tree compensated here {want}")
    col = run([fnprof, "convert", prof, "--compensate", "--to", "collapsed"]).stdout
    check(collapsed(col) == expected_collapsed(tree),
          f"{label}: convert --compensate --to collapsed is the tree compensated here "
          f"({collapsed(col)} against {expected_collapsed(tree)})")
    return stats, tree


def check_runtime_against_command(fnprof, comp, work):
    """2: the runtime's compensated file, and the raw tree it was made from."""
    stats, tree = fnptree.read(comp)
    meta = meta_of(comp)
    check("fnprof.compensated" in meta and meta.get("fnprof.clamped") == "0",
          f"PROF_COMPENSATE=1 says so, nothing clamped: {meta}")
    check(meta.get("clock_reads") == "ordered",
          f"PROF_COMPENSATE=1 read the clock ordered, and says so: {meta}")
    check(not fnptree.check(stats, tree), f"the runtime's dict matches its compensated tree: "
          f"{fnptree.check(stats, tree)}")
    plain = run([fnprof, "report", comp]).stdout
    again = run([fnprof, "report", comp, "--compensate"])
    check(again.stdout == plain, "--compensate on a compensated profile changes nothing")
    check(len(again.stderr.splitlines()) == 1 and "already compensated" in again.stderr,
          f"--compensate on a compensated profile says so in one line: {again.stderr!r}")
    if meta.get("fnprof.clamped") != "0":
        return
    # The raw own time of each context: its compensated own time plus what was taken off
    # (rounded to the nearest, so exactly one integer gives it back).
    cin = float(meta["fnprof.hook_in_ns"]) * 1e-9 / tree.tick_seconds
    cout = float(meta["fnprof.hook_out_ns"]) * 1e-9 / tree.tick_seconds
    own = {}
    for n in tree.nodes:
        cut = float(n.ncalls) * cin + float(sum(c.ncalls for c in n.children)) * cout
        own[n.index] = math.ceil(tree.self_value(n) + cut - 0.5)
    for n in reversed(tree.nodes):
        n.ticks = own[n.index] + n.back + sum(c.ticks for c in n.children)
    raw_meta = [(k, v) for k, v in fnptree.read_meta(comp)
                if k not in ("fnprof.compensated", "fnprof.clamped")]
    derived = fnptree.derive(tree)
    # in the runtime file's order: pstats sorts ties in the dict's order
    raw_stats = {k: derived[k] for k in stats}
    raw = work / "rebuilt.prof"
    raw.write_bytes(fnptree.encode(raw_stats, tree, raw_meta, version=4))
    redone = run([fnprof, "report", raw, "--compensate"]).stdout
    # the first line after the metadata names the file and its date
    strip = lambda text: [line for line in text.splitlines() if not line.endswith(".prof")]
    check(strip(redone) == strip(plain),
          "report --compensate of the raw tree prints what the runtime's compensation wrote:\n"
          + "\n".join(strip(redone)) + "\n---\n" + "\n".join(strip(plain)))


def check_direction(fnprof, raw, section_ns, label):
    """3: compensated at most raw; a leaf loses ncalls * in; the section comes closer."""
    rep_raw = run([fnprof, "report", raw, "--unit", "ns", "--limit", "0"]).stdout
    rep_comp = run([fnprof, "report", raw, "--compensate", "--unit", "ns", "--limit", "0"]).stdout
    r, c = report_rows(rep_raw), report_rows(rep_comp)
    for name in r:
        check(c[name][0] <= r[name][0] and c[name][1] < r[name][1],
              f"{label}: {name} compensated {c[name]} below raw {r[name]}")
    stats, tree = fnptree.read(raw)
    meta = meta_of(raw)
    in_ns = float(meta["fnprof.hook_in_ns"])
    calls = {k[2]: v[1] for k, v in stats.items()}
    leaf = "tiny" if "tiny" in r else "leaf"
    clamped = int(re.search(r"fnprof\.clamped: (\d+)", rep_comp).group(1))
    taken = r[leaf][0] - c[leaf][0]
    if not clamped:
        # one node, no children: exactly its calls' in, to the tick
        tick_ns = tree.tick_seconds * 1e9
        check(abs(taken - calls[leaf] * in_ns) <= 1 + tick_ns,
              f"{label}: {leaf} lost {taken} ns, its {calls[leaf]} calls at {in_ns} ns")
    if section_ns is not None:
        per_raw = r["section"][1] / calls["section"]
        per_comp = c["section"][1] / calls["section"]
        print(f"{label}: section() of {TINY_CALLS:,} tiny calls: uninstrumented "
              f"{section_ns:.0f} ns, raw {per_raw:.0f}, compensated {per_comp:.0f}")
        check(per_raw > 2 * section_ns, f"{label}: the hooks dominate the raw section "
              f"({per_raw:.0f} ns against {section_ns:.0f}): the test measures something")
        check(abs(per_comp - section_ns) < abs(per_raw - section_ns),
              f"{label}: compensated section {per_comp:.0f} ns closer to the uninstrumented "
              f"{section_ns:.0f} than raw {per_raw:.0f}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fnprof", required=True)
    ap.add_argument("--lib-dir", required=True)
    ap.add_argument("--workdir", required=True)
    a = ap.parse_args()
    cc = shutil.which("gcc")
    if not cc:
        print("SKIP: needs gcc")
        return SKIP
    work = Path(a.workdir)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    src = HERE / "known.c"
    inst, plain = work / "known", work / "known-plain"
    run([cc, "-O2", "-g", "-finstrument-functions", src, "-o", inst])
    run([cc, "-O2", "-g", src, "-o", plain])
    lib = Path(a.lib_dir) / "libfnprof.so"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROF_")}
    env.update(LD_PRELOAD=str(lib), PROF_QUIET="1")

    def profiled(name, args, **extra):
        prof = work / f"{name}.prof"
        run([inst, *args], dict(env, PROF_OUTPUT=str(prof), **extra))
        check(prof.exists(), f"{name}: profile written")
        return prof

    work_raw = profiled("work", ["work", "4000"])
    work_comp = profiled("work-comp", ["work", "4000"], PROF_COMPENSATE="1")
    tiny_raw = profiled("tiny", ["tiny", str(TINY_CALLS)])
    out = run([plain, "tiny", str(TINY_CALLS)]).stdout
    section_ns = float(re.search(r"section_ns (\d+)", out).group(1))

    check_independent(a.fnprof, work_raw, "work")
    check_independent(a.fnprof, tiny_raw, "tiny")
    # the recursion is folded: back ticks in the tree, which the rule must carry through
    _, tree = fnptree.read(work_raw)
    check(any(n.back for n in tree.nodes), "the recursion 13 deep was folded (back ticks)")
    check("clock_reads" not in meta_of(work_raw),
          f"a run without PROF_COMPENSATE reads the clock unordered: {meta_of(work_raw)}")
    raw_calls = {k: v[:2] for k, v in fnptree.read(work_raw)[0].items()}
    comp_calls = {k: v[:2] for k, v in fnptree.read(work_comp)[0].items()}
    check(raw_calls == comp_calls, "the ordered run counts every call as the raw one does")
    check_runtime_against_command(a.fnprof, work_comp, work)
    check_direction(a.fnprof, work_raw, None, "work")
    check_direction(a.fnprof, tiny_raw, section_ns, "tiny")
    if FAILED:
        print(f"{len(FAILED)} check(s) failed")
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
# SPDX-License-Identifier: MIT
