#!/usr/bin/env python3
"""End-to-end cases of the streamed Perfetto trace (PROF_TRACE=*.pftrace): builds
stream_prog.c with -finstrument-functions, runs it under libfnprof.so, and decodes the
trace with read_pftrace.py (an independent wire-format reader).

usage: run_stream.py --case NAME --lib-dir DIR --workdir DIR
"""
import argparse
import collections
import glob
import os
import resource
import signal
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import read_pftrace  # noqa: E402
import trace_run  # noqa: E402


def build(work, name="stream_prog"):
    return trace_run.build(work, name)


def run(exe, lib, work, args, env_extra=None, preexec=None):
    return trace_run.run(exe, lib, work, args,
                         dict({"PROF_TRACE": os.path.join(work, "t.pftrace")}, **(env_extra or {})),
                         preexec)


def check(trace, prof=None, open_calls=0):
    """Decoded, nested, and (with prof) equal to the profile's calls function by function;
    open_calls: calls the profile counts that were still open (they end in the trace too)."""
    _, slices, instants = read_pftrace.read(trace)
    counts, total = read_pftrace.nest(slices)
    if not any(n == "fnprof: run" for n, _ in instants):
        raise SystemExit("%s: no run metadata" % trace)
    if prof:
        calls = read_pftrace.pstats_calls(prof)
        if calls != dict(counts):
            diff = {k: (counts.get(k), v) for k, v in calls.items() if counts.get(k) != v}
            raise SystemExit("%s: slices differ from the profile's calls: %r" % (trace, diff))
    return total, len(slices)


def parents(slices):
    """Per slice, (its name, its location, its parent's name or None, tid track uuid)."""
    out = []
    for track, evs in slices.items():
        stack = []
        for _, kind, name, loc in evs:
            if kind == "B":
                out.append((name, loc, stack[-1] if stack else None, track))
                stack.append(name)
            else:
                stack.pop()
    return out


