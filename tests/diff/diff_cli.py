#!/usr/bin/env python3
"""fnprof diff on two runs of a program whose hot spot moves (progs/hot.c, progs/hot.py).

    diff_cli.py fixture --lib-dir DIR --workdir DIR        build and profile, once
    diff_cli.py CHECK --fnprof FNPROF --workdir DIR [--data DIR]

The fixture writes into WORKDIR, each for "base" and "new":
  {base,new}.prof        fnprof, timed
  {base,new}-count.prof  fnprof, PROF_TIMER=none: times are calls, so every number is exact
  {base,new}-py.prof     CPython's cProfile on hot.py
The checks read fnprof diff's text and --json and compare with what the program does and
with pstats.Stats of both files (an independent reader). python3 standard library only.
"""
import argparse
import json
import math
import os
import pstats
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# What hot.c does, in calls. Count-only cumtime is the calls under a function, itself
# included: main = 1 + a's 1 + 2000 leaf + b's 1 + 200 leaf + only_base + 3 common + 3 rec.
CALLS = {
    "base": {"leaf": 2200, "a": 1, "b": 1, "only_base": 1, "common": 3, "rec": 3, "main": 1},
    "new": {"leaf": 6100, "a": 1, "b": 1, "only_new": 1, "common": 5, "rec": 4, "main": 1},
}
CUM_COUNT = {
    "base": {"leaf": 2200, "a": 2001, "b": 201, "only_base": 1, "common": 3, "rec": 3,
             "main": 2210},
    "new": {"leaf": 6100, "a": 101, "b": 6001, "only_new": 1, "common": 5, "rec": 4,
            "main": 6113},
}
# By the largest absolute change of cumtime (count-only): b +5800, main +3903, leaf +3900,
# a -1900, common +2, then three changes of 1 in line order.
ORDER_COUNT = ["b", "main", "leaf", "a", "common", "only_base", "only_new", "rec"]

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what, flush=True)


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def fixture(a):
    os.makedirs(a.workdir, exist_ok=True)
    exe = os.path.join(a.workdir, "hot")
    subprocess.run(["gcc", "-O0", "-g", "-finstrument-functions",
                    os.path.join(HERE, "progs", "hot.c"), "-o", exe, "-L" + a.lib_dir,
                    "-Wl,-rpath," + a.lib_dir, "-lfnprof"], check=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROF_")}
    for side in ("base", "new"):
        for suffix, extra in (("", {}), ("-count", {"PROF_TIMER": "none"})):
            out = os.path.join(a.workdir, f"{side}{suffix}.prof")
            subprocess.run([exe, side], env=dict(env, PROF_OUTPUT=out, PROF_QUIET="1", **extra),
                           check=True)
            if not os.path.exists(out):
                sys.exit(f"fixture: {out} was not written")
        subprocess.run([sys.executable, "-m", "cProfile", "-o",
                        os.path.join(a.workdir, f"{side}-py.prof"),
                        os.path.join(HERE, "progs", "hot.py"), side], check=True)
    return 0


class Diff:
    """One fnprof diff run."""

    def __init__(self, fnprof, args):
        self.args = args
        r = run([fnprof, "diff"] + args)
        self.rc, self.out, self.err = r.returncode, r.stdout, r.stderr

    def rows(self):
        """The table's rows: (name, status, columns) in order."""
        lines = self.out.splitlines()
        start = next(i for i, l in enumerate(lines) if l.rstrip().endswith("status function"))
        rows = []
        for line in lines[start + 1:]:
            if not line.strip():
                break
            tok = line.split()
            func = tok[-1]
            status = tok[-2] if tok[-2] in ("new", "gone") else ""
            cols = tok[:-2] if status else tok[:-1]
            rows.append((func[func.index("(") + 1:-1] if "(" in func else func, status, cols))
        return rows

    def breaches(self):
        lines = self.out.splitlines()
        if not any(l.startswith("--fail-on:") for l in lines):
            return []
        i = next(i for i, l in enumerate(lines) if l.startswith("--fail-on:"))
        return [l.strip() for l in lines[i + 1:] if l.startswith("  ")]

    def __str__(self):
        return f"fnprof diff {' '.join(self.args)}: rc {self.rc}\n{self.out}{self.err}"


def prof(a, name):
    return os.path.join(a.workdir, name)


def check_order_and_marks(a):
    """Count-only: the whole order, the marks and the exact counts of every row."""
    d = Diff(a.fnprof, [prof(a, "base-count.prof"), prof(a, "new-count.prof")])
    check(d.rc == 0, f"no rule: exit 0\n{d}")
    rows = d.rows()
    check([r[0] for r in rows] == ORDER_COUNT, f"order {[r[0] for r in rows]}\n{d}")
    for name, status, cols in rows:
        want = "new" if name not in CALLS["base"] else "gone" if name not in CALLS["new"] else ""
        check(status == want, f"{name}: status '{status}', wanted '{want}'")
        nb = CALLS["base"].get(name)
        nn = CALLS["new"].get(name)
        # ncalls columns: base, new, change, %; '-' where the function did not run.
        check(cols[0] == (str(nb) if nb else "-"), f"{name}: base calls {cols[0]}, wanted {nb}")
        check(cols[1] == (str(nn) if nn else "-"), f"{name}: new calls {cols[1]}, wanted {nn}")
        change = (nn or 0) - (nb or 0)
        check(cols[2] == (f"{change:+d}" if change else "0"), f"{name}: change {cols[2]}")
        # cumtime of a count-only run: calls, as whole numbers (columns 8-11).
        cb, cn = CUM_COUNT["base"].get(name), CUM_COUNT["new"].get(name)
        check(cols[8] == (str(cb) if cb else "-") and cols[9] == (str(cn) if cn else "-"),
              f"{name}: cumtime {cols[8]} -> {cols[9]}, wanted {cb} -> {cn}")
    check(d.out.splitlines()[2].startswith("8 functions: 6 in both, 1 new, 1 gone"),
          f"summary line\n{d}")
    check("count-only" in d.out.splitlines()[0], f"base is said to be count-only\n{d}")
    # --limit, --sort
    d = Diff(a.fnprof, [prof(a, "base-count.prof"), prof(a, "new-count.prof"), "--limit", "3"])
    check([r[0] for r in d.rows()] == ORDER_COUNT[:3], f"--limit 3\n{d}")
    check(", 3 shown" in d.out, f"--limit 3 says so\n{d}")
    d = Diff(a.fnprof, [prof(a, "base-count.prof"), prof(a, "new-count.prof"), "-s", "ncalls"])
    # leaf +3900 calls, common +2, then changes of 1 (only_base, only_new, rec) in line order
    check([r[0] for r in d.rows()][:5] == ["leaf", "common", "only_base", "only_new", "rec"],
          f"--sort ncalls\n{d}")
    d = Diff(a.fnprof, [prof(a, "base-count.prof"), prof(a, "new-count.prof"), "--sort", "name"])
    check([r[0] for r in d.rows()] == sorted(ORDER_COUNT), f"--sort name\n{d}")


def check_timed_hot_spot(a):
    """Timed: b moves to the top; a's fall is smaller than main's and leaf's rise."""
    d = Diff(a.fnprof, [prof(a, "base.prof"), prof(a, "new.prof"), "--limit", "0"])
    check(d.rc == 0, f"exit 0\n{d}")
    names = [r[0] for r in d.rows()]
    check(names[:1] == ["b"], f"b first\n{d}")
    check(names.index("a") > max(names.index("main"), names.index("leaf")), f"a after\n{d}")
    byname = {r[0]: r for r in d.rows()}
    check(byname["leaf"][2][:2] == ["2200", "6100"], f"leaf's calls\n{d}")
    check(byname["rec"][2][:2] == ["3", "4"], f"rec's calls\n{d}")
    check(byname["only_new"][1] == "new" and byname["only_base"][1] == "gone", f"marks\n{d}")
    check(float(byname["b"][2][10]) > 0 and float(byname["a"][2][10]) < 0, f"signs\n{d}")
    # --unit: the columns are pstats' numbers in that unit, rounded as printf rounds.
    st = pstats.Stats(prof(a, "new.prof")).stats
    key = next(k for k in st if k[2] == "b")
    for unit, scale, dec in (("s", 1, 6), ("ms", 1e3, 3), ("us", 1e6, 3), ("ns", 1e9, 0)):
        d = Diff(a.fnprof, [prof(a, "base.prof"), prof(a, "new.prof"), "--unit", unit])
        row = next(r for r in d.rows() if r[0] == "b")
        want = f"{st[key][3] * scale:.{dec}f}"
        check(row[2][9] == want, f"--unit {unit}: b's new cumtime {row[2][9]}, wanted {want}")
        check(f"cumtime ({unit})" in d.out, f"--unit {unit} titles the columns")


def check_json_against_pstats(a, base, new, extra=()):
    d = Diff(a.fnprof, [prof(a, base), prof(a, new), "--json"] + list(extra))
    check(d.rc == 0, f"--json: exit 0\n{d}")
    try:
        j = json.loads(d.out)
    except ValueError as e:
        check(False, f"--json is not JSON: {e}\n{d}")
        return
    sb = pstats.Stats(prof(a, base)).stats
    sn = pstats.Stats(prof(a, new)).stats
    keys = set(sb) | set(sn)
    check(j["fnprof_diff"] == 1, "version")
    check(j["counts"] == {"functions": len(keys), "both": len(set(sb) & set(sn)),
                          "new": len(set(sn) - set(sb)), "gone": len(set(sb) - set(sn))},
          f"{base} {new}: counts {j['counts']}")
    check(len(j["functions"]) == len(keys), f"{base} {new}: every function listed")
    check(j["base"]["functions"] == len(sb) and j["new"]["functions"] == len(sn), "sides")
    check(j["base"]["calls"] == sum(v[1] for v in sb.values()), "base calls")
    zero = {"ncalls": 0, "pcalls": 0, "tottime": 0.0, "cumtime": 0.0}
    seen = []
    for row in j["functions"]:
        k = (row["file"], row["line"], row["name"])
        seen.append(k)
        want = "both" if k in sb and k in sn else "new" if k in sn else "gone"
        check(row["status"] == want, f"{k}: status {row['status']}, wanted {want}")
        for side, stats in (("base", sb), ("new", sn)):
            if k in stats:
                cc, nc, tt, ct, _ = stats[k]
                got = row[side]
                check(got == {"ncalls": nc, "pcalls": cc, "tottime": tt, "cumtime": ct},
                      f"{k} {side}: {got} != pstats ({cc}, {nc}, {tt}, {ct})")
            else:
                check(row[side] is None, f"{k}: {side} should be null")
        b, n = row["base"] or zero, row["new"] or zero
        for m in ("ncalls", "pcalls", "tottime", "cumtime"):
            check(row["change"][m] == n[m] - b[m], f"{k}: change of {m}")
        for m in ("ncalls", "tottime", "cumtime"):
            p = row["percent"][m]
            if b[m] == 0:
                check(p == (None if n[m] > 0 else 0), f"{k}: percent of {m} from 0: {p}")
            else:
                check(p is not None and math.isclose(p, (n[m] - b[m]) / b[m] * 100,
                                                     rel_tol=1e-12, abs_tol=1e-12),
                      f"{k}: percent of {m}: {p}")
    # The documented order: largest absolute cumtime change, ties in key order.
    def change(k):
        return (sn[k][3] if k in sn else 0.0) - (sb[k][3] if k in sb else 0.0)
    check(seen == sorted(keys, key=lambda k: (-abs(change(k)), k)), f"{base} {new}: order")
    return j


def check_json(a):
    check_json_against_pstats(a, "base.prof", "new.prof")
    check_json_against_pstats(a, "base-count.prof", "new-count.prof")
    check_json_against_pstats(a, "new-count.prof", "base-count.prof")
    check_json_against_pstats(a, "base-py.prof", "new-py.prof")
    j = check_json_against_pstats(a, "base.prof", "new-py.prof")  # nothing in common
    check(j and j["counts"]["both"] == 0, "hot.c and hot.py share no key")
    d = Diff(a.fnprof, [prof(a, "base.prof"), prof(a, "new.prof"), "--json", "--limit", "2"])
    check(d.rc == 0 and len(json.loads(d.out)["functions"]) == 2, f"--json --limit 2\n{d}")
    d = Diff(a.fnprof, [prof(a, "base-count.prof"), prof(a, "new-count.prof"), "--json",
                        "--fail-on", "ncalls>+50%,min=10"])
    j = json.loads(d.out) if d.out else {}
    check(d.rc == 1, f"--json with a broken rule: exit 1\n{d}")
    check(j.get("breaches") and [(x["name"], x["base"], x["new"], x["rule"])
                                 for x in j["breaches"]]
          == [("leaf", 2200, 6100, "ncalls>+50%,min=10")], f"--json breaches\n{d}")
    check(j.get("rules") == [{"rule": "ncalls>+50%,min=10", "metric": "ncalls", "percent": True,
                              "limit": 10 * 5, "min": 10}], f"--json rules: {j.get('rules')}")


def check_cpython(a):
    d = Diff(a.fnprof, [prof(a, "base-py.prof"), prof(a, "new-py.prof")])
    check(d.rc == 0, f"exit 0\n{d}")
    check(d.rows()[0][0] == "b", f"b first in CPython's profiles\n{d}")
    d = Diff(a.fnprof, [prof(a, "base-py.prof"), prof(a, "new-py.prof"), "--sort", "ncalls"])
    top = d.rows()[0]
    check(top[0] == "leaf" and top[2][:3] == ["2200", "6100", "+3900"], f"leaf's calls\n{d}")
    marks = {r[0]: r[1] for r in d.rows()}
    check(marks.get("only_new") == "new" and marks.get("only_base") == "gone", f"marks\n{d}")
    d = Diff(a.fnprof, [prof(a, "base-py.prof"), prof(a, "new-py.prof"),
                        "--fail-on", "ncalls>+3899"])
    check(d.rc == 1 and len(d.breaches()) == 1 and "(leaf)" in d.breaches()[0],
          f"a rule on CPython's files\n{d}")


def expect(a, status, args, out=None, err=None, nbreaches=None):
    d = Diff(a.fnprof, args)
    ok = d.rc == status
    if out is not None:
        ok = ok and out in d.out
    if err is not None:
        ok = ok and err in d.err
    if nbreaches is not None:
        ok = ok and len(d.breaches()) == nbreaches
    if status == 2:  # trouble: one line on stderr, nothing on stdout
        ok = ok and d.out == "" and len(d.err.splitlines()) == 1 and \
            d.err.startswith("fnprof: diff: ")
    if status == 1:
        ok = ok and d.err.startswith("fnprof: diff: ") and "--fail-on" in d.err
    check(ok, f"expected exit {status}"
              f"{', stdout with ' + repr(out) if out else ''}"
              f"{', stderr with ' + repr(err) if err else ''}"
              f"{', %d breaches' % nbreaches if nbreaches is not None else ''}\n{d}")
    return d


def check_exit_statuses(a):
    cb, cn = prof(a, "base-count.prof"), prof(a, "new-count.prof")
    tb, tn = prof(a, "base.prof"), prof(a, "new.prof")
    expect(a, 0, [cb, cn])
    expect(a, 0, ["--help"], out="usage: fnprof diff")
    # Broken rules: 1, each offending row printed with its rule, function, before and after.
    d = expect(a, 1, [cb, cn, "--fail-on", "cumtime>+5799s"], nbreaches=1)
    check(d.breaches() and d.breaches()[0].startswith("cumtime>+5799s") and
          d.breaches()[0].endswith("(b): cumtime 201 calls -> 6001 calls (+5800 calls, +2885.6%)"),
          f"the breach line\n{d}")
    expect(a, 1, [cb, cn, "--fail-on", "ncalls>+3899"], out="(leaf): ncalls 2200 -> 6100",
           nbreaches=1)
    expect(a, 0, [cb, cn, "--fail-on", "ncalls>+3900"], out="--fail-on: no rule broken")
    # A new function breaks a % rule: only_new (1 call, from none); common +66.7%; leaf.
    d = expect(a, 1, [cb, cn, "--fail-on", "ncalls>+50%"], nbreaches=3)
    check(any("(only_new): ncalls none -> 1 (+1, +inf%), new function" in l
              for l in d.breaches()), f"the new function's breach\n{d}")
    # Every rule is checked, each listed: two rules, two breaches.
    expect(a, 1, [cb, cn, "--fail-on", "ncalls>+3899", "--fail-on", "cumtime>+5799s"],
           nbreaches=2)
    # Reversed, b falls and a rises.
    expect(a, 1, [cn, cb, "--fail-on", "cumtime>+1000s"], out="(a): cumtime 101 calls", nbreaches=1)
    # Timed profiles: b's time grows many times over.
    d = expect(a, 1, [tb, tn, "--fail-on", "cumtime>+100%,min=1ms"])
    check(any(l.split()[1].endswith("(b):") for l in d.breaches()), f"b breaks\n{d}")
    expect(a, 0, [tb, tn, "--fail-on", "cumtime>+1000s"])
    expect(a, 1, [tb, tn, "--fail-on", "tottime>+1ns", "--unit", "us"], out=" us -> ")

    # Trouble: 2.
    for rule in ("cumtime<+10%", "speed>+10%", "cumtime>+10h", "ncalls>+1.5", "ncalls>+5ms",
                 "cumtime>+10%,min=5%", "cumtime>+10%,max=1ms", "cumtime>+", "cumtime>+1e3s"):
        expect(a, 2, [cb, cn, "--fail-on", rule], err=f"bad --fail-on rule '{rule}'")
    expect(a, 2, [cb, "/nonexistent/x.prof"],
           err="/nonexistent/x.prof: No such file or directory")
    expect(a, 2, ["/nonexistent/x.prof", cn, "--fail-on", "ncalls>+1"])
    expect(a, 2, [cb, a.data + "/pstats.dict"], err="not a valid pstats file")
    expect(a, 2, ["/dev/null", cn], err="not a valid pstats file")
    expect(a, 2, [a.workdir, cn], err="Is a directory")
    expect(a, 2, [cb], err="two profiles wanted")
    expect(a, 2, [cb, cn, cn], err="only two profiles")
    expect(a, 2, [cb, cn, "--sort", "speed"], err="--sort wants")
    expect(a, 2, [cb, cn, "--limit", "-1"], err="--limit wants")
    expect(a, 2, [cb, cn, "--unit", "h"], err="--unit wants")
    expect(a, 2, [cb, cn, "--frob"], err="unknown option '--frob'")
    expect(a, 2, [cb, cn, "--fail-on"], err="needs a value")


def check_floors_and_units(a):
    cb, cn = prof(a, "base-count.prof"), prof(a, "new-count.prof")
    # ncalls>+50% is broken by leaf, common and only_new; a floor of 10 calls keeps leaf.
    d = expect(a, 1, [cb, cn, "--fail-on", "ncalls>+50%,min=10"], nbreaches=1)
    check(d.breaches() and "(leaf)" in d.breaches()[0], f"only leaf is above the floor\n{d}")
    expect(a, 0, [cb, cn, "--fail-on", "ncalls>+50%,min=10000"])
    expect(a, 1, [cb, cn, "--fail-on", "ncalls>+50%,min=6100"], nbreaches=1)
    expect(a, 0, [cb, cn, "--fail-on", "ncalls>+50%,min=6101"])
    # Time suffixes, on count-only profiles where 1 call weighs 1 s: b's cumtime +5800.
    for limit, status in (("5799s", 1), ("5800s", 0), ("5800", 0), ("5799", 1),
                          ("5799999ms", 1), ("5800000ms", 0), ("5799999999us", 1),
                          ("5800000000us", 0), ("5799999999999ns", 1), ("5800000000000ns", 0),
                          ("5799.5s", 1), ("5800.5s", 0)):
        expect(a, status, [cb, cn, "--fail-on", f"cumtime>+{limit}"])
    # Floors take units too: b's 6001 "s" is above 6000000ms and below 6002000ms.
    expect(a, 1, [cb, cn, "--fail-on", "cumtime>+5000s,min=6000000ms"])
    expect(a, 0, [cb, cn, "--fail-on", "cumtime>+5000s,min=6002000ms"])


def check_mixed(a):
    """A count-only profile against a timed one: calls only, time rules refused."""
    cb, tn = prof(a, "base-count.prof"), prof(a, "new.prof")
    d = expect(a, 0, [cb, tn], err="only calls are compared")
    check("tottime" not in d.out.splitlines()[4], f"no time columns\n{d}")
    check(d.rows()[0][0] == "leaf", f"sorted by calls\n{d}")
    expect(a, 1, [cb, tn, "--fail-on", "ncalls>+3899"], nbreaches=1)
    expect(a, 2, [cb, tn, "--fail-on", "cumtime>+10%"], err="cannot be compared")
    expect(a, 2, [cb, tn, "--sort", "tottime"], err="cannot compare their times")
    j = json.loads(Diff(a.fnprof, [cb, tn, "--json"]).out)
    check(j["times_compared"] is False and "cumtime" not in j["functions"][0]["change"],
          "--json says times were not compared")


def check_runs_form(a):
    """BASE... -- NEW...: count-only profiles, repeated, make every p-value exact."""
    B, N = prof(a, "base-count.prof"), prof(a, "new-count.prof")
    rule = ["--fail-on", "cumtime>+100%,min=1000"]
    # 5 a side: leaf, a, b and main reach the floor in 5 of the 10 runs: 4 tested. NEW all
    # above BASE: p = 1/C(10, 5) = 1/252, times 4, 3 and 2 after Holm: b, main, leaf break.
    d = expect(a, 1, [B] * 5 + ["--"] + [N] * 5 + rule, nbreaches=3)
    check([l.split()[1].split("(")[1][:-2] for l in d.breaches()] == ["b", "main", "leaf"],
          f"the three breaches, in the table's order\n{d}")
    check("Holm over 4 tested functions; 5 and 5 runs allow p down to 0.004" in d.out,
          f"the test's terms\n{d}")
    check(d.breaches() and d.breaches()[0].endswith("p 0.004, after Holm 0.016 <= 0.05"),
          f"p and Holm's p on the breach line\n{d}")
    check("smallest of its runs" in d.out, f"says what the columns are\n{d}")
    # Options after the --, and a second -- making what follows files.
    d2 = expect(a, 1, [B] * 5 + ["--", N] + rule + [N] * 3 + ["--", N], nbreaches=3)
    check(d2.out == d.out, f"options after the -- read as before it\n{d2}")
    j = json.loads(Diff(a.fnprof, [B] * 5 + ["--"] + [N] * 5 + rule + ["--json"]).out)
    check(j["test"] == {"alpha": 0.05, "tested": 4, "smallest_p": 1 / 252,
                        "too_few_runs": False}, f"--json test: {j['test']}")
    check([(x["name"], x["p"], round(x["holm"], 12)) for x in j["breaches"]] ==
          [("b", 1 / 252, round(4 / 252, 12)), ("main", 1 / 252, round(4 / 252, 12)),
           ("leaf", 1 / 252, round(4 / 252, 12))], f"--json breaches {j['breaches']}")
    check(len(j["base"]) == 5 and j["base"][0]["path"] == B and j["spread"] == [],
          "--json lists each run")
    check(all(f["runs"] == {"base": 5, "new": 5} for f in j["functions"]
              if f["status"] == "both"), "--json counts the runs of each function")
    # One BASE run is NEW's: leaf, b, main tie 6 ways at the top, p = 6/252, 3 tested:
    # the size is there, the evidence not. BASE's runs disagree on calls: said, and the
    # count rule compares NEW's smallest with BASE's largest (no breach).
    d = expect(a, 0, [B] * 4 + [N, "--"] + [N] * 5 + rule + ["--fail-on", "ncalls>+0"],
               err="BASE's runs disagree on the calls of 5 functions (leaf first)")
    check("within the runs' spread" in d.out and "p 0.024, after Holm 0.071 > 0.05" in d.out,
          f"the near misses are listed\n{d}")
    # Too few runs: 3 a side give p >= 1/20, above 0.05/8 after Holm: exit 3, never 0.
    d = expect(a, 3, [B] * 3 + ["--"] + [N] * 3 + ["--fail-on", "cumtime>+10%"],
               err="3 and 3 runs cannot show a change among 8 tested functions at alpha 0.05")
    check("5 runs a side would do" in d.err and "undecided" in d.out, f"the way out\n{d}")
    expect(a, 3, [B] * 5 + ["--"] + [N] * 5 + rule + ["--alpha", "0.01"])
    expect(a, 1, [B] * 5 + ["--"] + [N] * 5 + rule + ["--alpha", "0.02"], nbreaches=3)
    # Nothing reaches the floor: nothing tested, nothing to decide.
    d = expect(a, 0, [B] * 3 + ["--"] + [N] * 3 + ["--fail-on", "cumtime>+10%,min=100000"])
    check("Holm over 0 tested functions" in d.out, f"nothing tested\n{d}")
    # --runs-needed: the fewest runs a side for k tested functions.
    d = expect(a, 0, ["--runs-needed"])
    rows = {int(l.split()[0]): int(l.split()[1]) for l in d.out.splitlines()
            if l.split() and l.split()[0].isdigit()}
    check(rows.get(1) == 3 and rows.get(10) == 5 and rows.get(100) == 7 and rows.get(1000) == 9,
          f"--runs-needed {rows}\n{d}")
    d = expect(a, 0, ["--runs-needed", "--alpha", "0.01"])
    check(" 1      5 " in d.out, f"--runs-needed --alpha 0.01\n{d}")
    # Trouble.
    expect(a, 2, [B, "--"], err="NEW's profiles wanted after the --")
    expect(a, 2, ["--", N], err="BASE's profiles wanted before the --")
    expect(a, 2, ["--runs-needed", B], err="--runs-needed takes no profiles")
    for alpha in ("0", "1", "1.5", "x", "1e-3", "-0.1", "0.0.1", ""):
        expect(a, 2, [B, "--", N, "--alpha", alpha], err="--alpha wants a fraction")
    expect(a, 2, [B, prof(a, "base.prof"), "--", N], err="the runs of a side must be timed alike")
    # The two-file form ignores --alpha, and says so.
    expect(a, 0, [B, N, "--alpha", "0.01"], err="--alpha applies to several runs a side")


CHECKS = {
    "order_and_marks": check_order_and_marks,
    "timed_hot_spot": check_timed_hot_spot,
    "json_matches_pstats": check_json,
    "cpython_profiles": check_cpython,
    "exit_statuses": check_exit_statuses,
    "floors_and_units": check_floors_and_units,
    "count_only_against_timed": check_mixed,
    "runs_form": check_runs_form,
}


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("check", choices=["fixture"] + sorted(CHECKS))
    ap.add_argument("--fnprof")
    ap.add_argument("--lib-dir")
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--data", default=os.path.join(HERE, "..", "data"))
    a = ap.parse_args()
    if a.check == "fixture":
        return fixture(a)
    CHECKS[a.check](a)
    if failures:
        print(f"{len(failures)} failure(s)")
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
# SPDX-License-Identifier: MIT
