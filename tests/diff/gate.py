#!/usr/bin/env python3
"""The README's CI gate on a real program, timed on this machine (progs/gate.c).

    gate.py build --lib-dir DIR --workdir DIR
    gate.py reruns --fnprof FNPROF --workdir DIR
    gate.py regression --fnprof FNPROF --workdir DIR

reruns: ROUNDS times, RUNS unchanged runs a side, interleaved (base, new, base, ...), judged
by `fnprof diff BASE... -- NEW... --fail-on RULE`: every round must exit 0, having tested
some functions (a gate that tests nothing passes nothing). The one-run gate's breaches on
the same files are printed beside it, for the record: it is what the README used to show.

regression: RUNS runs of `gate` against RUNS of `gate slow` (20% more work in transform):
the gate must exit 1 and name transform, and nothing but transform and its callers (whose
real growth is 4%). A 20% change can only be seen where the runs' own spread is smaller:
when BASE's transform varies by more than half the change (its median more than 10% above
its fastest run, as on a 2-core machine running several builds), the check says so and
exits 77 (skipped) rather than pass or fail on noise. python3 standard library only.
"""
import argparse
import json
import os
import pstats
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
RULE = "cumtime>+10%,min=5ms"
RUNS = 10    # a side: 1/C(20, 10) = 5.4e-6 leaves room for Holm over the ~10 tested
ROUNDS = 3
CALLERS = {"transform", "pipeline", "main"}


def fail(what):
    print("FAIL: " + what, flush=True)
    sys.exit(1)


def build(a):
    os.makedirs(a.workdir, exist_ok=True)
    subprocess.run(["gcc", "-O0", "-g", "-finstrument-functions",
                    os.path.join(HERE, "progs", "gate.c"), "-o", os.path.join(a.workdir, "gate"),
                    "-L" + a.lib_dir, "-Wl,-rpath," + a.lib_dir, "-lfnprof"], check=True)
    return 0


def interleaved(a, tag, args_a, args_b):
    """RUNS runs of each side, alternating, so that the machine's load falls on both alike."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROF_")}
    env["PROF_QUIET"] = "1"
    exe = os.path.join(a.workdir, "gate")
    sides = ([], [])
    for i in range(RUNS):
        for s, args in enumerate((args_a, args_b)):
            out = os.path.join(a.workdir, f"{tag}-{'ab'[s]}{i}.prof")
            subprocess.run([exe] + args, env=dict(env, PROF_OUTPUT=out), check=True)
            sides[s].append(out)
    return sides


def diff(a, args):
    r = subprocess.run([a.fnprof, "diff"] + args, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    return r.returncode, r.stdout, r.stderr


def breaches(out):
    """Function names of the breach lines (two-space indent after '--fail-on:')."""
    lines = out.splitlines()
    i = next((i for i, l in enumerate(lines) if l.startswith("--fail-on:")), None)
    if i is None:
        return []
    names = []
    for l in lines[i + 1:]:
        if not l.startswith("  ") or l.startswith("   "):
            continue
        func = l.split()[1]
        names.append(func[func.index("(") + 1:func.rindex(")")])
    return names


def tested(out):
    line = next((l for l in out.splitlines() if l.startswith("rank test:")), "")
    words = line.split()
    return int(words[words.index("over") + 1]) if "over" in words else 0


def reruns(a):
    for r in range(ROUNDS):
        base, new = interleaved(a, f"rerun{r}", [], [])
        rc, out, err = diff(a, base + ["--"] + new + ["--fail-on", RULE])
        one_rc, one_out, _ = diff(a, [base[0], new[0], "--fail-on", RULE])
        print(f"round {r + 1}: {RUNS} runs a side: exit {rc}, {tested(out)} functions tested; "
              f"the one-run gate on the first pair: exit {one_rc}, "
              f"{len(breaches(one_out))} breaches", flush=True)
        if rc != 0 or "no rule broken" not in out:
            fail(f"round {r + 1}: unchanged reruns failed the gate (exit {rc})\n{out}{err}")
        if tested(out) < 1:
            fail(f"round {r + 1}: the gate tested nothing\n{out}{err}")
        if r == 0:
            rc, out, err = diff(a, base + ["--"] + new + ["--fail-on", RULE, "--json"])
            j = json.loads(out)
            if rc != 0 or j["breaches"] or j["test"]["tested"] < 1 or j["test"]["too_few_runs"]:
                fail(f"--json of an unchanged rerun: exit {rc}\n{out}{err}")
    print("ok")
    return 0


def transform_spread(paths):
    """BASE's transform: its median cumtime over its fastest run's."""
    times = []
    for p in paths:
        st = pstats.Stats(p).stats
        times.append(next(v[3] for k, v in st.items() if k[2] == "transform"))
    return statistics.median(times) / min(times)


def regression(a):
    base, slow = interleaved(a, "slow", [], ["slow"])
    rc, out, err = diff(a, base + ["--"] + slow + ["--fail-on", RULE])
    names = breaches(out)
    print(f"{RUNS} runs of gate against {RUNS} of gate slow: exit {rc}, breaches {names}")
    if rc == 1:
        if "transform" not in names:
            fail(f"transform not named\n{out}{err}")
        if not set(names) <= CALLERS:
            fail(f"named functions that did not change: {set(names) - CALLERS}\n{out}{err}")
        if "transform" not in err and "breach" not in err:
            fail(f"no summary line on stderr\n{err}")
        print("ok")
        return 0
    if rc in (2, 3):
        fail(f"exit {rc}: trouble or too few runs\n{out}{err}")
    spread = transform_spread(base)
    if spread > 1.10:
        print(f"skipped: BASE's transform has a median {100 * (spread - 1):.0f}% above its "
              "fastest run: this machine's noise is larger than half the 20% change looked "
              f"for, so not seeing it proves nothing\n{out}")
        return 77
    fail(f"a 20% slowdown of transform passed the gate, with BASE's spread only "
         f"{100 * (spread - 1):.0f}%\n{out}{err}")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("check", choices=["build", "reruns", "regression"])
    ap.add_argument("--fnprof")
    ap.add_argument("--lib-dir")
    ap.add_argument("--workdir", required=True)
    a = ap.parse_args()
    return {"build": build, "reruns": reruns, "regression": regression}[a.check](a)


if __name__ == "__main__":
    sys.exit(main())
# SPDX-License-Identifier: MIT