def hwm_kb(path):
    return int(open(path).read().split()[1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=0)
    ap.add_argument("--fnprof", help="the fnprof command (case convert)")
    a = trace_run.parse(ap)
    work = a.workdir
    exe = build(work)
    trace, prof = os.path.join(work, "t.pftrace"), os.path.join(work, "out.prof")

    if a.case == "nesting":
        r = run(exe, a.lib_dir, work, [20000, 3, "exit"])
        assert r.returncode == 0, r.stderr
        total, tracks = check(trace, prof)
        assert tracks == 4, tracks
        print("ok: %d slices on %d tracks equal the profile's calls" % (total, tracks))
    elif a.case == "long":
        # Calls by the million through a 4 MB buffer: peak memory stays under a fixed
        # bound whatever the length (a trace kept in memory would take 16+ bytes a call).
        calls = a.calls or 4000000
        hwm = os.path.join(work, "hwm")
        r = run(exe, a.lib_dir, work, [calls // 3, 0, "exit", hwm], {"PROF_TRACE_BUFFER": "4"})
        assert r.returncode == 0, r.stderr
        kb = hwm_kb(hwm)
        # every call written (the writer's count; the nesting case decodes a whole file)
        total = sum(read_pftrace.pstats_calls(prof).values())
        assert total >= calls // 3 * 3, total
        assert "(%d calls)" % total in r.stderr, r.stderr
        assert os.path.getsize(trace) >= total * 20, os.path.getsize(trace)
        bound = 40 * 1024  # kB: the program, fnprof's tree and 4 MB of chunks
        assert kb < bound, "VmHWM %d kB >= %d kB" % (kb, bound)
        print("ok: %d calls traced whole; VmHWM %d kB (< %d kB)" % (total, kb, bound))
    elif a.case == "fork":
        r = run(exe, a.lib_dir, work, [10000, 1, "fork"])
        assert r.returncode == 0, r.stderr
        children = glob.glob(os.path.join(work, "t.pftrace.*"))
        children = [c for c in children if "fnprof-" not in c]
        assert len(children) == 1, children
        profs = [p for p in glob.glob(os.path.join(work, "out.prof.*")) if "fnprof-" not in p]
        check(trace, prof)
        check(children[0], profs[0])
        print("ok: parent and child traces, each equal to its profile")
    elif a.case in ("segv", "abort"):
        r = run(exe, a.lib_dir, work, [10000, 1, a.case])
        sig = signal.SIGSEGV if a.case == "segv" else signal.SIGABRT
        assert r.returncode == -sig, (r.returncode, r.stderr)
        total, tracks = check(trace)
        # worker's calls on both threads, every one kept; main still open, ended at death
        assert total >= 2 * 10000 * 3 + 1, total
        print("ok: died by %s as without fnprof; %d slices kept" % (sig.name, total))
    elif a.case == "deep":
        # A recursion 6,000 deep: chunks handed over with up to 6,000 frames open, past the
        # 1,024 a chunk's own room holds. Every begin must be there: the slices nest and
        # equal the profile's calls, and the deepest call lies under 6,000 others.
        depth = a.calls or 6000
        r = run(exe, a.lib_dir, work, [depth, 0, "deep"])
        assert r.returncode == 0, r.stderr
        total, _ = check(trace, prof)
        _, slices, _ = read_pftrace.read(trace)
        most = 0
        for evs in slices.values():
            d = 0
            for _, kind, _, _ in evs:
                d += 1 if kind == "B" else -1
                most = max(most, d)
        # main, deep() depth + 1 times, and a leaf at the bottom
        assert most == depth + 3, (most, depth + 3)
        assert total > 5 * 31744, total  # several chunks, handed over deep
        print("ok: %d slices, %d deep, nested and equal to the profile" % (total, most))
    elif a.case == "exit_race":
        # At exit the profile's dump and the trace's writer each name functions (two
        # symbolizer sessions): at once, they corrupted the heap in about 1 run in 30
        # (double free in libdwarf). 150 short runs, each must exit 0 (before: 4 and 7
        # of 150 died of SIGABRT).
        exe = os.path.join(work, "regions_prog")
        lib = a.lib_dir
        subprocess.check_call(["gcc", "-g", "-O1", "-finstrument-functions", "-pthread",
                               "-I", os.path.join(HERE, "..", "..", "include"),
                               os.path.join(HERE, "regions_prog.c"), "-o", exe,
                               "-L" + lib, "-Wl,-rpath," + lib, "-lfnprof"])
        for i in range(a.calls or 150):
            r = run(exe, lib, work, [5], {"PROF_QUIET": "1"})
            assert r.returncode == 0, (i, r.returncode, r.stderr)
        print("ok: %d runs, each exited 0" % (a.calls or 150))
    elif a.case == "regions":
        # Named regions on the tracks as functions are, in both formats: named as the
        # profile names them, with their source file and line, nested between the calls
        # around and inside them, on the thread that ran them; and the run's metadata,
        # pairs the program added while running included, in each file.
        import json
        src = os.path.join(HERE, "regions_prog.c")
        exe = os.path.join(work, "regions_prog")
        lib = a.lib_dir
        subprocess.check_call(["gcc", "-g", "-O1", "-finstrument-functions", "-pthread",
                               "-I", os.path.join(HERE, "..", "..", "include"), src, "-o",
                               exe, "-L" + lib, "-Wl,-rpath," + lib, "-lfnprof"])
        lines = {}
        for i, text in enumerate(open(src), 1):
            for region in ("parse item", "worker body", "load config", "span in thread"):
                if '"%s"' % region in text:
                    lines[region] = i
        n = 5
        r = run(exe, lib, work, [n])
        assert r.returncode == 0, r.stderr
        check(trace, prof)
        tracks, slices, instants = read_pftrace.read(trace)
        rel = parents(slices)
        want = {("parse item", "parse"): n + 2 * n, ("leaf", "parse item"): 3 * n,
                ("load config", "main"): 1, ("parse", "load config"): 1,
                ("worker body", "worker"): 1, ("span in thread", "worker body"): n,
                ("parse", "span in thread"): n}
        got = collections.Counter((nm, p) for nm, _, p, _ in rel)
        for k, v in want.items():
            assert got[k] == v, (k, got[k], v)
        for nm, loc, _, _ in rel:
            if nm in lines:
                assert loc and loc[0] in (src, os.path.realpath(src)), (nm, loc)
                assert loc[1] == lines[nm], (nm, loc, lines[nm])
        on = collections.defaultdict(set)
        for nm, _, _, track in rel:
            on[nm].add(track)
        assert len(on["worker body"]) == 1 and on["worker body"] != on["load config"], on
        meta = read_pftrace.metadata(trace)
        run_ann = [ann for nm, ann in instants if nm == "fnprof: run"]
        for m in (meta, run_ann[0] if run_ann else {}):
            for k in ("program", "pid", "start", "host", "clock"):
                assert m.get(k), (k, m)
            assert m.get("model") == "resnet50" and m.get("phase") == "done", m
        # the same run as a Chrome trace
        jprof = os.path.join(work, "j.prof")
        jtrace = os.path.join(work, "t.json")
        r = run(exe, lib, work, [n], {"PROF_OUTPUT": jprof, "PROF_TRACE": jtrace})
        assert r.returncode == 0, r.stderr
        subprocess.check_call([sys.executable, "-B", os.path.join(HERE, "check_trace.py"),
                               jtrace, jprof])
        doc = json.load(open(jtrace))
        for e in doc["traceEvents"]:
            if e["ph"] == "X" and e["name"] in lines:
                assert e["cat"] == "region", e
                assert e["args"]["line"] == lines[e["name"]], e
            elif e["ph"] == "X":
                assert e["cat"] == "function", e
        names = collections.Counter(e["name"] for e in doc["traceEvents"] if e["ph"] == "X")
        assert names["parse item"] == 3 * n and names["span in thread"] == n, names
        other = doc["otherData"]
        assert other.get("model") == "resnet50" and other.get("phase") == "done", other
        print("ok: regions named, placed and nested in both formats; metadata in both")
    elif a.case == "crash_in_malloc":
        # The program dies inside its malloc, holding malloc's lock, after 1,000 calls: no
        # chunk was handed over yet, so the writer needs malloc to end the file and blocks
        # for good. The process must still die by its signal at once (a hang detector:
        # the bound is far above the ~0.1 s it takes; waiting on the writer took 5 s), and
        # leave no half-written temporary.
        import time
        crash = build(work, "stream_crash")
        for how, sig in (("segv", signal.SIGSEGV), ("abort", signal.SIGABRT)):
            t0 = time.monotonic()
            r = run(crash, a.lib_dir, work, [1000, how])
            took = time.monotonic() - t0
            assert r.returncode == -sig, (how, r.returncode, r.stderr)
            assert took < 2.0, "%s: died after %.1f s" % (how, took)
            assert "writer is blocked" in r.stderr, r.stderr
            left = glob.glob(os.path.join(work, "t.pftrace*"))
            assert not left, "left: %r" % left
            print("ok: died by %s inside malloc in %.2f s, no file left" % (sig.name, took))
    elif a.case == "full_disk":
        # RLIMIT_FSIZE stands in for a full disk (a small tmpfs needs root): the writes
        # past it fail with EFBIG; the program's exit status and output stay its own.
        limit = 1 << 20
        r = run(exe, a.lib_dir, work, [300000, 1, "exit"],
                preexec=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit)))
        assert r.returncode == 0, (r.returncode, r.stderr)
        assert "cannot write the trace: File too large" in r.stderr, r.stderr
        assert not os.path.exists(trace), "a partial trace was left"
        left = glob.glob(os.path.join(work, "t.pftrace.fnprof-*"))
        assert not left, left
        print("ok: full disk mid-trace: one line, no file, exit status 0")
    elif a.case in ("exec", "busyexec"):
        # The image execs itself: the trace up to the exec finished then (no temporary
        # left beside it), the new image's in a file of its own (.exec1), each equal to
        # its profile. busyexec: a thread is still calling when main execs.
        r = run(exe, a.lib_dir, work, [10000, 1, a.case], {"PROF_TRACE_BUFFER": "1"})
        assert r.returncode == 0, r.stderr
        left = glob.glob(os.path.join(work, "*fnprof-*"))
        assert not left, "temporaries left: %r" % left
        assert os.path.exists(trace + ".exec1"), os.listdir(work)
        if a.case == "exec":
            check(trace, prof)
        else:
            check(trace)
        check(trace + ".exec1", prof + ".exec1")
        print("ok: the pre-exec trace complete, the new image's in .exec1")
    elif a.case == "busy":
        # Exit while other threads are still in hooks: their chunks are read, never
        # corrupted; the file decodes and nests.
        for i in range(3):
            r = run(exe, a.lib_dir, work, [2000, 3, "busy"], {"PROF_TRACE_BUFFER": "1"})
            assert r.returncode == 0, (r.returncode, r.stderr)
            total, tracks = check(trace)
            assert tracks == 4, tracks
        print("ok: 3 exits with 3 threads still calling; each trace nested")
    elif a.case == "convert":
        # fnprof convert --to chrome-trace: per thread, the same begins and ends, in the
        # same order, at the same times (to the nanosecond), as the independent reader
        # decodes from the Perfetto file.
        import json
        r = run(exe, a.lib_dir, work, [5000, 2, "exit"])
        assert r.returncode == 0, r.stderr
        out = os.path.join(work, "t.json")
        c = subprocess.run([a.fnprof, "convert", trace, "--to", "chrome-trace", "-o", out],
                           capture_output=True, text=True)
        assert c.returncode == 0, c.stderr
        tracks, slices, _ = read_pftrace.read(trace)
        want = {}
        for uuid, evs in slices.items():
            tid = tracks[uuid]["tid"]
            want[tid] = [(ts, k, n, tuple(loc) if loc else None) for ts, k, n, loc in evs]
        got = {}
        for e in json.load(open(out))["traceEvents"]:
            if e["ph"] not in "BE":
                continue
            loc = (e["args"]["file"], e["args"]["line"]) if "args" in e else None
            ts = round(float(e["ts"]) * 1000)
            got.setdefault(e["tid"], []).append((ts, e["ph"], e.get("name"), loc))
        assert set(got) == set(want), (sorted(got), sorted(want))
        for tid in want:
            if got[tid] != want[tid]:
                bad = next(i for i, (x, y) in enumerate(zip(got[tid], want[tid])) if x != y) \
                    if len(got[tid]) == len(want[tid]) else "length"
                raise SystemExit("thread %d: converted events differ at %s" % (tid, bad))
        counts, total = read_pftrace.nest(slices)
        # --compensate applies to profiles: refused for a trace in one line, status 2
        # (usage), before anything is written
        out2 = os.path.join(work, "t2.json")
        c = subprocess.run([a.fnprof, "convert", trace, "--to", "chrome-trace", "--compensate",
                            "-o", out2], capture_output=True, text=True)
        lines = c.stderr.splitlines()
        assert c.returncode == 2 and len(lines) == 1 and not c.stdout, (c.returncode, c.stderr)
        assert lines[0].startswith("fnprof: convert: --compensate applies to profiles"), lines
        assert not os.path.exists(out2) and not glob.glob(out2 + "*"), os.listdir(work)
        print("ok: %d slices on %d threads converted, each begin and end in place; "
              "--compensate refused" % (total, len(want)))
    elif a.case == "signal":
        # A signal handler's calls interrupting the trace's store and cold path, in each
        # kind of trace: no crash, no hang, the program's output and status its own.
        sig = os.path.join(work, "sig_prog")
        subprocess.check_call(["gcc", "-g", "-O1", "-finstrument-functions",
                               os.path.join(HERE, "sig_prog.c"), "-o", sig])
        for kind in ({"PROF_TRACE": os.path.join(work, "s.json")},
                     {"PROF_TRACE": os.path.join(work, "s.json"), "PROF_TRACE_LAST": "64"},
                     {"PROF_TRACE": os.path.join(work, "s.pftrace")}):
            # a Perfetto file is decoded here in Python: fewer calls for it
            pf = kind["PROF_TRACE"].endswith(".pftrace")
            calls = 400000 if pf else 4000000
            r = run(sig, a.lib_dir, work, [calls], kind)
            assert r.returncode == 0 and r.stdout == "done 1\n", (kind, r.returncode,
                                                                   r.stdout, r.stderr)
            if pf:
                total, _ = check(kind["PROF_TRACE"])
                assert total > calls * 0.9, total
        print("ok: handlers inside the trace's store: json, flight recorder, pftrace")
    elif a.case == "short_threads":
        n = a.calls or 100000
        hwm = os.path.join(work, "hwm")
        r = run(exe, a.lib_dir, work, [3, n, "short", hwm])
        assert r.returncode == 0, r.stderr
        total, tracks = check(trace, prof)
        assert tracks == n + 1, tracks
        # every thread's track named, and each short thread's holds all its calls: worker,
        # 3 mid, 6 leaf (begin and end each); main's holds main and hwm
        described, slices, _ = read_pftrace.read(trace)
        threads = [u for u, t in described.items() if t.get("kind") == "thread"]
        unnamed = [u for u in threads if not described[u].get("name")]
        assert len(threads) == n + 1 and not unnamed, (len(threads), len(unnamed))
        sizes = collections.Counter(len(slices[u]) for u in threads)
        assert sizes == {20: n, 4: 1}, sizes  # main: main, hwm
        # memory: the chunks in flight, not a state or a buffer per thread ended
        kb = hwm_kb(hwm)
        bound = 160 * 1024
        assert kb < bound, "VmHWM %d kB >= %d kB" % (kb, bound)
        print("ok: %d short threads, %d named tracks, %d slices; VmHWM %d kB (< %d kB)"
              % (n, tracks, total, kb, bound))
    else:
        raise SystemExit("unknown case " + a.case)
    return 0


if __name__ == "__main__":
    sys.exit(main())
# SPDX-License-Identifier: MIT
