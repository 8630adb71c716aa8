#!/usr/bin/env python3
"""End-to-end cases of the flight recorder (PROF_TRACE_LAST=N): builds ring_prog.c with
-finstrument-functions, runs it under libfnprof.so with an ending the case picks, and checks
the JSON trace it leaves: check_trace.py's checks (JSON, nesting per thread, named threads),
then that each thread's calls are exactly the last ones of the sequence the program makes
(ring_prog.c), that the file holds exactly N ended calls plus the calls still open, that the
program's exit status or death signal is what it is without fnprof, and nothing on stdout.

usage: run_ring.py --case NAME --lib-dir DIR --workdir DIR [--format json|pftrace]
cases: exit, segv, abort, signal, api, memory, settings, many
"""
import argparse
import decimal
import json
import os
import signal
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import read_pftrace  # noqa: E402
import trace_run  # noqa: E402
TRACE = None  # the file PROF_TRACE names (main)


def fail(msg):
    raise SystemExit("run_ring: " + msg)


def run(exe, lib, work, args, env_extra=None):
    r = trace_run.run(exe, lib, work, args,
                      dict({"PROF_TRACE": TRACE, "PROF_QUIET": "1"}, **(env_extra or {})))
    if r.stdout:
        fail("the program's stdout is not empty: %r" % r.stdout[:200])
    return r


def loop_seq(calls, fns, leaf):
    """The calls a loop of ring_prog ends, in the order they end."""
    out = []
    for i in range(calls):
        out += [leaf, fns[i % len(fns)]]
    return out


def expected(calls, threads, mode, dump):
    """Per thread name: the calls it ends, in order; and the calls open at the write."""
    main = loop_seq(calls, ["w%d" % k for k in range(7)], "leaf")
    seqs = {"main": main}
    if threads > 1:
        seqs["worker"] = loop_seq(calls, ["a%d" % k for k in range(5)], "leafa") + ["worker"]
    if mode == "exit":
        main += ["run", "main"]
        return seqs, [], None
    if mode in ("segv", "abort"):
        return seqs, ["main", "run", "die"], None
    point = "dump_signal" if mode == "signal" else "dump_api"
    if dump:
        return seqs, ["main", "run", point], None
    main += [point] + ["after"] * 100 + ["run", "main"]
    return seqs, [], None


def load_json(path):
    """otherData, thread names by tid, the calls (name, ts, dur, tid, at: file order), pid."""
    r = subprocess.run([sys.executable, "-B", os.path.join(HERE, "check_trace.py"), path],
                       capture_output=True, text=True)
    if r.returncode != 0:
        fail("check_trace.py: %s" % r.stderr.strip())
    d = json.load(open(path), parse_float=decimal.Decimal)  # exact: ties stay ties
    names = {}
    for e in d["traceEvents"]:
        if e.get("ph") == "M" and e["name"] == "thread_name":
            names[e["tid"]] = e["args"]["name"]
    xs = [e for e in d["traceEvents"] if e.get("ph") == "X"]
    for i, e in enumerate(xs):
        e["at"] = i
    return d["otherData"], names, xs, d["traceEvents"][0]["pid"]


def load_pftrace(path):
    """As load_json, from the independent Perfetto reader: nested slices, the run's instant."""
    try:
        tracks, slices, instants = read_pftrace.read(path)
        read_pftrace.nest(slices)
    except ValueError as e:
        fail("%s: %s" % (path, e))
    other = {}
    for name, ann in instants:
        if name == "fnprof: run":
            other = {k: (True if v == "true" else int(v) if v.isdigit() else v)
                     for k, v in ann.items()}
    if "program" not in other:
        fail("%s: no run metadata" % path)
    pid = [t["pid"] for t in tracks.values() if t.get("kind") == "process"][0]
    names = {t["tid"]: t["name"] for t in tracks.values() if t.get("kind") == "thread"}
    xs, at = [], 0
    for uuid, evs in slices.items():
        stack = []
        for ts, kind, name, _ in evs:
            if kind == "B":
                stack.append((ts, name, at))
                at += 1
            else:
                t0, name, i = stack.pop()
                xs.append({"name": name, "ts": t0, "dur": ts - t0, "tid": tracks[uuid]["tid"],
                           "at": i})
    return other, names, xs, pid


