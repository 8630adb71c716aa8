#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The cost per Python call of python3 -m fnprof against python3 -m cProfile on the same
scripts (workloads/py/), and per native call of a Python program calling an instrumented
extension. Each script runs as `python3 S`, `python3 -m cProfile -o X S` and
`python3 -m fnprof -o X S`, interleaved, median of --runs wall times; the calls are
cProfile's count (the two agree on these scripts: tests/python); ns per call is
(profiled - plain) / calls, process start-up included in both (fnprof's command starts a
second interpreter: about 15 ms, spread over the calls).

usage: bench/python.py [--build DIR] [--runs N]
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(HERE, "..", "build"))
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
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


if __name__ == "__main__":
    main()
