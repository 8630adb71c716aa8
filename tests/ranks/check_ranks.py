#!/usr/bin/env python3
"""fnprof ranks against figures computed here, from profiles written here.

Each rank's profile is a pstats dict with fnprof's trailer holding only metadata (the
"rank" key), written with tests/e2e/fnptree.py. The expected table is computed in Python
from the same dicts: the sums per rank (a rank's files added), min / mean / max with the
rank of the max, imbalance and cost; then fnprof ranks --json and the text are compared
with it. Usage: check_ranks.py FNPROF WORKDIR
"""
import json
import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import fnptree  # noqa: E402  pylint: disable=wrong-import-position

FNPROF, WORK = sys.argv[1], sys.argv[2]
os.makedirs(WORK, exist_ok=True)
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def write(name, stats, rank=None, size=None):
    path = os.path.join(WORK, name)
    meta = [("program", "/bin/app")] + ([("rank", str(rank))] if rank is not None else [])
    meta += [("size", str(size))] if size is not None else []
    with open(path, "wb") as f:
        f.write(fnptree.encode(stats, None, meta=meta))
    return path


def run(*args, code=0):
    p = subprocess.run([FNPROF, "ranks", *args], capture_output=True, text=True, check=False)
    if p.returncode != code:
        fail(f"fnprof ranks {' '.join(args)}: exit {p.returncode}, wanted {code}: {p.stderr}")
    return p


def stat(calls, tt, ct):
    return (calls, calls, tt, ct, {})


MAIN = ("app.c", 10, "main")
WORK_FN = ("app.c", 20, "work")
COMM = ("app.c", 30, "exchange")
ONLY0 = ("app.c", 40, "io_on_root")
IDLE = ("app.c", 50, "never_timed")


def rank_stats(r):
    """Rank r works (r + 1) units: work's time grows with the rank, exchange's shrinks (the
    early ranks wait for the late one)."""
    s = {
        MAIN: stat(1, 0.001, 10.0),
        WORK_FN: stat(100 * (r + 1), 1.5 * (r + 1), 1.5 * (r + 1)),
        COMM: stat(7, 0.25 * (3 - r), 0.25 * (3 - r) + 0.5),
        IDLE: stat(3, 0.0, 0.0),
    }
    if r == 0:
        s[ONLY0] = stat(2, 0.75, 0.75)
    return s


def expected(per_rank):
    """per_rank: {rank: [stats dicts]} -> {key: row} as the command's JSON has it."""
    ranks = sorted(per_rank)
    keys = set()
    for files in per_rank.values():
        for st in files:
            keys |= set(st)
    rows = {}
    for k in keys:
        cum, tot, calls, pcalls = [], [], 0, 0
        for r in ranks:
            c = t = 0.0
            for st in per_rank[r]:
                if k in st:
                    cc, nc, tt, ct, _ = st[k]
                    c += ct
                    t += tt
                    calls += nc
                    pcalls += cc
            cum.append(c)
            tot.append(t)

        def spread(v):
            m = max(v)
            return {"min": min(v), "mean": sum(v) / len(v), "max": m,
                    "max_rank": ranks[v.index(m)]}
        cs, ts = spread(cum), spread(tot)
        rows[k] = {"calls": calls, "primitive_calls": pcalls, "cumtime": cs, "tottime": ts,
                   "imbalance": cs["max"] / cs["mean"] if cs["mean"] > 0 else None,
                   "cost": cs["max"] - cs["mean"]}
    return rows


def close(a, b):
    if a is None or b is None:
        return a is b
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def compare(got, want, what):
    funcs = got["functions"]
    seen = {(f["file"], f["line"], f["name"]): f for f in funcs}
    if set(seen) != set(want):
        fail(f"{what}: functions {sorted(seen)} != {sorted(want)}")
        return
    for k, w in want.items():
        g = seen[k]
        for field in ("calls", "primitive_calls"):
            if g[field] != w[field]:
                fail(f"{what}: {k} {field} {g[field]} != {w[field]}")
        for field in ("imbalance", "cost"):
            if not close(g[field], w[field]):
                fail(f"{what}: {k} {field} {g[field]} != {w[field]}")
        for col in ("cumtime", "tottime"):
            for part in ("min", "mean", "max"):
                if not close(g[col][part], w[col][part]):
                    fail(f"{what}: {k} {col}.{part} {g[col][part]} != {w[col][part]}")
            if g[col]["max_rank"] != w[col]["max_rank"]:
                fail(f"{what}: {k} {col}.max_rank {g[col]['max_rank']} != {w[col]['max_rank']}")
    # Sorted by cost, largest first; ties by key.
    order = [(f["file"], f["line"], f["name"]) for f in funcs]
    want_order = sorted(want, key=lambda k: (-want[k]["cost"], k))
    if order != want_order:
        fail(f"{what}: order {order} != {want_order}")


