#!/usr/bin/env python3
"""The patchable build's runtime (runtime/patch*.c): programs of progs/rt_*.c, built by
tests/patchable/runtime.cmake with fnprof-cc --patchable (gcc: fnprof-as, clang: XRay sleds),
run with their sites patched, and their profiles checked.

    run_runtime.py --progs DIR --cc gcc|clang --work DIR CASE

CASE (ctest: patchable.runtime.<case>.<cc>):
  calls, except, longjmp  the profile equals an independent count of the same binary's calls,
                 run unpatched under gdb (gdb_count.py: a breakpoint at each function's
                 entry, the real stack unwound at each hit): calls and primitive calls of
                 every function and edge, the same functions on both sides (an inlined one on
                 neither); again with PROF_TIMER=none, with PROF_TRACE (one event per call),
                 and with PROF_FILTER leaving one function out (calls: f2 goes, nothing else
                 moves). calls_cet: the same built with -fcf-protection=full, every
                 function starting with endbr64 before its entry site. valgrind's callgrind was tried first: it counts a landing pad that an
                 exception reaches as a new call, and loses recursion levels at a longjmp.
  signals        handlers running patched recursion on the thread's stack and on a
                 sigaltstack, from deep in patched recursion; and, paused, a handler on an
                 altstack above the thread's stack whose patched exits have no frame:
                 exact counts and edges (the program's)
  storm          8 threads calling hot() and leaf() through 2,000 pauses and resumes: no
                 crash, and per function, calls made wholly while recording <= the profile's
                 <= calls not made wholly while paused (each thread counts its own, by the
                 generation the main thread moves around each toggle)
  toggle         exceptions and longjmp across pauses and resumes: docs/controls.md's counts
  fork           40 forks while a thread pauses and resumes: every child exits cleanly and
                 its profile has exactly its fib calls (not with a thread loading libraries
                 too: a child forked during another thread's dlopen may find the loader's lock
                 held for ever, and the dump's dl_iterate_phdr waits for it)
  dlopen         a patchable library loaded after start, unloaded, 200 toggles after the
                 unload, loaded again while paused: exact counts, no crash
  dlstorm        a thread loads, calls and unloads that library 2,000 times while the main
                 thread pauses and resumes without a break: no crash (no write into a library
                 being unloaded), no more calls than made
  pausehot       another thread pauses while the main thread is deep in recursion whose exits
                 then stay patched: the profile holds exactly the calls entered before the
                 pause (the program's count), with PROF_TIMER=none too; and, under gdb, the
                 exits of the calls entered since never reach the trampolines' cold call
                 (exit_cold): only the calls open at the pause do
  refused        mprotect refused (PROF_TEST_PATCH_REFUSE=1, and a seccomp filter): one
                 fnprof line, output and exit status as without fnprof
  off            PROF_OUTPUT unset: no code page copied (written), the program's file never
                 opened by fnprof (strace); PROF_START=paused: none until fnprof_resume();
                 recording: copied (the measure works)
Every case checks that stderr holds nothing but the lines it expects. Exit 0 pass, 1 fail,
77 skipped (the reason printed). python3 standard library only.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "e2e"))
sys.dont_write_bytecode = True
import compare  # noqa: E402  (load_pstats, check_invariants)

TIMEOUT = 300
SKIP = 77
ROOT = "<process>"


class Failure(Exception):
    pass


class Skip(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failure(what)


def clean_env(extra=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROF_")}
    env.update(extra or {})
    return env


def run(cmd, extra=None, timeout=TIMEOUT, cwd=None):
    print("$ " + " ".join("%s=%s" % kv for kv in (extra or {}).items()) + " " + " ".join(cmd))
    try:
        p = subprocess.run(cmd, env=clean_env(extra), stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
                           cwd=cwd)
    except subprocess.TimeoutExpired:
        raise Failure("%s: still running after %d s" % (cmd[0], timeout))
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def fnprof_lines(err):
    return [l for l in err.splitlines() if l.startswith("fnprof:")]


def only_wrote(err, n=1):
    """stderr holds exactly n 'fnprof: wrote' lines and nothing else."""
    lines = err.splitlines()
    wrote = [l for l in lines if l.startswith("fnprof: wrote ")]
    check(len(wrote) == n and len(lines) == n,
          "stderr should hold %d 'fnprof: wrote' line(s) only:\n%s" % (n, err))


# ---- profiles -------------------------------------------------------------------------------

def load(path):
    stats, problems = compare.load_pstats(path)
    check(stats is not None, "profile %s: %s" % (path, "; ".join(problems)))
    problems += compare.check_invariants(stats)
    check(not problems, "profile %s: %s" % (path, "; ".join(problems)))
    return stats


def name_of(key):
    """A function's name as gdb gives it: C++ names without their parameters."""
    name = key[2]
    return ROOT if name == ROOT else name.split("(")[0]


