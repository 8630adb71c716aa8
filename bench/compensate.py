#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The error of fnprof's times, raw and compensated (PROF_COMPENSATE, docs/compensation.md),
against the program built without instrumentation. Stdlib only; run by `bench/run
--compensate`, or alone after a build:

    python3 bench/compensate.py --lib build-bench/lib [--runs N] [--quick] [--only callees,lua]

callees (workloads/callees.c): a leaf doing T ns of work (T = 5, 20, 50, 200, 1000), called
from a loop, two kinds of work: "chain" (one dependent multiply-add after another: the
processor has room beside it) and "wide" (four at once: its multiplier kept busy). The
truth is the uninstrumented build's own clock around each batch of calls, the median of
REPS batches, per call. The profile's figures are taken the same way: every batch is a
profile of its own (the program calls fnprof_reset and fnprof_dump around it), and the
median over the batches of the leaf's cumtime per call (the callee's figure) and of its
loop's cumtime per call (the caller's figure, which holds the call itself, as the clock
around the batch does). A whole run's sum would hold every moment the process was
preempted; on a shared machine that is most of the error. Compensated figures come from
runs with PROF_COMPENSATE=1, the same batches otherwise. Both clocks: the default (the TSC,
read without a fence) and PROF_TIMER=monotonic (clock_gettime, whose reads are ordered).

lua, sqlite: bench/run's real programs at its full sizes; main's cumtime in the fnprof
profile, raw and `fnprof report --compensate` of the same file, against the uninstrumented
run's work phase (start to the end of main's work, workloads/mark.c), medians of
interleaved runs.
"""
import argparse
import marshal
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness as H  # noqa: E402  (bench/harness.py: builds, the launcher, the real programs)

TARGETS = [5, 20, 50, 200, 1000]  # ns of work per call
KINDS = ["chain", "wide"]
TIMERS = ["auto", "monotonic"]
REPS = {"full": 41, "quick": 5}
BATCH_NS = 40000  # ns of calls per timed batch: short enough that few are preempted


def build_callees():
    """The callees program, uninstrumented and instrumented; {variant: path}."""
    src = H.WL / "callees.c"
    jobs, out = [], {}
    for variant, flags in (("base", []), ("inst", ["-finstrument-functions"])):
        prog = H.BUILD / "callees" / variant / "callees"
        jobs.append(H.Job(["gcc", *H.CFLAGS, *flags, src, "-o", prog], prog, [src]))
        out[variant] = prog
    jobs.append(H.Job(["gcc", "-O2", "-o", H.LAUNCH, H.BENCH / "tools" / "launch.c"], H.LAUNCH,
                      [H.BENCH / "tools" / "launch.c"]))
    H.run_jobs(jobs)
    return out


def callees_args(kind, reps, ks):
    args = [kind, str(reps)]
    for k in ks:
        # batch: BATCH_NS of calls (at ~1 ns a step), at least 20 calls
        args += [str(k), str(max(20, BATCH_NS // (k + 2)))]
    return args


def run_base(prog, args):
    """The uninstrumented program's medians, ns per call, per size."""
    out = subprocess.run([str(prog), *args], stdout=subprocess.PIPE, text=True,
                         check=True).stdout
    return [float(x) for x in re.findall(r"median_ns ([\d.]+)", out)]


def tune(prog, kind, quick):
    """Steps of work per call for each target: two sizes measured, a line through them."""
    lo, hi = 0, 400
    a = [run_base(prog, callees_args(kind, 21, [lo, hi])) for _ in range(3)]
    t_lo = statistics.median(x[0] for x in a)
    t_hi = statistics.median(x[1] for x in a)
    per_step = (t_hi - t_lo) / (hi - lo)
    return [max(0, round((t - t_lo) / per_step)) for t in TARGETS]


def pstats_rows(path):
    """{function name: (ncalls, tottime, cumtime)} of a pstats file (its dict only)."""
    with open(path, "rb") as f:
        stats = marshal.load(f)
    return {k[2]: (v[1], v[2], v[3]) for k, v in stats.items()}


def report_rows(fnprof, path):
    """{function name: (ncalls, cumtime ns)} of `fnprof report --compensate` of a file."""
    text = subprocess.run([str(fnprof), "report", str(path), "--compensate", "--unit", "ns",
                           "--limit", "0", "--no-meta"], stdout=subprocess.PIPE, text=True,
                          check=True).stdout
    rows = {}
    for line in text.splitlines():
        m = re.match(r"\s*(\d+)(?:/\d+)?\s+\d+\s+\d+\s+(\d+)\s+\d+\s+\S*\((\w+)\)$", line)
        if m:
            rows[m.group(3)] = (int(m.group(1)), int(m.group(2)) * 1e-9)
    return rows