# 1. Four ranks, given out of order: ranks come from the metadata, not the arguments.
per_rank = {r: [rank_stats(r)] for r in range(4)}
files = [write(f"out.prof.rank{r}", per_rank[r][0], r) for r in (2, 0, 3, 1)]
got = json.loads(run("--json", *files).stdout)
compare(got, expected(per_rank), "four ranks")
if [x["rank"] for x in got["ranks"]] != [0, 1, 2, 3]:
    fail(f"ranks listed {got['ranks']}")
if got["functions"][0]["name"] != "work" or got["functions"][0]["cumtime"]["max_rank"] != 3:
    fail(f"the imbalanced function first, heaviest rank 3: {got['functions'][0]}")
imb = {f["name"]: f for f in got["functions"]}
if imb["never_timed"]["imbalance"] is not None:
    fail("a function with no time has no imbalance (null)")
if imb["io_on_root"]["cumtime"]["min"] != 0.0:
    fail("a function absent from a rank counts 0 there")

# The text: the header, the heaviest rank named on the imbalanced function's row, "-" for
# no imbalance, and the function as pstats names it.
text = run(*files).stdout
lines = text.splitlines()
if not lines[0].startswith("4 ranks (0-3) from 4 files; 5 functions; sorted by cost"):
    fail(f"text header: {lines[0]!r}")
row = [ln for ln in lines if ln.endswith("app.c:20(work)")]
# work's cumtime over the ranks: 1.5, 3, 4.5, 6; mean 3.75, max 6: imbalance 1.60.
if len(row) != 1 or "rank 3" not in row[0] or "1.60" not in row[0]:
    fail(f"text row of work: {row}")
idle = [ln for ln in lines if ln.endswith("(never_timed)")]
if len(idle) != 1 or " - " not in idle[0]:
    fail(f"text row of a function with no time: {idle}")

# 2. --sort and --limit.
for key, field in (("cumtime", lambda f: f["cumtime"]["max"]),
                   ("tottime", lambda f: f["tottime"]["max"]),
                   ("calls", lambda f: f["calls"]),
                   ("imbalance", lambda f: f["imbalance"] if f["imbalance"] is not None else -1)):
    fs = json.loads(run("--json", "--sort", key, *files).stdout)["functions"]
    vals = [field(f) for f in fs]
    if vals != sorted(vals, reverse=True):
        fail(f"--sort {key}: {vals}")
fs = json.loads(run("--json", "--limit", "2", *files).stdout)["functions"]
if len(fs) != 2:
    fail(f"--limit 2 --json gave {len(fs)}")
text = run("--limit", "1", *files).stdout
if "... 4 more" not in text:
    fail(f"--limit 1 text does not say what it left out: {text!r}")

# 3. A rank's files are added together (a forked child writes OUT.rankN.<pid>).
child = {WORK_FN: stat(5, 0.5, 0.5), ("app.c", 60, "child_only"): stat(1, 0.1, 0.1)}
per_rank2 = {r: [rank_stats(r)] for r in range(4)}
per_rank2[1].append(child)
files2 = files + [write("out.prof.rank1.4242", child, 1)]
got = json.loads(run("--json", *files2).stdout)
compare(got, expected(per_rank2), "a rank of two files")
if [x["files"] for x in got["ranks"]] != [1, 2, 1, 1]:
    fail(f"files per rank: {got['ranks']}")

# 4. No rank metadata: each file a rank, by position, with one note.
plain = [write(f"plain{i}.prof", rank_stats(i)) for i in range(3)]
p = run("--json", *plain)
got = json.loads(p.stdout)
compare(got, expected({i: [rank_stats(i)] for i in range(3)}), "positional")
notes = [ln for ln in p.stderr.splitlines() if ln.startswith("fnprof: ranks: ")]
if len(notes) != 1 or "numbered from 0 in the order given" not in notes[0]:
    fail(f"positional ranks: one note wanted, got {p.stderr!r}")

# 5. A gap: ranks 0, 1, 3 given; figures over those three, and a note.
p = run("--json", files[1], files[3], files[2])
compare(json.loads(p.stdout), expected({r: [rank_stats(r)] for r in (0, 1, 3)}), "gap")
if "0-3 with gaps" not in p.stderr:
    fail(f"a gap in the ranks is not noted: {p.stderr!r}")

# 5b. Mixed: the files with a rank keep it; the one without is numbered after the highest,
# with a note.
p = run("--json", files[2], write("norank.prof", rank_stats(1)), files[1])
got = json.loads(p.stdout)
compare(got, expected({3: [rank_stats(3)], 0: [rank_stats(0)], 4: [rank_stats(1)]}), "mixed")
if "numbered from 4" not in p.stderr:
    fail(f"mixed: the unranked file's number is not said: {p.stderr!r}")