def profile_counts(stats):
    """({name: (calls, primitive)}, {(caller, callee): (calls, primitive)}) of a profile;
    the root's edges under ROOT."""
    funcs, edges = {}, {}
    for key, (cc, nc, _tt, _ct, callers) in stats.items():
        name = name_of(key)
        if name == ROOT:
            continue
        check(name not in funcs, "two functions named %s in the profile" % name)
        funcs[name] = (nc, cc)
        for ckey, v in callers.items():
            edges[(name_of(ckey), name)] = (v[0], v[1])
    return funcs, edges


# ---- the independent count: gdb ------------------------------------------------------------

def gdb_counts(exe, args, work, funcs):
    """Calls and primitive calls of every function of funcs and of every edge between them
    (ROOT: from no function of funcs), counted by gdb on exe run unpatched (gdb_count.py)."""
    out = os.path.join(work, "gdb.json")
    rc, _o, err = run(["gdb", "-q", "-batch", "-nx", "-x", os.path.join(HERE, "gdb_count.py"),
                       "--args", exe] + args, {"GC_FUNCS": ",".join(sorted(funcs)), "GC_OUT": out})
    check(rc == 0 and os.path.exists(out), "gdb failed (%d):\n%s" % (rc, err[-3000:]))
    with open(out) as f:
        got = json.load(f)
    return ({k: tuple(v) for k, v in got["funcs"].items()},
            {tuple(k.split("\t")): tuple(v) for k, v in got["edges"].items()})


def same_counts(what, got, want):
    diff = []
    for k in sorted(set(got) | set(want), key=str):
        if got.get(k) != want.get(k):
            diff.append("  %-40s profile %-16s expected %s" % (k, got.get(k), want.get(k)))
    check(not diff, "%s differ (calls, primitive):\n%s" % (what, "\n".join(diff)))


# ---- cases ----------------------------------------------------------------------------------------

def prog(args, name):
    path = os.path.join(args.progs, "%s.%s" % (name, args.cc))
    check(os.path.exists(path), "%s is not built" % path)
    return path


PROGRAMS = {
    # name: (program, arguments, functions of the source left after inlining)
    "calls": ("rt_calls", ["4"], ["main", "work", "fib", "even", "odd", "many",
                                  "f0", "f1", "f2", "f3"]),
    "calls_cet": ("rt_calls_cet", ["4"], ["main", "work", "fib", "even", "odd", "many",
                                          "f0", "f1", "f2", "f3"]),
    "except": ("rt_except", ["60"], ["main", "catcher", "rethrow", "deep", "thrower",
                                      "after"]),
    "longjmp": ("rt_longjmp", ["60"], ["main", "catcher", "deep", "jumper", "after"]),
}