def check_file(path, n, calls, threads, mode, dump, many=False):
    if not os.path.exists(path):
        fail("%s: not written" % path)
    other, names, xs, pid = (load_pftrace if path.endswith(".pftrace") or
                             path.endswith(".pftrace.dump") else load_json)(path)
    if other.get("fnprof_flight_recording") is not True or other.get("fnprof_trace_last") != n:
        fail("%s: it does not say it is a flight recording of %d: %r" % (path, n, other))
    if other["fnprof_flight_calls"] != len(xs):
        fail("fnprof_flight_calls %r, %d calls in the file" % (other["fnprof_flight_calls"], len(xs)))
    seqs, open_names, _ = expected(calls, threads, mode, dump)
    last_end = max(e["ts"] + e["dur"] for e in xs)
    by_thread = {}
    for e in xs:
        tid = e["tid"]
        thread = "main" if tid == pid else names.get(tid)
        if thread not in seqs:
            fail("a call on thread %r (%s), which the program does not have" % (tid, thread))
        by_thread.setdefault((thread, tid), []).append(e)
    if open_names and not any(th == "main" for th, _ in by_thread):
        fail("%s: no call on the main thread, where %r were open" % (path, open_names))
    ended_total = 0
    for (thread, _), evs in by_thread.items():
        # the order they ended: by end, a callee before its caller when they end together
        # (the later start; of one span, the file has the caller first: docs/trace.md)
        evs.sort(key=lambda e: (e["ts"] + e["dur"], -e["ts"], -e["at"]))
        got = [e["name"] for e in evs]
        if thread == "main" and open_names:
            tail = got[-len(open_names):]
            if sorted(tail) != sorted(open_names):
                fail("calls open at the write %r, expected %r" % (tail, open_names))
            for e in evs[-len(open_names):]:
                if e["ts"] + e["dur"] != last_end:
                    fail("open call %s does not end at the write" % e["name"])
            got = got[:-len(open_names)]
        want = seqs[thread]
        if got != want[len(want) - len(got):]:
            for i in range(len(got)):
                if got[len(got) - 1 - i] != want[len(want) - 1 - i]:
                    fail("%s: thread %s: not the last calls: %d-th from the end is %s, "
                         "expected %s" % (path, thread, i + 1, got[len(got) - 1 - i],
                                          want[len(want) - 1 - i]))
        ended_total += len(got)
    if ended_total != n and not (many and ended_total <= n):
        fail("%s: %d ended calls, expected exactly the last %d" % (path, ended_total, n))
    if other["fnprof_flight_overwritten"] <= 0:
        fail("no older call said overwritten")
    return len(xs)