# 5c. The run's size says a rank is missing (rank 3 crashed): noted; sizes that differ too.
sized = [write(f"sized.rank{r}", rank_stats(r), r, 4) for r in range(3)]
p = run("--json", *sized)
compare(json.loads(p.stdout), expected({r: [rank_stats(r)] for r in range(3)}), "sized")
if "3 of the run's 4 ranks" not in p.stderr:
    fail(f"a missing last rank is not noted: {p.stderr!r}")
p = run(sized[0], write("other.rank1", rank_stats(1), 1, 8))
if "different sizes" not in p.stderr:
    fail(f"files of runs of different sizes are not noted: {p.stderr!r}")

# 5d. The same file twice would count twice: refused.
p = run(files[0], files[1], files[0], code=1)
if p.stdout or "given twice" not in p.stderr:
    fail(f"a file given twice: {p.stdout!r} {p.stderr!r}")

# 5e. Times near the largest double: the mean stays finite, the table readable.
huge = [write(f"huge.rank{r}", {WORK_FN: stat(1, 1e308, 1e308)}, r) for r in range(2)]
got = json.loads(run("--json", *huge).stdout)["functions"][0]
if got["cumtime"]["mean"] != 1e308 or got["cost"] != 0 or got["imbalance"] != 1:
    fail(f"times near DBL_MAX: {got}")
text = run(*huge).stdout.splitlines()[-1]
if len(text) > 200:
    fail(f"times near DBL_MAX make a row of {len(text)} characters")

# 6. Bad input: one line, non-zero, nothing on stdout.
bad = os.path.join(WORK, "bad.prof")
with open(bad, "wb") as f:
    f.write(b"\x00not a profile")
for args, code in ((["nonexistent.prof"], 1), ([bad], 1), (["--sort", "x", files[0]], 2),
                   ([], 2), (["--limit", "-1", files[0]], 2)):
    p = run(*args, code=code)
    if p.stdout or len(p.stderr.strip().splitlines()) != 1:
        fail(f"fnprof ranks {args}: stdout {p.stdout!r} stderr {p.stderr!r}")

# 7. Random profiles: 1..9 ranks, random functions and numbers, against the reference.
rng = random.Random(1234)
for trial in range(30):
    n = rng.randint(1, 9)
    keys = [("f.c", i, f"fn{i}") for i in range(rng.randint(1, 30))]
    per = {}
    paths = []
    for r in rng.sample(range(12), n):
        st = {}
        for k in rng.sample(keys, rng.randint(1, len(keys))):
            calls = rng.randint(1, 10**6)
            tt = rng.random() * 5
            st[k] = (calls - rng.randint(0, calls - 1) * rng.randint(0, 1), calls, tt,
                     tt + rng.random() * 3, {})
        per[r] = [st]
        paths.append(write(f"rand{trial}.rank{r}", st, r))
    p = run("--json", *paths)
    compare(json.loads(p.stdout), expected(per), f"random trial {trial}")

# 8. fnprof merge over 64 rank files: every function's calls and times are the sums, and
# fnprof ranks over the 64 agrees with the reference.
per64 = {}
paths = []
for r in range(64):
    st = rank_stats(r % 4)
    st[("rank.c", 100 + r, f"only_rank_{r}")] = stat(r + 1, 0.01 * r, 0.02 * r)
    per64[r] = [st]
    paths.append(write(f"r64.prof.rank{r}", st, r))
merged = os.path.join(WORK, "merged64.prof")
p = subprocess.run([FNPROF, "merge", "-o", merged, *paths], capture_output=True, text=True,
                   check=False)
if p.returncode:
    fail(f"fnprof merge of 64: {p.stderr}")
else:
    import pstats  # pylint: disable=import-outside-toplevel
    got = pstats.Stats(merged).stats
    want = {}
    for r in range(64):
        for k, (cc, nc, tt, ct, _) in per64[r][0].items():
            w = want.setdefault(k, [0, 0, 0.0, 0.0])
            w[0] += cc
            w[1] += nc
            w[2] += tt
            w[3] += ct
    if set(got) != set(want):
        fail(f"merge of 64: functions differ: {set(got) ^ set(want)}")
    for k, w in want.items():
        g = got.get(k)
        if g and (g[0] != w[0] or g[1] != w[1] or not close(g[2], w[2]) or not close(g[3], w[3])):
            fail(f"merge of 64: {k}: {g[:4]} != {w}")
compare(json.loads(run("--json", *paths).stdout), expected(per64), "64 ranks")

if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("ok")
# SPDX-License-Identifier: MIT