def case_independent(args, case):
    if not shutil.which("gdb"):
        raise Skip("gdb is not installed")
    name, pargs, names = PROGRAMS[case]
    exe = prog(args, name)
    rc, plain_out, err = run([exe] + pargs)
    check(rc == 0 and not err, "unprofiled run: status %d, stderr %r" % (rc, err))
    want_f, want_e = gdb_counts(exe, pargs, args.work, set(names))
    check(set(want_f) == set(names), "gdb saw %s, expected %s" % (sorted(want_f), names))
    want_e = {k: v for k, v in want_e.items() if not (k[0] == ROOT and k[1] == "main")}
    for mode, extra in (("timed", {}), ("count", {"PROF_TIMER": "none"}),
                        ("trace", {"PROF_TRACE": os.path.join(args.work, "trace.json")})):
        out = os.path.join(args.work, "%s.%s.prof" % (case, mode))
        rc, o, err = run([exe] + pargs, dict(extra, PROF_OUTPUT=out))
        check(rc == 0 and o == plain_out, "%s: status %d, output %r" % (mode, rc, o))
        only_wrote(err, 2 if mode == "trace" else 1)
        funcs, edges = profile_counts(load(out))
        edges = {k: v for k, v in edges.items() if not (k[0] == ROOT and k[1] == "main")}
        same_counts("%s: functions" % mode, funcs, want_f)
        same_counts("%s: edges" % mode, edges, want_e)
        if mode == "trace":
            with open(extra["PROF_TRACE"]) as f:
                events = json.load(f)["traceEvents"]
            per = {}
            for e in events:
                if e.get("ph") == "X":
                    per[e["name"].split("(")[0]] = per.get(e["name"].split("(")[0], 0) + 1
            check(per == {k: v[0] for k, v in want_f.items()},
                  "trace: events per function %s, calls %s" % (per, want_f))
    if case != "except" and case != "longjmp":
        # PROF_FILTER leaves f2 out: its sites are not patched, the rest is unchanged
        flt = os.path.join(args.work, "filter.txt")
        with open(flt, "w") as f:
            f.write("SCOREP_REGION_NAMES_BEGIN\n  EXCLUDE f2\nSCOREP_REGION_NAMES_END\n")
        out = os.path.join(args.work, "%s.filter.prof" % case)
        rc, o, err = run([exe] + pargs, {"PROF_OUTPUT": out, "PROF_FILTER": flt})
        check(rc == 0 and o == plain_out, "filter: status %d" % rc)
        only_wrote(err)
        funcs, edges = profile_counts(load(out))
        edges = {k: v for k, v in edges.items() if not (k[0] == ROOT and k[1] == "main")}
        same_counts("filter: functions", funcs,
                    {k: v for k, v in want_f.items() if k != "f2"})
        same_counts("filter: edges", edges, {k: v for k, v in want_e.items() if "f2" not in k})


def counts_of(path):
    return profile_counts(load(path))


def case_signals(args):
    exe = prog(args, "rt_signals")
    rounds, depth, kdepth = 50, 20, 6
    out = os.path.join(args.work, "signals.prof")
    rc, o, err = run([exe, str(rounds)], {"PROF_OUTPUT": out})
    check(rc == 0, "status %d" % rc)
    only_wrote(err)
    if "altstack above" not in o:
        print("the altstack is not above the thread's stack here: that part proves less")
    funcs, edges = counts_of(out)
    want = {"main": (1, 1), "down": (depth * rounds, rounds), "handler": (rounds, rounds),
            "inner": ((kdepth + 1) * rounds, rounds), "low_thread": (1, 1),
            "low": (depth * rounds, rounds), "after": (rounds, rounds)}
    same_counts("functions", funcs, want)
    want_e = {("main", "down"): (rounds, rounds),
              ("down", "down"): ((depth - 1) * rounds, rounds),
              ("down", "handler"): (rounds, rounds),
              ("handler", "inner"): (rounds, rounds),
              ("inner", "inner"): (kdepth * rounds, rounds),
              (ROOT, "low_thread"): (1, 1),
              ("low_thread", "low"): (rounds, rounds),
              ("low", "low"): ((depth - 1) * rounds, rounds),
              ("low", "after"): (rounds, rounds)}
    same_counts("edges", {k: v for k, v in edges.items() if k != (ROOT, "main")}, want_e)


