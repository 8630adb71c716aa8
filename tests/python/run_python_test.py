#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The Python package's end-to-end tests: python3 -m fnprof against cProfile (the oracle)
on pure Python, against counts derived from the loops on mixed Python and C, and every
thread. Run with the interpreter the build found; PYTHONPATH names the build's package.

usage: run_python_test.py CASE BUILD_DIR
       run_python_test.py --skip REASON CASE BUILD_DIR   (the interpreter is missing)
"""
import marshal
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import importlib.machinery

if sys.argv[1] == "--skip":
    print("SKIP:", sys.argv[2])
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
PROGS = os.path.join(HERE, "progs")
BUILD = os.path.abspath(sys.argv[2])
ENV = dict(os.environ, PYTHONPATH=os.path.join(BUILD, "python"))
for v in list(ENV):
    if v.startswith("PROF_") or v == "LD_PRELOAD":
        del ENV[v]


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def run(args, cwd, **kw):
    r = subprocess.run([sys.executable] + args, cwd=cwd, env=kw.pop("env", ENV),
                       capture_output=True, text=True, timeout=300, **kw)
    if r.returncode != 0:
        fail("%s: exit %d\n%s\n%s" % (args, r.returncode, r.stdout, r.stderr))
    return r


def load(path):
    with open(path, "rb") as f:
        return marshal.load(f)


def counts(stats, keep):
    """{func: (cc, nc, {caller: (nc, pc)})} for the functions keep() accepts, and the edges
    from callers it accepts."""
    out = {}
    for k, v in stats.items():
        if keep(k):
            out[k] = (v[0], v[1], {c: (e[0], e[1]) for c, e in v[4].items() if keep(c)})
    return out


def compare(want, got, what):
    bad = []
    for k in sorted(set(want) | set(got), key=str):
        if want.get(k) != got.get(k):
            bad.append("  %s\n    cProfile %s\n    fnprof   %s" % (k, want.get(k), got.get(k)))
    if bad:
        fail("%s: %d functions differ\n%s" % (what, len(bad), "\n".join(bad)))


def program_view(stats, oracle):
    """The program's own functions (those of pure.py, by base name) with every number, and
    the builtins they call with their edges from them only: a builtin's totals include the
    profilers' own calls of it. Keys with pure.py's path shortened to its base name."""
    def short(k):
        return ("pure.py",) + k[1:] if os.path.basename(k[0]) == "pure.py" else k

    stats = {short(k): (v[0], v[1], v[2], v[3], {short(c): e for c, e in v[4].items()})
             for k, v in stats.items()}
    oracle = {short(k): v for k, v in oracle.items()}
    mine = {k for k in oracle if k[0] == "pure.py"}
    called = {k for k, v in oracle.items() if k[0] == "~" and any(x in mine for x in v[4])}

    def keep(k):
        return k in mine or k in called or k[0] == "pure.py"

    out = counts(stats, keep)
    for k, (cc, nc, callers) in out.items():
        if k[0] == "~":
            out[k] = (None, None, callers)
    return out


def case_pure(tmp):
    """Every function of the program and every builtin it calls: calls, primitive calls
    and caller edges equal cProfile's."""
    script = os.path.join(tmp, "pure.py")
    shutil.copy(os.path.join(PROGS, "pure.py"), script)
    run(["-m", "cProfile", "-o", "c.prof", "pure.py"], tmp)
    run(["-m", "fnprof", "-o", "f.prof", "pure.py"], tmp)
    c, f = load(os.path.join(tmp, "c.prof")), load(os.path.join(tmp, "f.prof"))
    want, got = program_view(c, c), program_view(f, c)
    if len(want) < 25:
        fail("the oracle saw only %d functions" % len(want))
    compare(want, got, "pure")
    print("pure: %d functions and builtins equal cProfile's" % len(want))


def case_together(tmp):
    """3.12+: cProfile (sys.monitoring's profiler id) inside python3 -m fnprof (an id of its
    own), profiling the same run: each profile equals cProfile's alone."""
    if sys.version_info < (3, 12):
        print("SKIP: Python %d.%d has one profile hook per thread: cProfile and fnprof "
              "cannot share it (3.12+ only)" % sys.version_info[:2])
        sys.exit(77)
    shutil.copy(os.path.join(PROGS, "pure.py"), tmp)
    shutil.copy(os.path.join(PROGS, "together.py"), tmp)
    run(["-m", "cProfile", "-o", "alone.prof", "pure.py"], tmp)
    run(["-m", "fnprof", "-o", "f.prof", "together.py", "c.prof"], tmp)
    alone = load(os.path.join(tmp, "alone.prof"))
    want = program_view(alone, alone)
    for name in ("c.prof", "f.prof"):
        compare(want, program_view(load(os.path.join(tmp, name)), alone),
                "together: %s against cProfile alone" % name)
    print("together: cProfile and fnprof, in one run, each equal cProfile alone "
          "(%d functions)" % len(want))