def run_profiled(prog, args, lib, timer, compensate, workdir, sizes):
    """Per size, the median over the batches of the leaf's and the caller's figures (ns per
    call): as written, and (a run without PROF_COMPENSATE) compensated afterwards by
    `fnprof report --compensate`; and the calibration the run stored."""
    shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir(parents=True)
    env = dict(H.run_env({}), LD_PRELOAD=str(lib / "libfnprof.so"),
               PROF_OUTPUT=str(workdir / "exit.prof"), PROF_QUIET="1", PROF_TIMER=timer,
               CALLEES_DUMP=str(workdir))
    if compensate:
        env["PROF_COMPENSATE"] = "1"
    r = subprocess.run([str(prog), *args], env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if r.returncode:
        sys.exit(f"bench: callees under fnprof exited {r.returncode}: {r.stderr[-2000:]}")
    fnprof = lib.parent / "bin" / "fnprof"
    leaf, caller, leaf_after, caller_after = [], [], [], []
    for i in range(sizes):
        ls, cs, la, ca = [], [], [], []
        for p in workdir.glob(f"{i}.*.prof"):
            rows = pstats_rows(p)
            n, _, lc = rows[f"leaf_{i}"]
            cc = rows[f"drive_{i}"][2]
            ls.append(lc / n * 1e9)
            cs.append(cc / n * 1e9)
            if not compensate:
                rows = report_rows(fnprof, p)
                la.append(rows[f"leaf_{i}"][1] / n * 1e9)
                ca.append(rows[f"drive_{i}"][1] / n * 1e9)
        leaf.append(statistics.median(ls))
        caller.append(statistics.median(cs))
        leaf_after.append(statistics.median(la) if la else float("nan"))
        caller_after.append(statistics.median(ca) if ca else float("nan"))
    meta = subprocess.run([str(fnprof), "report", str(workdir / "0.0.prof"), "--limit", "1"],
                          stdout=subprocess.PIPE, text=True).stdout
    cal = dict(re.findall(r"fnprof\.(hook_in_ns|hook_out_ns|clamped): (\S+)", meta))
    return leaf, caller, leaf_after, caller_after, cal


def err(value, truth):
    return f"{(value / truth - 1) * 100:+.1f}%"


def cell(value, truth):
    return f"{value:.1f} {err(value, truth)}"


def bench_callees(lib, runs, quick):
    progs = build_callees()
    reps = REPS["quick" if quick else "full"]
    lines = []
    rows = []
    cals = {}
    for kind in KINDS:
        ks = tune(progs["base"], kind, quick)
        args = callees_args(kind, reps, ks)
        H.log(f"callees {kind}: steps {ks}")
        for timer in TIMERS:
            got = {"base": [], "raw": [], "after": [], "comp": []}
            for r in range(runs):
                got["base"].append(run_base(progs["base"], args))
                for mode in ("raw", "comp"):
                    leaf, caller, leaf_a, caller_a, cal = run_profiled(
                        progs["inst"], args, lib, timer, mode == "comp", H.OUT / "callees",
                        len(ks))
                    got[mode].append((leaf, caller))
                    if mode == "raw":
                        got["after"].append((leaf_a, caller_a))
                    cals.setdefault((kind, timer, mode), []).append(cal)
            H.log(f"callees {kind} {timer}: {runs} runs done")
            for i, target in enumerate(TARGETS):
                truth = statistics.median(b[i] for b in got["base"])
                row = [kind, "tsc" if timer == "auto" else timer, f"{target}", f"{ks[i]}",
                       f"{truth:.1f}"]
                for side in (0, 1):
                    for mode in ("raw", "after", "comp"):
                        row.append(cell(statistics.median(x[side][i] for x in got[mode]), truth))
                rows.append(row)
    lines.append("callees: ns per call and error, median over batches of calls (each batch a "
                 "profile of its own), median of the runs")
    lines.append(H.table(["work", "clock", "target", "steps", "uninstr.", "leaf raw",
                          "leaf --compensate", "leaf PROF_COMPENSATE", "caller raw",
                          "caller --compensate", "caller PROF_COMPENSATE"], rows))
    lines.append("uninstr.: the uninstrumented build's clock around each batch, per call (the "
                 "call and the loop included);")
    lines.append("leaf: the callee's cumtime per call; caller: its loop's cumtime per call of "
                 "the leaf (the call included);")
    lines.append("raw: a run without PROF_COMPENSATE; --compensate: the same files through "
                 "`fnprof report --compensate`;")
    lines.append("PROF_COMPENSATE: runs with PROF_COMPENSATE=1, whose clock reads are ordered "
                 "(docs/compensation.md)")
    for (kind, timer, mode), cs in cals.items():
        ins = sorted(float(c.get("hook_in_ns", "nan")) for c in cs)
        outs = sorted(float(c.get("hook_out_ns", "nan")) for c in cs)
        lines.append(f"calibration ({kind}, {'tsc' if timer == 'auto' else timer}, "
                     f"{'ordered' if mode == 'comp' else 'unordered'}): in "
                     f"{ins[0]:.2f}-{ins[-1]:.2f} ns, out {outs[0]:.2f}-{outs[-1]:.2f} ns "
                     f"over {len(cs)} runs")
    return "\n".join(lines)


def main_cumtime(fnprof, prof, compensate):
    """main's cumtime (ns) and the run's metadata, from fnprof report."""
    cmd = [str(fnprof), "report", str(prof), "--unit", "ns", "--limit", "0", "--sort", "name"]
    text = subprocess.run(cmd + (["--compensate"] if compensate else []),
                          stdout=subprocess.PIPE, text=True, check=True).stdout
    meta = dict(re.findall(r"^(fnprof\.\w+|clock): (.*)$", text, re.M))
    calls = int(re.search(r"(\d+) function calls", text).group(1))
    for line in text.splitlines():
        m = re.match(r"\s*[\d/]+\s+\d+\s+\d+\s+(\d+)\s+\d+\s+\S*\(main\)$", line)
        if m:
            return int(m.group(1)), meta, calls
    sys.exit(f"bench: no main in {prof}")


def bench_real(lib, runs, quick, only):
    hook_libs = {}
    names = [n for n in ("lua", "sqlite") if n in only]
    if not names:
        return ""
    ws = {w.name: w for w in H.workloads() if w.name in names}
    progs = H.build_all(names, hook_libs, lib.parent / "bin")
    rundelay = H.BUILD / "hooks" / "rundelay.so"
    src = H.BENCH / "tools" / "rundelay.c"
    H.run_jobs([H.Job(["gcc", "-O2", "-fPIC", "-shared", src, "-o", rundelay], rundelay, [src])])
    size = "quick" if quick else "full"
    fnprof = lib.parent / "bin" / "fnprof"
    rows, notes = [], []
    for name in names:
        w = ws[name]
        argv = {v: [progs[(w.build, v)], *[str(H.WL / a[1:]) if a.startswith("@") else a
                                             for a in w.sizes[size]]] for v in ("base", "inst")}
        runs_ = []  # (base work, fnprof work, main raw, main compensated), ns
        meta = {}
        for r in range(runs + (0 if quick else 1)):
            res = {}
            order = ("base", "fnprof", "ordered")
            for config in (order if r % 2 == 0 else order[::-1]):
                mark = H.OUT / f"comp.{name}.{config}.mark"
                delay = H.OUT / f"comp.{name}.{config}.delay"
                mark.unlink(missing_ok=True)
                delay.unlink(missing_ok=True)
                env = {"BENCH_MARK": mark, "BENCH_RUNDELAY": delay, "LD_PRELOAD": rundelay}
                prof = H.OUT / f"comp.{name}.{config}.prof"
                if config != "base":
                    env.update(LD_PRELOAD=f"{lib / 'libfnprof.so'}:{rundelay}", PROF_OUTPUT=prof,
                               PROF_QUIET="1")
                if config == "ordered":
                    env.update(PROF_COMPENSATE="1")
                wall, _, end, rc = H.spawn(argv["base" if config == "base" else "inst"], env,
                                           fixed_layout=w.no_aslr)
                if rc or not mark.exists() or not delay.exists():
                    sys.exit(f"bench: {name}/{config} exited {rc}")
                waited = int(delay.read_text())
                res[config] = (wall - (end - int(mark.read_text())), waited)
            if r == 0 and not quick:
                continue  # warm-up
            prof = H.OUT / f"comp.{name}.fnprof.prof"
            m_raw, _, calls = main_cumtime(fnprof, prof, False)
            m_comp, meta, _ = main_cumtime(fnprof, prof, True)
            m_ord, meta_ord, _ = main_cumtime(fnprof, H.OUT / f"comp.{name}.ordered.prof", False)
            # The time each process waited for a processor (rundelay.c) is in its work
            # phase, and in main's interval in the profile: taken off both.
            (bw, bd), (fw, fd), (ow, od) = res["base"], res["fnprof"], res["ordered"]
            cal = float(meta.get("fnprof.hook_in_ns", "nan")) + float(
                meta.get("fnprof.hook_out_ns", "nan"))
            cal_ord = float(meta_ord.get("fnprof.hook_in_ns", "nan")) + float(
                meta_ord.get("fnprof.hook_out_ns", "nan"))
            runs_.append((bw - bd, fw - fd, m_raw - fd, m_comp - fd, bd + fd, cal, m_ord - od,
                          ow - od, cal_ord))
        # Medians over the runs, waits taken off; a run is only ever slowed down by the
        # rest of a shared machine, which takes more than the waits (caches, the other
        # half of a core): the fastest figures are shown too.
        truth = statistics.median(x[0] for x in runs_)
        r_ = statistics.median(x[2] for x in runs_)
        c_ = statistics.median(x[3] for x in runs_)
        cost = (statistics.median(x[1] for x in runs_) - truth) / calls
        fast = min(x[0] for x in runs_)
        best = min(runs_, key=lambda x: x[1])
        cals = sorted(x[5] for x in runs_)
        cal = statistics.median(cals)
        o_ = statistics.median(x[6] for x in runs_)
        cost_o = (statistics.median(x[7] for x in runs_) - truth) / calls
        cal_o = statistics.median(x[8] for x in runs_)
        rows.append([name, f"{calls:,}", f"{truth / 1e6:.0f}", f"{r_ / 1e6:.0f}", err(r_, truth),
                     f"{c_ / 1e6:.0f}", err(c_, truth), f"{o_ / 1e6:.0f}", err(o_, truth),
                     f"{cost:.2f}", f"{cal:.2f}", f"{cost_o:.2f}", f"{cal_o:.2f}",
                     meta.get("fnprof.clamped", "-"), meta_ord.get("fnprof.clamped", "-")])
        waits = statistics.median(x[4] for x in runs_) / 1e6
        notes.append(f"{name}: {len(runs_)} runs, {waits:.0f} ms of waits for a processor taken "
                     f"off a run pair (median); the fastest runs: uninstr. {fast / 1e6:.0f} ms, "
                     f"main raw {err(best[2], fast)}, --compensate {err(best[3], fast)}; "
                     f"calibrated {cals[0]:.2f}-{cals[-1]:.2f} ns")
    return "\n".join([
        "real programs: main's cumtime against the uninstrumented run's work phase (ms), "
        "medians of interleaved runs, the time each process waited for a processor taken off",
        H.table(["program", "calls", "uninstr.", "main raw", "err", "--compensate", "err",
                 "PROF_COMPENSATE", "err", ">base", "calibrated", ">base ord.", "cal. ord.",
                 "clamped", "clamped ord."], rows),
        "raw and --compensate: a run without PROF_COMPENSATE, its file as written and through "
        "`fnprof report --compensate`; PROF_COMPENSATE: a run with PROF_COMPENSATE=1 (ordered "
        "clock reads);",
        ">base: what a call pair really added to the run, ns (work phases less waits, "
        "instrumented less uninstrumented, per call); ord.: in the PROF_COMPENSATE=1 run;",
        "calibrated: what compensation takes off a call (hook_in_ns + hook_out_ns, median of "
        "the runs)", *notes])


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", required=True, help="directory holding libfnprof.so")
    ap.add_argument("--quick", action="store_true", help="smoke run: tiny sizes, 1 run")
    ap.add_argument("--runs", type=int, help="runs per figure (default 5)")
    ap.add_argument("--only", default="callees,lua,sqlite",
                    help="comma-separated: callees, lua, sqlite")
    args = ap.parse_args()
    lib = Path(args.lib).resolve()
    if not (lib / "libfnprof.so").exists() or not (lib.parent / "bin" / "fnprof").exists():
        sys.exit(f"bench: {lib}/libfnprof.so or its bin/fnprof not found")
    H.OUT.mkdir(parents=True, exist_ok=True)
    runs = args.runs or (1 if args.quick else 5)
    only = args.only.split(",")
    t0 = time.monotonic()
    load = os.getloadavg()
    print(f"fnprof bench/compensate.py{' --quick' if args.quick else ''}: "
          f"{time.strftime('%Y-%m-%d %H:%M %Z')}")
    print(f"machine: {H.machine()}; load average at start {load[0]:.1f}")
    print(f"fnprof: {H.fnprof_rev(lib)} ({lib / 'libfnprof.so'}, LD_PRELOAD)")
    print()
    sys.stdout.flush()
    if "callees" in only:
        print(bench_callees(lib, runs, args.quick))
        print()
        sys.stdout.flush()
    real = bench_real(lib, runs, args.quick, only)
    if real:
        print(real)
    print(f"\nload average at the end {os.getloadavg()[0]:.1f}; took "
          f"{time.monotonic() - t0:.0f} s")


if __name__ == "__main__":
    main()