def case_storm(args):
    exe = prog(args, "rt_storm")
    out = os.path.join(args.work, "storm.prof")
    rc, o, err = run([exe, "2000"], {"PROF_OUTPUT": out, "PROF_START": "paused"})
    check(rc == 0, "status %d, stderr %s" % (rc, err[-2000:]))
    only_wrote(err)
    m = re.match(r"calls=(\d+) on=(\d+) off=(\d+)", o)
    check(m, "output %r" % o)
    calls, on, off = (int(x) for x in m.groups())
    check(on > 0 and off > 0, "the windows were never clear: %s" % o)
    funcs, edges = counts_of(out)
    for name in ("hot", "leaf"):
        n, p = funcs.get(name, (0, 0))
        check(on <= n <= calls - off and n == p,
              "%s: %d calls in the profile; %d made while recording, %d not while paused"
              % (name, n, on, calls - off))
    check(funcs.get("spin") == (2000, 2000), "spin: %s" % (funcs.get("spin"),))
    # a worker's own call is recorded when its thread started after the first resume
    check(set(funcs) - {"worker"} == {"hot", "leaf", "spin"} and
          funcs.get("worker", (0, 0))[0] <= 8, "functions %s" % funcs)
    print("storm: %d calls, %d recorded for sure, %d paused for sure, profile hot %d"
          % (calls, on, off, funcs["hot"][0]))


def case_toggle(args):
    exe = prog(args, "rt_toggle")
    r = 100
    out = os.path.join(args.work, "toggle.prof")
    rc, o, err = run([exe, str(r)], {"PROF_OUTPUT": out})
    check(rc == 0, "status %d" % rc)
    only_wrote(err)
    funcs, edges = counts_of(out)
    want = {"main": (1, 1), "rec_outer": (r, r), "rec_mid": (r, r), "after_catch": (2 * r, 2 * r),
            "resumed_inner": (r, r)}
    same_counts("functions", funcs, want)
    want_e = {("main", "rec_outer"): (r, r),
              ("rec_outer", "rec_mid"): (r, r), ("rec_outer", "after_catch"): (r, r),
              ("main", "after_catch"): (r, r), ("main", "resumed_inner"): (r, r)}
    same_counts("edges", {k: v for k, v in edges.items() if k != (ROOT, "main")}, want_e)


def case_fork(args):
    exe = prog(args, "rt_fork")
    out = os.path.join(args.work, "fork.prof")
    for f in os.listdir(args.work):
        if f.startswith("fork.prof"):
            os.remove(os.path.join(args.work, f))
    rc, o, err = run([exe], {"PROF_OUTPUT": out})
    check(rc == 0 and o.strip() == "clean=40", "status %d, output %r, stderr %s" % (rc, o, err))
    children = [f for f in os.listdir(args.work) if re.match(r"fork\.prof\.\d+$", f)]
    check(len(children) == 40, "%d child profiles" % len(children))
    check(all(l.startswith("fnprof: wrote ") for l in err.splitlines()), "stderr:\n%s" % err)
    for c in children:
        funcs, _ = counts_of(os.path.join(args.work, c))
        check(funcs.get("fib") == (465, 1), "%s: fib %s" % (c, funcs.get("fib")))


