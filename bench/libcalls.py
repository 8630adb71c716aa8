#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""PROF_LIBCALLS's rows (bench/run --libcalls): what recording a library call costs, per
call, against uftrace's PLT hooking on the same binary, and the two ways a trampoline can
get control back after the callee (docs/libcalls.md, "Why the trampoline calls the
function").

    python3 bench/libcalls.py --lib build-bench/lib [--runs 5] [--calls 10000000] [--quick]

Workload: workloads/libcalls.c, -O2 -g -finstrument-functions, one instrumented function
calling lc_tiny (workloads/libcalls_lib.c, a shared library built without instrumentation)
N times. Configurations:
  floor           glibc's no-op hooks, nothing preloaded
  fnprof          PROF_OUTPUT: the library calls are not recorded
  libcalls        PROF_OUTPUT, PROF_LIBCALLS=1
  libcalls-count  the same, PROF_TIMER=none (no timestamp)
  libcalls-other  PROF_LIBCALLS=getpid: lc_tiny's slot is left alone
  uftrace         uftrace record (functions and library calls)
  uftrace-nolib   uftrace record --no-libcall
ns/call: (config - reference) / N, the reference fnprof for fnprof's rows and uftrace-nolib
for uftrace's. Wall time: median of --runs interleaved runs.

--mechanism rows (tools/libcall_mechanism.S): the same bookkeeping, no clock, reached
directly, by the call-through trampoline fnprof uses, and by return-address hijacking
(uftrace's): best of 7 runs, ns per call.
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WL = os.path.join(ROOT, "bench", "workloads")


def sh(cmd):
    subprocess.run(cmd, check=True)


def timed(cmd, env, cwd):
    t0 = time.perf_counter()
    subprocess.run(cmd, env=env, cwd=cwd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return (time.perf_counter() - t0) * 1e3


def build(tmp):
    lib = os.path.join(tmp, "liblcbench.so")
    prog = os.path.join(tmp, "libcalls")
    sh(["gcc", "-O2", "-shared", "-fPIC", os.path.join(WL, "libcalls_lib.c"), "-o", lib])
    sh(["gcc", "-O2", "-g", "-finstrument-functions", os.path.join(WL, "libcalls.c"), "-o", prog,
        "-L" + tmp, "-llcbench", "-Wl,-rpath," + tmp])
    mech = os.path.join(tmp, "mechanism")
    sh(["gcc", "-O2", os.path.join(ROOT, "bench", "tools", "libcall_mechanism.c"),
        os.path.join(ROOT, "bench", "tools", "libcall_mechanism.S"), "-o", mech])
    return prog, mech


def mechanism(mech, runs):
    best = {}
    for _ in range(max(1, runs // 2)):
        out = subprocess.run([mech], check=True, capture_output=True, text=True).stdout
        for line in out.splitlines():
            name, ns = line.split()
            best[name] = min(best.get(name, 1e30), float(ns))
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--calls", type=int, default=10000000)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--label", default="", help="said in the title (bench/run --rev)")
    a = ap.parse_args()
    if a.quick:
        a.runs, a.calls = 1, 100000
    lib = os.path.abspath(os.path.join(a.lib, "libfnprof.so"))
    tmp = tempfile.mkdtemp(prefix="fnp-bench-libcalls-")
    prog, mech = build(tmp)
    argv = [prog, str(a.calls)]
    clean = {k: v for k, v in os.environ.items() if not k.startswith("PROF_")}
    pre = dict(clean, LD_PRELOAD=lib, PROF_QUIET="1", PROF_OUTPUT="t.prof")
    configs = [
        ("floor", argv, clean),
        ("fnprof", argv, pre),
        ("libcalls", argv, dict(pre, PROF_LIBCALLS="1")),
        ("libcalls-count", argv, dict(pre, PROF_LIBCALLS="1", PROF_TIMER="none")),
        ("libcalls-other", argv, dict(pre, PROF_LIBCALLS="getpid")),
    ]
    if shutil.which("uftrace"):
        rec = ["uftrace", "record", "--no-event", "-d", os.path.join(tmp, "uftrace.data")]
        configs.append(("uftrace", rec + argv, clean))
        configs.append(("uftrace-nolib", rec[:2] + ["--no-libcall"] + rec[2:] + argv, clean))
    times = {name: [] for name, _, _ in configs}
    for _ in range(a.runs):
        for name, cmd, env in configs:
            times[name].append(timed(cmd, env, tmp))
    med = {k: statistics.median(v) for k, v in times.items()}
    ref = {"fnprof": "floor", "uftrace": "uftrace-nolib", "uftrace-nolib": "floor"}
    print("libcalls: %d library calls from one instrumented function, median of %d runs "
          "(wall ms) %s" % (a.calls, a.runs, a.label))
    print("%-15s %9s %15s  %s" % ("config", "wall ms", "min-max", "ns/call above"))
    for name, _, _ in configs:
        r = ref.get(name, "fnprof")
        extra = "" if name == "floor" else "%6.1f (%s)" % ((med[name] - med[r]) * 1e6 / a.calls,
                                                          r)
        print("%-15s %9.1f %7.0f-%-7.0f  %s" % (name, med[name], min(times[name]),
                                                 max(times[name]), extra))
    best = mechanism(mech, a.runs)
    print("\nmechanism (no clock, same bookkeeping), ns per call, best of %d runs:" %
          (7 * max(1, a.runs // 2)))
    for name in ("direct", "callthru", "hijack"):
        print("  %-9s %6.2f  (+%.2f)" % (name, best[name], best[name] - best["direct"]))
    shutil.rmtree(tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