def hwm_kb(path):
    return int(open(path).read().split()[0])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--format", default="json", choices=("json", "pftrace"))
    a = trace_run.parse(ap)
    work = a.workdir
    exe = trace_run.build(work, "ring_prog", ["-ldl"])
    global TRACE
    trace = TRACE = os.path.join(work, "t." + a.format)
    n, calls, threads = 10000, 30000, 2
    env = {"PROF_TRACE_LAST": str(n)}

    if a.case == "memory":
        # 20 M calls: all of them kept would be 320 MB of records; the ring holds N.
        big = 10 * 1000 * 1000
        base_hwm, ring_hwm = os.path.join(work, "hwm0"), os.path.join(work, "hwm1")
        r = run(exe, a.lib_dir, work, [big, 1, "exit", trace, base_hwm],
                {"PROF_TRACE": ""})
        if r.returncode != 0:
            fail("baseline run: %d %s" % (r.returncode, r.stderr))
        r = run(exe, a.lib_dir, work, [big, 1, "exit", trace, ring_hwm], env)
        if r.returncode != 0:
            fail("ring run: %d %s" % (r.returncode, r.stderr))
        base, ring = hwm_kb(base_hwm), hwm_kb(ring_hwm)
        # the pool (< 40 bytes a call of N, chunks included) and the exit's naming and
        # writing (< 200 bytes a call of N), over what the run takes without a trace
        bound = base + (240 * n) // 1024 + 2048
        if ring >= bound:
            fail("VmHWM %d kB >= %d kB (no trace: %d kB)" % (ring, bound, base))
        print("ok: %d calls, N=%d: VmHWM %d kB < %d kB (no trace: %d kB; keeping every "
              "call would take %d MB more)" % (2 * big + 2, n, ring, bound, base,
                                               2 * big * 16 >> 20))
        return

    if a.case == "many":
        # More threads at once than the pool has chunks for (N=64: 34 chunks, 48 threads):
        # the calls of threads left without one are not traced, and that is said.
        r = run(exe, a.lib_dir, work, [200000, 48, "exit", trace], {"PROF_TRACE_LAST": "64"})
        if r.returncode != 0 or "were not traced" not in r.stderr:
            fail("status %d, stderr %r" % (r.returncode, r.stderr))
        check_file(trace, 64, 200000, 48, "exit", False, many=True)
        other = (load_pftrace if a.format == "pftrace" else load_json)(trace)[0]
        if not other.get("fnprof_events_dropped", 0) > 0 and a.format == "json":
            fail("no dropped calls in otherData: %r" % other)
        print("ok: 48 threads, N=64: %s" % r.stderr.strip())
        return

    if a.case == "settings":
        # each bad or conflicting setting: one fnprof: line; no trace, or the flight one
        pf = os.path.join(work, "t.pftrace")
        for extra, line, written in (
                ({"PROF_TRACE_LAST": "abc"}, "PROF_TRACE_LAST=abc: not a positive", None),
                ({"PROF_TRACE_LAST": "0"}, "PROF_TRACE_LAST=0: not a positive", None),
                # the line quotes what was written, not a number read from it
                ({"PROF_TRACE_LAST": " -5"},
                 "fnprof: PROF_TRACE_LAST= -5: not a positive number of calls; no trace", None),
                ({"PROF_TRACE_LAST": "+5"},
                 "fnprof: PROF_TRACE_LAST=+5: not a positive number of calls; no trace", None),
                ({"PROF_TRACE_LAST": "0300000000"},
                 "fnprof: PROF_TRACE_LAST=0300000000: more than 268435456 calls; no trace", None),
                ({"PROF_TRACE_LAST": "100", "PROF_TRACE": ""}, "needs PROF_TRACE=FILE", None),
                ({"PROF_TRACE_LAST": "100", "PROF_TRACE_EVENTS": "5"},
                 "PROF_TRACE_EVENTS=5: PROF_TRACE_LAST=100 keeps the last calls", trace)):
            for f in (trace, pf):
                if os.path.exists(f):
                    os.unlink(f)
            r = run(exe, a.lib_dir, work, [1000, 1, "exit", trace], extra)
            lines = [x for x in r.stderr.splitlines() if x.startswith("fnprof:")]
            exact = line.startswith("fnprof: ")  # the whole line, else a part of it
            if r.returncode != 0 or len(lines) != 1 or (
                    lines[0] != line if exact else line not in lines[0]):
                fail("%r: status %d, stderr %r" % (extra, r.returncode, r.stderr))
            if written:
                check_file(written, 100, 1000, 1, "exit", False)
            elif os.path.exists(trace) or os.path.exists(pf):
                fail("%r: a trace was written" % (extra,))
        print("ok: every bad or conflicting setting said in one line")
        return

    r = run(exe, a.lib_dir, work, [calls, threads, a.case, trace],
            dict(env, PROF_DUMP_SIGNAL="USR2"))
    want = {"segv": -signal.SIGSEGV, "abort": -signal.SIGABRT}.get(a.case, 0)
    if r.returncode != want:
        fail("exit status %d, expected %d (as without fnprof): %s" % (r.returncode, want, r.stderr))
    if a.case in ("signal", "api"):
        k = check_file(trace + ".dump", n, calls, threads, a.case, True)
        k2 = check_file(trace, n, calls, threads, a.case, False)
        print("ok: %s: the dump holds the last %d calls (+%d open), the exit's the last %d "
              "after it" % (a.case, n, k - n, k2))
        return
    k = check_file(trace, n, calls, threads, a.case, False)
    print("ok: %s: status %d as without fnprof; the last %d calls of 2 threads (+%d open)"
          % (a.case, r.returncode, n, k - n))


if __name__ == "__main__":
    main()
# SPDX-License-Identifier: MIT