def case_pausehot(args):
    exe = prog(args, "rt_pausehot")
    for mode, extra in (("timed", {}), ("count", {"PROF_TIMER": "none"})):
        out = os.path.join(args.work, "pausehot.%s.prof" % mode)
        rc, o, err = run([exe, "8"], dict(extra, PROF_OUTPUT=out))
        m = re.match(r"before=(\d+) rounds=(\d+)$", o.strip())
        check(rc == 0 and m, "%s: status %d, output %r, stderr %s" % (mode, rc, o, err))
        only_wrote(err)
        before, rounds = int(m.group(1)), int(m.group(2))
        funcs, edges = counts_of(out)
        # rounds 0-2 whole (2,047 calls each), round 3 to its first leaf (11)
        check(before == 3 * 2047 + 11, "%s: the program counts %d calls" % (mode, before))
        check(funcs.get("rec", (0, 0))[0] == before,
              "%s: rec %s in the profile, %d entered before the pause" %
              (mode, funcs.get("rec"), before))
        check(edges.get(("main", "rec"), (0, 0))[0] == rounds,
              "%s: main -> rec %s, %d rounds started before the pause" %
              (mode, edges.get(("main", "rec")), rounds))
    if not shutil.which("gdb"):
        raise Skip("gdb is not installed (the counts passed)")
    # round 3's calls after the pause: 2,036 exits through the patched exit sites, none of
    # them with an open frame; those open at the pause: rec's 11, main, the pauser
    out = os.path.join(args.work, "pausehot.gdb.prof")
    rc, o, err = run(["gdb", "-q", "-batch", "-nx", "-ex", "set breakpoint pending on",
                      "-ex", "set startup-with-shell off", "-ex", "break patch_hooks.c:exit_cold",
                      "-ex", "ignore 1 100000000", "-ex", "run", "-ex", "info breakpoints",
                      "--args", exe, "4"], {"PROF_OUTPUT": out})
    m = re.search(r"already hit (\d+) time", o)
    if rc != 0 or not m:
        raise Skip("gdb cannot count exit_cold (no symbols of libfnprof?):\n%s%s" %
                   (o[-1500:], err[-1500:]))
    hits = int(m.group(1))
    check(hits <= 20, "exit_cold ran %d times, for at most 13 calls open at the pause: the "
          "exits of calls entered while paused take the cold call" % hits)


def case_dlopen(args):
    exe = prog(args, "rt_dlopen")
    lib = os.path.join(args.progs, "rt_plugin.%s.so" % args.cc)
    check(os.path.exists(lib), "%s is not built" % lib)
    out = os.path.join(args.work, "dlopen.prof")
    rc, o, err = run([exe, lib], {"PROF_OUTPUT": out})
    check(rc == 0, "status %d, stderr %s" % (rc, err))
    only_wrote(err)
    funcs, edges = counts_of(out)
    n = 30 + 20
    want = {"plugin_entry": (n, n), "plugin_inner": (2 * n, 2 * n), "call_plugin": (n, n)}
    same_counts("functions", {k: funcs.get(k) for k in want}, want)
    same_counts("edges", {k: edges.get(k) for k in (("call_plugin", "plugin_entry"),
                                                    ("plugin_entry", "plugin_inner"))},
                {("call_plugin", "plugin_entry"): (n, n), ("plugin_entry", "plugin_inner"):
                 (2 * n, 2 * n)})


def case_dlstorm(args):
    exe = prog(args, "rt_dlopen")
    lib = os.path.join(args.progs, "rt_plugin.%s.so" % args.cc)
    out = os.path.join(args.work, "dlstorm.prof")
    rc, o, err = run([exe, lib, "storm"], {"PROF_OUTPUT": out})
    check(rc == 0, "status %d, stderr %s" % (rc, err))
    only_wrote(err)
    m = re.match(r"calls=(\d+)", o)
    check(m and int(m.group(1)) == 2000, "output %r" % o)
    funcs, _ = counts_of(out)
    n = funcs.get("plugin_entry", (0, 0))[0]
    check(n <= 2000 and funcs.get("plugin_inner", (0, 0))[0] <= 2 * n + 2,
          "plugin_entry %d, plugin_inner %s calls" % (n, funcs.get("plugin_inner")))