def build_mixed(tmp, link):
    inc = sysconfig.get_paths()["include"]
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    cc = os.environ.get("CC", "cc")
    args = [cc, "-O1", "-g", "-fPIC", "-shared", "-finstrument-functions", "-I" + inc,
            os.path.join(PROGS, "mixed.c"), "-o", os.path.join(tmp, "mixed" + suffix)]
    if link:
        lib = os.path.join(BUILD, "lib")
        args += ["-L" + lib, "-Wl,-rpath," + lib, "-lfnprof"]
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode:
        fail("cannot build the extension: %s\n%s" % (" ".join(args), r.stderr))


def check_mixed(tmp, label):
    shutil.copy(os.path.join(PROGS, "mixed_main.py"), tmp)
    run(["-m", "fnprof", "-o", "m.prof", "mixed_main.py"], tmp)
    s = load(os.path.join(tmp, "m.prof"))
    N, K, R = 5, 4, 3

    def find(name):
        ks = [k for k in s if k[2] == name]
        if len(ks) != 1:
            fail("%s: %d functions named %s in %s" % (label, len(ks), name, sorted(s)))
        return ks[0]

    main = find("main")
    loop_b = find("<built-in method mixed.native_loop>")
    keys_b = find("<built-in method mixed.native_keys>")
    loop_c, keys_c, helper = find("native_loop"), find("native_keys"), find("helper")
    cb, keyfn = find("callback"), find("keyfn")
    want = {
        loop_b: (R, {main: R}),
        loop_c: (R, {loop_b: R}),  # the native function under the builtin that reached it
        helper: (R * N, {loop_c: R * N}),
        cb: (R * N, {loop_c: R * N}),  # the Python callback under the native frame
        keys_b: (1, {main: 1}),
        keys_c: (1, {keys_b: 1}),
        keyfn: (K, {keys_c: K}),  # a key= function called with PyObject_CallObject
    }
    for k, (nc, callers) in want.items():
        got = (s[k][1], {c: e[0] for c, e in s[k][4].items()})
        if got != (nc, callers):
            fail("%s: %s: want %s, got %s" % (label, k, (nc, callers), got))
    if loop_c[0] == "~" or not loop_c[0].endswith("mixed.c"):
        fail("%s: the native function is not keyed by its source: %s" % (label, loop_c))
    print("%s: Python -> C -> Python nests exactly" % label)


def case_mixed_linked(tmp):
    build_mixed(tmp, True)
    check_mixed(tmp, "mixed_linked")


def case_mixed_flags(tmp):
    build_mixed(tmp, False)
    check_mixed(tmp, "mixed_flags")


def case_threads(tmp):
    """Profile() in a plain python3 (no PROF_OUTPUT, no preload): threads started before
    and after enable are recorded, and pstats.Stats(prof) reads the result."""
    import json
    out = os.path.join(tmp, "t.json")
    r = run([os.path.join(PROGS, "threads.py"), out], tmp)
    got = json.load(open(out))
    want = {"work_before": [7, 7], "work_after": [11, 11]}
    if got != want:
        fail("threads: want %s, got %s (stderr %s)" % (want, got, r.stderr))
    if r.stderr:
        fail("threads: stderr not empty: %s" % r.stderr)
    print("threads: both threads' calls recorded")


def case_report(tmp):
    """Without -o: cProfile's report on stdout, after the program's own output, and the
    exit status is the program's."""
    script = os.path.join(tmp, "exit3.py")
    with open(script, "w") as f:
        f.write("import sys\ndef f():\n    print('hello')\nf()\nsys.exit(3)\n")
    r = subprocess.run([sys.executable, "-m", "fnprof", "-s", "calls", "exit3.py"], cwd=tmp,
                       env=ENV, capture_output=True, text=True, timeout=120)
    if r.returncode != 3:
        fail("report: exit %d, want 3\n%s" % (r.returncode, r.stderr))
    out = r.stdout
    if not out.startswith("hello\n") or "Ordered by: call count" not in out \
            or "exit3.py:2(f)" not in out:
        fail("report: unexpected stdout:\n%s" % out)
    print("report: printed as cProfile prints it; exit status kept")


