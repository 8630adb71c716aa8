#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The cost per Python call of python3 -m fnprof against python3 -m cProfile on the same
scripts (workloads/py/), and per native call of a Python program calling an instrumented
extension. Each script runs as `python3 S`, `python3 -m cProfile -o X S` and
`python3 -m fnprof -o X S`, interleaved, median of --runs wall times; the calls are
cProfile's count (the two agree on these scripts: tests/python); ns per call is
(profiled - plain) / calls, process start-up included in both (fnprof's command starts a
second interpreter: about 15 ms, spread over the calls).

That whole-run figure is no fair cost per native call: the fixed costs (the second
interpreter, importing the package, writing the profile: 40-50 ms on mixed's 10 M native
calls, 4-5 ns a call) are in it. The native row below takes them out: mixed at 20 and 60
Python calls (10 M and 30 M native ones) under `python3 S` and `python3 -m fnprof`, the
cost of the 20 M calls between them, beside bench/workloads/tiny.c (a C program) at the
same numbers of calls without and with libfnprof.so preloaded, in the same rounds, so that
both figures see the same machine.

usage: bench/python.py [--build DIR] [--runs N] [--quick]
(bench/run --python runs it on build-bench/; --quick: a smoke run for CI, sizes a hundredth,
one run, the figures mean nothing)
"""
import argparse
import importlib.machinery
import marshal
import os
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PY = os.path.join(HERE, "workloads", "py")
SCRIPTS = [("fib", "fib.py", "29"), ("oo", "oo.py", "150000"), ("gen", "gen.py", "600000"),
           ("builtins", "builtins_loop.py", "300000"), ("mixed", "mixed.py", "20")]


def wall(argv, cwd, env):
    t = time.perf_counter_ns()
    subprocess.run(argv, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.perf_counter_ns() - t


def native_rows(py, tmp, env, lib, runs, quick):
    """ns per native call above glibc's empty hooks, by difference of two sizes: under
    python3 -m fnprof (mixed.py) and in a C program (tiny.c), interleaved."""
    tiny = os.path.join(tmp, "tiny")
    subprocess.run(["cc", "-O2", "-g", "-finstrument-functions", os.path.join(HERE, "workloads",
                    "tiny.c"), "-o", tiny, "-lpthread"], check=True)
    out = os.path.join(tmp, "n.prof")
    pre = dict(env, LD_PRELOAD=lib, PROF_OUTPUT=out, PROF_QUIET="1")
    sizes = (2, 6) if quick else (20, 60)  # Python calls of mixed.py; 500,000 native each
    cmds = {}
    for n in sizes:
        cmds[("python", n)] = ([py, "mixed.py", str(n)], env)
        cmds[("fnprof", n)] = ([py, "-m", "fnprof", "-o", out, "mixed.py", str(n)], env)
        cmds[("C", n)] = ([tiny, str(n * 500000)], env)
        cmds[("C fnprof", n)] = ([tiny, str(n * 500000)], pre)
    times = {k: [] for k in cmds}
    for _ in range(runs):
        for k, (argv, e) in cmds.items():
            times[k].append(wall(argv, tmp, e))
    med = {k: statistics.median(v) for k, v in times.items()}
    calls = (sizes[1] - sizes[0]) * 500000

    def per_call(prof, floor):
        return ((med[(prof, sizes[1])] - med[(prof, sizes[0])]) -
                (med[(floor, sizes[1])] - med[(floor, sizes[0])])) / calls

    whole = (med[("fnprof", sizes[0])] - med[("python", sizes[0])]) / (sizes[0] * 500000)
    return per_call("fnprof", "python"), per_call("C fnprof", "C"), whole


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(HERE, "..", "build"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--lib", help="bench/run's: the build's lib/ (its parent is --build)")
    ap.add_argument("--quick", action="store_true", help="smoke run: tiny sizes, 1 run")
    a = ap.parse_args()
    if a.lib:
        a.build = os.path.dirname(os.path.abspath(a.lib))
    if a.quick:
        a.runs = 1
    build = os.path.abspath(a.build)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROF_") and k != "LD_PRELOAD"}
    env["PYTHONPATH"] = os.path.join(build, "python")
    tmp = tempfile.mkdtemp(prefix="fnprof-bench-py-")
    so = os.path.join(tmp, "mixed_native" + importlib.machinery.EXTENSION_SUFFIXES[0])
    subprocess.run(["cc", "-O2", "-g", "-fPIC", "-shared", "-finstrument-functions",
                    "-I" + sysconfig.get_paths()["include"],
                    os.path.join(PY, "mixed_native.c"), "-o", so], check=True)
    for _, script, _ in SCRIPTS:
        subprocess.run(["cp", os.path.join(PY, script), tmp], check=True)
    py = sys.executable
    out = os.path.join(tmp, "x.prof")
    rows = []
    for name, script, arg in SCRIPTS:
        if a.quick:
            arg = str(max(1, int(arg) // (10 if name in ("fib", "mixed") else 100)))
        cmds = {"python": [py, script, arg],
                "cProfile": [py, "-m", "cProfile", "-o", out, script, arg],
                "fnprof": [py, "-m", "fnprof", "-o", out, script, arg]}
        times = {k: [] for k in cmds}
        for _ in range(a.runs):
            for k, argv in cmds.items():
                times[k].append(wall(argv, tmp, env))
        subprocess.run(cmds["cProfile"], cwd=tmp, env=env, check=True, stdout=subprocess.DEVNULL)
        with open(out, "rb") as f:
            pycalls = sum(v[1] for v in marshal.load(f).values())
        subprocess.run(cmds["fnprof"], cwd=tmp, env=env, check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        with open(out, "rb") as f:
            stats = marshal.load(f)
        native = sum(v[1] for k, v in stats.items() if k[0].endswith(".c"))
        med = {k: statistics.median(v) for k, v in times.items()}
        calls = pycalls + native
        rows.append((name, pycalls, native, med["python"] / 1e6, med["cProfile"] / 1e6,
                     med["fnprof"] / 1e6, (med["cProfile"] - med["python"]) / pycalls,
                     (med["fnprof"] - med["python"]) / calls))
    print("workload  Python calls  native calls  python ms  cProfile ms  fnprof ms"
          "  cProfile ns/call  fnprof ns/call")
    for r in rows:
        print("%-8s  %12s  %12s  %9.1f  %11.1f  %9.1f  %16.1f  %14.1f"
              % (r[0], "{:,}".format(r[1]), "{:,}".format(r[2]), r[3], r[4], r[5], r[6], r[7]))
    print("(ns/call: (profiled - python) / calls the profiler saw: cProfile's Python calls;"
          " fnprof's Python and native calls. median of %d runs)" % a.runs)
    lib = os.path.join(build, "lib", "libfnprof.so")
    under_py, in_c, whole = native_rows(py, tmp, env, lib, a.runs, a.quick)
    print()
    print("native call above glibc's empty hooks, 20 M calls by difference of two sizes:")
    print("  under python3 -m fnprof (mixed.py)  %5.1f ns" % under_py)
    print("  in a C program (tiny.c, preloaded)  %5.1f ns" % in_c)
    print("  (mixed's whole run, fixed costs included, 10 M calls: %.1f ns)" % whole)
    if a.quick:
        print("(--quick: a smoke run, tiny sizes and one run; the figures mean nothing)")


if __name__ == "__main__":
    main()