def case_refused(args):
    exe = prog(args, "rt_calls")
    rc0, out0, err0 = run([exe, "2"])
    check(rc0 == 0 and not err0, "unprofiled run: %d %r" % (rc0, err0))
    runs = [("hook", [exe, "2"], {"PROF_TEST_PATCH_REFUSE": "1"})]
    seccomp = os.path.join(args.progs, "rt_seccomp")
    rc, _o, err = run([seccomp, "true"])
    if rc == 0:
        runs.append(("seccomp", [seccomp, exe, "2"], {}))
    else:
        print("seccomp unavailable here (%d: %s): the test hook alone" % (rc, err.strip()))
    for what, cmd, extra in runs:
        out = os.path.join(args.work, "refused.%s.prof" % what)
        rc, o, err = run(cmd, dict(extra, PROF_OUTPUT=out))
        check(rc == rc0 and o == out0, "%s: status %d, output %r" % (what, rc, o))
        lines = err.splitlines()
        check(len(lines) == 1 and lines[0].startswith("fnprof: cannot patch the code of ") and
              "mprotect" in lines[0], "%s: stderr should be one fnprof line:\n%s" % (what, err))
        check(not os.path.exists(out), "%s: a profile was written" % what)


def case_off(args):
    exe = prog(args, "rt_dirty")

    def copied(extra, argv=()):
        rc, o, err = run([exe] + list(argv), extra)
        check(rc == 0, "status %d" % rc)
        m = re.search(r"code_copied_kb=(-?\d+)", o)
        check(m, "output %r" % o)
        return int(m.group(1)), err

    kb, err = copied({})
    check(kb == 0 and not err, "off: %d kB of code copied, stderr %r" % (kb, err))
    out = os.path.join(args.work, "off.prof")
    kb, err = copied({"PROF_OUTPUT": out, "PROF_START": "paused"})
    check(kb == 0, "paused: %d kB of code copied" % kb)
    kb, err = copied({"PROF_OUTPUT": out, "PROF_START": "paused"}, ["resume"])
    check(kb > 0, "paused, then resumed: no code copied: the measure cannot see a patch")
    only_wrote(err)
    kb, err = copied({"PROF_OUTPUT": out})
    check(kb > 0, "recording: no code copied")
    if not shutil.which("strace"):
        print("strace is not installed: the files opened are not checked")
        return
    trace = os.path.join(args.work, "strace.txt")
    for extra, opened in (({}, False), ({"PROF_OUTPUT": out}, True)):
        rc, o, err = run(["strace", "-f", "-e", "trace=open,openat", "-o", trace, exe], extra)
        check(rc == 0, "strace: %d %s" % (rc, err))
        with open(trace) as f:
            text = f.read()
        reads = "/proc/self/exe" in text or os.path.realpath(exe) in text.replace('"', " ").split()
        check(reads == opened, "PROF_OUTPUT %s: the program's file %s opened:\n%s"
              % ("set" if extra else "unset", "was" if reads else "was not", text[-3000:]))


CASES = {
    "calls": lambda a: case_independent(a, "calls"),
    "calls_cet": lambda a: case_independent(a, "calls_cet"),
    "except": lambda a: case_independent(a, "except"),
    "longjmp": lambda a: case_independent(a, "longjmp"),
    "signals": case_signals,
    "storm": case_storm,
    "toggle": case_toggle,
    "fork": case_fork,
    "dlopen": case_dlopen,
    "dlstorm": case_dlstorm,
    "pausehot": case_pausehot,
    "refused": case_refused,
    "off": case_off,
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--progs", required=True)
    ap.add_argument("--cc", required=True, choices=["gcc", "clang"])
    ap.add_argument("--work", required=True)
    ap.add_argument("case", choices=sorted(CASES))
    args = ap.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    try:
        CASES[args.case](args)
    except Skip as e:
        print("SKIP: %s" % e)
        return SKIP
    except Failure as e:
        print("FAIL: %s" % e)
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
# SPDX-License-Identifier: MIT