def case_signals(tmp):
    """python3 -m fnprof keeps the program's signal behaviour: ^C (SIGINT) still raises
    KeyboardInterrupt in it and it dies of it as plain python does, its profile printed
    first as cProfile prints it; a SIGTERM sent to the
    command's pid alone ends the program too (not left running, orphaned); a missing script
    fails as cProfile's does, with no line about a profile; the report names no file."""
    import signal
    import time
    script = os.path.join(tmp, "intr.py")
    with open(script, "w") as f:
        f.write("import os, signal, time\nos.kill(os.getpid(), signal.SIGINT)\n"
                "time.sleep(30)\nprint('not interrupted')\n")
    r = subprocess.run([sys.executable, "-m", "fnprof", "intr.py"], cwd=tmp, env=ENV,
                       capture_output=True, text=True, timeout=120)
    if r.returncode != -signal.SIGINT or "KeyboardInterrupt" not in r.stderr \
            or "not interrupted" in r.stdout or "intr.py:1(<module>)" not in r.stdout:
        fail("SIGINT: exit %d, want -2 with KeyboardInterrupt\n%s\n%s"
             % (r.returncode, r.stdout, r.stderr))

    pidfile = os.path.join(tmp, "pid")
    script = os.path.join(tmp, "term.py")
    with open(script, "w") as f:
        f.write("import os, time\nopen(%r + '.tmp', 'w').write(str(os.getpid()))\n"
                "os.rename(%r + '.tmp', %r)\ntime.sleep(60)\n" % (pidfile, pidfile, pidfile))
    p = subprocess.Popen([sys.executable, "-m", "fnprof", "term.py"], cwd=tmp, env=ENV,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while not os.path.exists(pidfile):
        if p.poll() is not None:
            fail("SIGTERM: the command ended early: %d" % p.returncode)
        time.sleep(0.05)
    child = int(open(pidfile).read())
    p.send_signal(signal.SIGTERM)
    rc = p.wait(timeout=60)
    alive = True
    try:
        os.kill(child, 0)
    except ProcessLookupError:
        alive = False
    if alive:
        os.kill(child, signal.SIGKILL)
        fail("SIGTERM to the command left the program %d running" % child)
    if rc != -signal.SIGTERM:
        fail("SIGTERM: exit %d, want -15" % rc)

    r = subprocess.run([sys.executable, "-m", "fnprof", "missing.py"], cwd=tmp, env=ENV,
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 1 or "FileNotFoundError" not in r.stderr or "fnprof:" in r.stderr:
        fail("missing script: exit %d\n%s" % (r.returncode, r.stderr))

    script = os.path.join(tmp, "hello.py")
    with open(script, "w") as f:
        f.write("print('hello')\n")
    r = subprocess.run([sys.executable, "-m", "fnprof", "hello.py"], cwd=tmp, env=ENV,
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 0 or ".prof" in r.stdout or not r.stdout.startswith("hello\n"):
        fail("report names its temporary file:\n%s" % r.stdout)
    print("signals: SIGINT and SIGTERM as plain python; missing script as cProfile")


def case_fork(tmp):
    """os.fork and multiprocessing (fork) children write PROF_OUTPUT.<pid> (the latter ends
    with os._exit: the package writes it from multiprocessing's last finalizer); the
    parent's file holds the parent's calls only."""
    shutil.copy(os.path.join(PROGS, "fork.py"), tmp)
    run(["-m", "fnprof", "-o", "out.prof", "fork.py"], tmp)

    def work(path):
        s = load(path)
        return {k[2]: v[1] for k, v in s.items() if k[2].endswith("_work") or k[2] == "in_mp"}

    got = sorted((work(os.path.join(tmp, n)) for n in os.listdir(tmp)
                  if n.startswith("out.prof.")), key=str)
    want = sorted([{"child_work": 5}, {"in_mp": 1, "pool_work": 7}], key=str)
    if got != want or work(os.path.join(tmp, "out.prof")) != {"parent_work": 3}:
        fail("fork: children %s (want %s), parent %s" % (got, want,
                                                         work(os.path.join(tmp, "out.prof"))))
    print("fork: os.fork's and multiprocessing's children each wrote their own profile")


def run_controls(tmp, env, *args):
    shutil.copy(os.path.join(PROGS, "controls.py"), tmp)
    return run(["-m", "fnprof", "-o", "out.prof", "controls.py"] + list(args), tmp,
               env=dict(ENV, **env))


def own_calls(path):
    """{name: calls} of controls.py's functions in the profile at path."""
    return {k[2]: v[1] for k, v in load(path).items() if k[0].endswith("controls.py")}


def case_trace(tmp):
    """PROF_TRACE: the timeline holds the Python functions, with their calls."""
    import json
    run_controls(tmp, {"PROF_TRACE": "t.json"})
    events = json.load(open(os.path.join(tmp, "t.json")))["traceEvents"]
    names = [e.get("name") for e in events if e.get("ph") in ("X", "B")]
    for name, n in (("main", 1), ("big_alloc", 3), ("step_work", 6), ("kept", 4)):
        if names.count(name) != n:
            fail("trace: %s %d times, want %d (names: %s)" % (name, names.count(name), n,
                                                             sorted(set(names))))
    print("trace: the timeline names the Python calls")


def case_trace_mixed(tmp):
    """PROF_TRACE in both formats on Python -> C -> Python: Python frames and native calls
    on one track, each slice named and placed as the profile keys it (the Python callback
    under the native function under its builtin under the Python caller), the slices equal
    to the profile's calls, decoded by the independent readers."""
    import collections
    import json
    sys.path.insert(0, os.path.join(HERE, "..", "trace"))
    import read_pftrace
    build_mixed(tmp, False)
    shutil.copy(os.path.join(PROGS, "mixed_main.py"), tmp)
    N, K, R = 5, 4, 3
    chain = [("callback", "native_loop", R * N), ("native_loop",
             "<built-in method mixed.native_loop>", R),
             ("<built-in method mixed.native_loop>", "main", R), ("keyfn", "native_keys", K)]

    def check_chain(rel, label):
        got = collections.Counter((nm, p) for nm, p in rel)
        for child, parent, n in chain:
            if got[(child, parent)] != n:
                fail("trace_mixed: %s: %s under %s %d times, want %d" % (label, child, parent,
                                                                       got[(child, parent)], n))

    # Perfetto, streamed
    run(["-m", "fnprof", "-o", "p.prof", "mixed_main.py"], tmp,
        env=dict(ENV, PROF_TRACE="t.pftrace"))
    tracks, slices, _ = read_pftrace.read(os.path.join(tmp, "t.pftrace"))
    counts, total = read_pftrace.nest(slices)
    calls = read_pftrace.pstats_calls(os.path.join(tmp, "p.prof"))
    if dict(counts) != calls:
        fail("trace_mixed: pftrace slices differ from the profile's calls")
    rel, where = [], {}
    for track, evs in slices.items():
        stack = []
        for _, kind, name, loc in evs:
            if kind == "B":
                rel.append((name, stack[-1] if stack else None))
                where.setdefault(name, set()).add((track, loc))
                stack.append(name)
            else:
                stack.pop()
    check_chain(rel, "pftrace")
    if len({t for n in ("main", "native_loop", "callback") for t, _ in where[n]}) != 1:
        fail("trace_mixed: Python and native calls on different tracks: %s" % where)
    for name, suffix in (("callback", "mixed_main.py"), ("native_loop", "mixed.c")):
        if not all(loc and loc[0].endswith(suffix) and loc[1] > 0 for _, loc in where[name]):
            fail("trace_mixed: %s located at %s" % (name, where[name]))

    # Chrome JSON, at exit
    run(["-m", "fnprof", "-o", "j.prof", "mixed_main.py"], tmp,
        env=dict(ENV, PROF_TRACE="t.json"))
    r = subprocess.run([sys.executable, "-B", os.path.join(HERE, "..", "trace", "check_trace.py"),
                        os.path.join(tmp, "t.json"), os.path.join(tmp, "j.prof")],
                       capture_output=True, text=True)
    if r.returncode:
        fail("trace_mixed: check_trace: %s%s" % (r.stdout, r.stderr))
    events = [e for e in json.load(open(os.path.join(tmp, "t.json")))["traceEvents"]
              if e["ph"] == "X"]
    rel = []
    for tid in {e["tid"] for e in events}:
        mine = sorted((e for e in events if e["tid"] == tid),
                      key=lambda e: (round(e["ts"] * 1000), -round(e["dur"] * 1000)))
        stack = []  # (name, end, start) of the calls around
        for e in mine:
            t0 = round(e["ts"] * 1000)
            t1 = t0 + round(e["dur"] * 1000)
            # not around it: ended before it did, or lasted no time at its start (a
            # sibling inlined to nothing, as Py_DECREF can be)
            while stack and (stack[-1][1] < t1 or stack[-1][1] == stack[-1][2] == t0):
                stack.pop()
            rel.append((e["name"], stack[-1][0] if stack else None))
            stack.append((e["name"], t1, t0))
    check_chain(rel, "json")
    cats = {e["name"]: e["cat"] for e in events}
    if cats["callback"] != "frame" or cats["<built-in method mixed.native_loop>"] != "frame" \
            or cats["native_loop"] != "function":
        fail("trace_mixed: categories %s" % {n: cats[n] for n in (
            "callback", "<built-in method mixed.native_loop>", "native_loop")})
    if len({e["tid"] for e in events if e["name"] in ("main", "native_loop", "callback")}) != 1:
        fail("trace_mixed: Python and native calls on different threads")
    print("trace_mixed: Python frames and native calls nest on one track in both formats")


def case_memory(tmp):
    """PROF_MEMORY: the bytes malloc gave are charged to the Python frame that asked (a
    bytearray of 1 MiB goes to malloc; small objects stay in pymalloc's arenas), and the
    command's own process says nothing about the allocator."""
    r = run_controls(tmp, {"PROF_MEMORY": "m.prof"})
    s = load(os.path.join(tmp, "m.prof"))
    big = [v for k, v in s.items() if k[2] == "big_alloc"]
    if len(big) != 1 or big[0][1] != 3 or not 3 << 20 <= big[0][2] < (3 << 20) + 4096:
        fail("memory: big_alloc %s, want 3 calls and 3 MiB of its own" % big)
    if "PROF_MEMORY" in r.stderr:
        fail("memory: a line about the allocator: %s" % r.stderr)
    print("memory: big_alloc's 3 MiB charged to it")


def case_schedule(tmp):
    """PROF_SCHEDULE with fnprof.step(): step 0 paused, 1 warmup, 2-3 the first cycle; the
    second cycle is still active at exit."""
    run_controls(tmp, {"PROF_SCHEDULE": "wait=1,warmup=1,active=2"})
    got = [own_calls(os.path.join(tmp, "out.prof.cycle%d" % n)) for n in (1, 2)]
    want = [{"step_work": 2}, {"skipped": 4, "kept": 4}]
    if got != want:
        fail("schedule: cycles %s, want %s" % (got, want))
    print("schedule: fnprof.step() drives the cycles")


def case_dump_signal(tmp):
    """PROF_DUMP_SIGNAL=USR2: the dump holds what came before the signal, the exit's all."""
    run_controls(tmp, {"PROF_DUMP_SIGNAL": "USR2"}, "sig.prof")
    before, end = own_calls(os.path.join(tmp, "sig.prof")), own_calls(
        os.path.join(tmp, "out.prof"))
    if before.get("kept") != 4 or "after_signal" in before or end.get("after_signal") != 1:
        fail("dump_signal: at the signal %s, at exit %s" % (before, end))
    print("dump_signal: the signal's dump and the exit's")


def case_filter(tmp):
    """PROF_FILTER: name and file patterns match Python functions and builtins; what they
    leave out is as if not profiled (its callees hang from its caller)."""
    with open(os.path.join(tmp, "f.filt"), "w") as f:
        f.write("SCOREP_REGION_NAMES_BEGIN\n  EXCLUDE skipped <built-in\\ method\\ builtins.*>\n"
                "SCOREP_REGION_NAMES_END\nSCOREP_FILE_NAMES_BEGIN\n  EXCLUDE */threading.py\n"
                "SCOREP_FILE_NAMES_END\n")
    run_controls(tmp, {"PROF_FILTER": "f.filt"})
    s = load(os.path.join(tmp, "out.prof"))
    left = [k for k in s if k[2] == "skipped" or k[2].startswith("<built-in method builtins.")
            or k[0].endswith("/threading.py")]
    calls = own_calls(os.path.join(tmp, "out.prof"))
    if left or calls.get("kept") != 4:
        fail("filter: left in %s; kept %s" % (left, calls.get("kept")))
    print("filter: Python names, builtins and files left out")


def main():
    case = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="fnprof-py-")
    try:
        fn = globals().get("case_" + case)
        if fn is None:
            print("SKIP: no case %s yet" % case)
            sys.exit(77)
        fn(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
