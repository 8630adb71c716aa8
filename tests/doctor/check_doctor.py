#!/usr/bin/env python3
"""fnprof doctor and fnprof run, end to end (tests/doctor.cmake runs one case per test).

Programs are built here, at test time, with the C compiler CMake found, so that each case
can make the binary it is about: linked with -lfnprof or not, instrumented or not, with
shared libraries, with its DWARF moved to a separate file, static. Each check says what a
wrong implementation would get wrong; the first failure exits 1."""
import argparse
import json
import os
import pstats
import shutil
import signal
import stat
import subprocess
import sys

ap = argparse.ArgumentParser()
ap.add_argument("--fnprof", required=True)
ap.add_argument("--cc", required=True)
ap.add_argument("--libdir", required=True, help="the folder of libfnprof.so")
ap.add_argument("--src", required=True, help="tests/doctor")
ap.add_argument("--work", required=True)
ap.add_argument("--static-rt", help="app.c linked with libfnprof.a (a dynamic executable)")
ap.add_argument("case")
args = ap.parse_args()

work = os.path.join(args.work, args.case)
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
LINK_FNPROF = ["-L" + args.libdir, "-Wl,-rpath," + args.libdir, "-lfnprof"]


def fail(msg, r=None):
    if r is not None:
        msg += "\n--- exit %s\n--- stdout\n%s--- stderr\n%s" % (r.returncode, r.stdout, r.stderr)
    print("FAIL: " + msg)
    sys.exit(1)


def env():
    e = {k: v for k, v in os.environ.items() if not k.startswith("PROF_")}
    e.pop("LD_PRELOAD", None)
    return e


def sh(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode:
        fail("%s failed" % " ".join(cmd), r)
    return r


def build(name, srcs, flags=(), libs=()):
    out = os.path.join(work, name)
    sh([args.cc, "-g", "-O0"] + list(flags) + [os.path.join(args.src, s) for s in srcs]
       + ["-o", out] + list(libs))
    return out


def doctor(*argv, e=None):
    return subprocess.run([args.fnprof, "doctor"] + list(argv), capture_output=True,
                          text=True, env=e or env(), cwd=work)


def doctor_json(prog, *opts, status, e=None):
    r = doctor("--json", *opts, prog, e=e)
    if r.returncode != status:
        fail("doctor --json %s: exit %d, want %d" % (prog, r.returncode, status), r)
    try:
        d = json.loads(r.stdout)
    except ValueError as err:
        fail("doctor --json: not JSON (%s)" % err, r)
    if r.stderr:
        fail("doctor --json: something on stderr", r)
    return d


def module(d, name):
    for m in d["modules"]:
        if m["name"] == name or m["name"].startswith(name + "."):
            return m
    fail("no module %s in %s" % (name, [m["name"] for m in d["modules"]]))


def expect(cond, what, d=None):
    if not cond:
        fail(what + ("\n" + json.dumps(d, indent=1) if d is not None else ""))


def instrumented_app(d, name, functions=4):
    exe = d["modules"][0]
    expect(exe["role"] == "executable" and exe["name"] == name, "the executable comes first", d)
    expect(exe["instrumented"] is True, "app.c built -finstrument-functions is instrumented", d)
    # main, outer, middle, leaf at -O0: one call of the enter hook each.
    expect(exe["functions"] == functions,
           "want %d instrumented functions, got %s" % (functions, exe["functions"]), d)


# ---- doctor ----------------------------------------------------------------------------

def case_linked():
    """(a) -lfnprof: the hooks bind to libfnprof.so.0; exit 0; the table says so too."""
    app = build("app", ["app.c"], ["-finstrument-functions"], LINK_FNPROF)
    d = doctor_json(app, status=0)
    instrumented_app(d, "app")
    hooks = d["modules"][0]["hooks"]
    expect(hooks and hooks["name"].startswith("libfnprof.so") and hooks["kind"] == "fnprof",
           "the executable's hook calls go to libfnprof.so", d)
    lib = module(d, "libfnprof.so")
    expect(lib["instrumented"] is False and lib["defines_hooks"], "libfnprof defines the hooks", d)
    libc = module(d, "libc.so")
    expect(libc["instrumented"] is False and libc["role"] == "needed", "libc: not instrumented", d)
    expect(d["will_profile"] and d["kind"] == "pie", "a PIE that will profile", d)
    expect(d["modules"][0]["debug_info"] == "in-file", "-g: DWARF in the file", d)
    expect(any("libc.so.6" in s and "tottime" in s for s in d["blind_spots"]),
           "blind spots: libc's time goes to its callers", d)
    r = doctor(app)
    if r.returncode != 0 or "libfnprof.so.0 (fnprof)" not in r.stdout \
            or "yes, 4 functions" not in r.stdout or "verdict: will be profiled" not in r.stdout:
        fail("doctor's table: the hooks, the count and the verdict", r)
    print("doctor: -lfnprof binds to libfnprof.so.0, 4 functions, exit 0")


def case_not_linked():
    """(b) -finstrument-functions without fnprof: glibc's no-ops, exit 1, and the remedy;
    --run (fnprof run's preload) profiles."""
    app = build("app", ["app.c"], ["-finstrument-functions"])
    d = doctor_json(app, status=1)
    instrumented_app(d, "app")
    hooks = d["modules"][0]["hooks"]
    expect(hooks and hooks["name"] == "libc.so.6" and hooks["kind"] == "glibc-noop",
           "the hook calls go to glibc's no-ops", d)
    expect("PROF_OUTPUT will write nothing" in d["verdict"] and "-lfnprof" in d["verdict"]
           and "fnprof run" in d["verdict"], "the verdict names the trap and the remedy", d)
    expect(d["will_profile"] is False and d["will_profile_under_run"] is True,
           "not plainly, but under fnprof run", d)
    under = d["modules"][0]["hooks_under_run"]
    expect(under and under["kind"] == "fnprof", "under fnprof run: libfnprof.so's hooks", d)
    d = doctor_json(app, "--run", status=0)
    expect(d["mode"] == "fnprof run" and d["will_profile"], "--run: profiles", d)
    pre = [m for m in d["modules"] if m["role"] == "preload"]
    expect(len(pre) == 1 and pre[0]["name"].startswith("libfnprof.so"),
           "--run traces libfnprof.so as a preload", d)
    expect(d["modules"][0]["hooks"]["name"] == pre[0]["name"], "--run: bound to the preload", d)
    r = doctor(app)
    if r.returncode != 1 or "PROF_OUTPUT will write nothing" not in r.stdout \
            or "under fnprof run: will be profiled" not in r.stdout:
        fail("doctor's table: the trap and what fnprof run would do", r)
    print("doctor: not linked binds to glibc's no-ops, exit 1; --run profiles")


def case_uninstrumented():
    """(c) no -finstrument-functions: nothing to profile, exit 1."""
    app = build("app", ["app.c"])
    d = doctor_json(app, status=1)
    expect(d["modules"][0]["instrumented"] is False and d["modules"][0]["hooks"] is None,
           "an uninstrumented executable", d)
    expect("nothing to profile" in d["verdict"], "the verdict says why", d)
    expect(d["will_profile_under_run"] is False, "fnprof run cannot help either", d)
    print("doctor: an uninstrumented program exits 1")


def case_libraries():
    """(d) an instrumented and an uninstrumented shared library, in the loader's order."""
    build("libinstr.so", ["lib_instr.c"], ["-shared", "-fPIC", "-finstrument-functions"])
    build("libplain.so", ["lib_plain.c"], ["-shared", "-fPIC"])
    app = build("app", ["app.c"], ["-DWITH_LIBS", "-finstrument-functions"],
                ["-L" + work, "-Wl,-rpath," + work, "-linstr", "-lplain"] + LINK_FNPROF)
    d = doctor_json(app, status=0)
    names = [m["name"] for m in d["modules"]]
    want = ["app", "libinstr.so", "libplain.so"]
    expect([n for n in names if n in want] == want, "DT_NEEDED order: %s" % names, d)
    instr, plain = module(d, "libinstr.so"), module(d, "libplain.so")
    expect(instr["instrumented"] is True and instr["functions"] == 2,
           "libinstr.so: 2 instrumented functions", d)
    expect(instr["hooks"]["kind"] == "fnprof", "libinstr.so binds to libfnprof.so", d)
    expect(plain["instrumented"] is False and plain["hooks"] is None, "libplain.so: no", d)
    expect(instr["path"] == os.path.join(os.path.realpath(work), "libinstr.so"),
           "the path the loader found", d)
    expect(any("libplain.so" in s for s in d["blind_spots"]),
           "blind spots name the uninstrumented library", d)
    # Without -lfnprof, both instrumented modules go to glibc's no-ops.
    app2 = build("app2", ["app.c"], ["-DWITH_LIBS", "-finstrument-functions"],
                 ["-L" + work, "-Wl,-rpath," + work, "-linstr", "-lplain"])
    d = doctor_json(app2, status=1)
    expect(module(d, "libinstr.so")["hooks"]["kind"] == "glibc-noop",
           "libinstr.so alone binds to glibc", d)
    # A library gone: the program will not start, and doctor says which one.
    os.rename(os.path.join(work, "libplain.so"), os.path.join(work, "libplain.so.gone"))
    d = doctor_json(app, status=1)
    gone = module(d, "libplain.so")
    expect(gone["found"] is False and gone["path"] is None, "libplain.so not found", d)
    expect("will not start" in d["verdict"] and "libplain.so" in d["verdict"],
           "the verdict names the missing library", d)
    print("doctor: libraries listed in load order, each instrumented or not")


def case_debuglink():
    """(e) DWARF moved to a separate file: found beside the program, then under
    PROF_DEBUG_DIR; gone, the debuglink is named."""
    app = build("app", ["app.c"], ["-finstrument-functions"], LINK_FNPROF)
    dbg = app + ".debug"
    sh(["objcopy", "--only-keep-debug", app, dbg])
    sh(["objcopy", "--strip-debug", "--add-gnu-debuglink=" + dbg, app])
    d = doctor_json(app, status=0)
    exe = d["modules"][0]
    expect(exe["debug_info"] == "separate" and exe["debug_file"] == os.path.realpath(dbg),
           "the .gnu_debuglink file beside the program", d)
    root = os.path.join(work, "debugroot")
    moved = root + os.path.realpath(work) + "/app.debug"
    os.makedirs(os.path.dirname(moved))
    os.rename(dbg, moved)
    d = doctor_json(app, status=0)
    expect(d["modules"][0]["debug_info"] == "none" and
           ".gnu_debuglink" in (d["modules"][0]["debug_note"] or ""),
           "without the file: none, and the debuglink named", d)
    expect(any("no DWARF for app" in s for s in d["blind_spots"]), "blind spot: names", d)
    e = env()
    e["PROF_DEBUG_DIR"] = root
    d = doctor_json(app, status=0, e=e)
    expect(d["modules"][0]["debug_info"] == "separate" and
           d["modules"][0]["debug_file"] == moved, "found under PROF_DEBUG_DIR", d)
    r = doctor(app, e=e)
    if moved not in r.stdout:
        fail("the table names the debug file", r)
    print("doctor: separate debug file found beside the program and under PROF_DEBUG_DIR")


def case_not_elf():
    """(f) not an ELF file, a script, no such program: exit 2, one line on stderr."""
    text = os.path.join(work, "notes.txt")
    open(text, "w").write("hello\n")
    script = os.path.join(work, "wrap.sh")
    open(script, "w").write("#!/bin/sh\nexec true\n")
    os.chmod(script, 0o755)
    for path, msg in [(text, "not an ELF file"), (script, "a script, not an ELF file"),
                      ("/nonexistent/prog", "No such file or directory"),
                      ("no-such-program-anywhere", "No such file or directory")]:
        r = doctor(path)
        lines = r.stderr.splitlines()
        if r.returncode != 2 or len(lines) != 1 or not lines[0].startswith("fnprof: doctor: ") \
                or msg not in lines[0] or r.stdout:
            fail("doctor %s: want exit 2 and one line with %r" % (path, msg), r)
    # A name without '/' is looked up in PATH, as fnprof run's execvp does.
    e = env()
    e["PATH"] = work + ":" + e.get("PATH", "")
    build("app", ["app.c"], ["-finstrument-functions"], LINK_FNPROF)
    d = doctor_json("app", status=0, e=e)
    expect(d["program"] == os.path.join(os.path.realpath(work), "app"), "found in PATH", d)
    r = doctor()
    if r.returncode != 2 or "no program given" not in r.stderr:
        fail("doctor without a program: usage, exit 2", r)
    print("doctor: not ELF, a script, missing: exit 2")


def case_counts():
    """Functions, not hook call sites: inlined copies of an instrumented function call the
    hook from their callers; a stripped file, whose functions cannot be told apart, is
    counted in call sites and says so."""
    app = build("inlined", ["inlined.c"], ["-O1", "-finstrument-functions"])
    d = doctor_json(app, status=1)
    exe = d["modules"][0]
    expect(exe["functions"] == 5 and exe["hook_call_sites"] == 11,
           "inlined.c: 5 functions holding 11 hook call sites", d)
    r = doctor(app)
    if "yes, 5 functions " not in r.stdout:
        fail("the table counts functions", r)
    stripped = app + "-stripped"
    sh(["strip", "-o", stripped, app])
    d = doctor_json(stripped, status=1)
    exe = d["modules"][0]
    expect(exe["functions"] is None and exe["hook_call_sites"] == 11,
           "stripped: functions unknown, 11 call sites", d)
    r = doctor(stripped)
    if "yes, 11 hook call sites " not in r.stdout:
        fail("the table labels a stripped file's count as call sites", r)
    print("doctor: 5 functions (11 hook call sites); stripped: 11 hook call sites")


def case_current_directory():
    """A bare name: PATH first, as a shell and fnprof run look; a file of that name in the
    current directory and not in PATH is read, with one line saying so (and how to run it)."""
    build("app", ["app.c"], ["-finstrument-functions"], LINK_FNPROF)
    e = env()
    e["PATH"] = "/usr/bin:/bin"
    r = doctor("--json", "app", e=e)
    lines = r.stderr.splitlines()
    if r.returncode != 0 or len(lines) != 1 or \
            lines[0] != ("fnprof: doctor: app: not in PATH; reading ./app, the file in this "
                         "directory (run it as ./app)"):
        fail("doctor app, app in the current directory: want exit 0 and one line", r)
    d = json.loads(r.stdout)
    expect(d["program"] == os.path.join(os.path.realpath(work), "app"), "./app read", d)
    # In PATH too: PATH's wins, silently, as the shell's would.
    bindir = os.path.join(work, "bin")
    os.makedirs(bindir)
    shutil.copy(os.path.join(work, "app"), os.path.join(bindir, "app"))
    e["PATH"] = bindir + ":/usr/bin:/bin"
    d = doctor_json("app", status=0, e=e)
    expect(d["program"] == os.path.join(os.path.realpath(bindir), "app"), "PATH's app", d)
    print("doctor: a bare name from PATH, else from the current directory with a note")


def case_static():
    """(g) static programs: glibc's no-ops inside, or nothing; no libraries; fnprof run can't."""
    try:
        app = build("app", ["app.c"], ["-static", "-finstrument-functions"])
    except SystemExit:
        print("no static libc: skipped")
        sys.exit(77)
    d = doctor_json(app, status=1)
    expect(d["kind"] == "static" and len(d["modules"]) == 1 and d["loader"] is None,
           "a static program has no loader and no libraries", d)
    exe = d["modules"][0]
    # libc.a's enter and exit are one function: its calls cannot be told apart, so none
    # is counted.
    expect(exe["instrumented"] is True and exe["functions"] is None and exe["defines_hooks"],
           "instrumented, and its own (libc.a's) hooks", d)
    expect(exe["hooks"]["kind"] == "glibc-noop" and "static" in d["verdict"],
           "libc.a's no-ops: the verdict says static", d)
    r = doctor("--run", app)
    if r.returncode != 1 or "static" not in r.stderr:
        fail("doctor --run on a static program", r)
    plain = build("plain", ["app.c"], ["-static"])
    d = doctor_json(plain, status=1)
    expect(d["modules"][0]["instrumented"] is False and "nothing to profile" in d["verdict"],
           "static, uninstrumented", d)
    print("doctor: static programs")


def case_non_pie_and_static_runtime():
    """A non-PIE executable, and one with libfnprof.a linked in (the hooks its own)."""
    app = build("app", ["app.c"], ["-no-pie", "-fno-pie", "-finstrument-functions"], LINK_FNPROF)
    d = doctor_json(app, status=0)
    expect(d["kind"] == "executable", "non-PIE", d)
    instrumented_app(d, "app")
    if args.static_rt:
        d = doctor_json(args.static_rt, status=0)
        exe = d["modules"][0]
        expect(exe["defines_hooks"] and exe["hooks"]["name"] == exe["name"] and
               exe["hooks"]["kind"] == "fnprof", "libfnprof.a: the executable's own hooks", d)
        expect(exe["functions"] == 4, "4 functions through the ifunc's stub", d)
    print("doctor: non-PIE, and libfnprof.a linked in")


# ---- run -------------------------------------------------------------------------------

def run(*argv, cwd=None):
    return subprocess.run([args.fnprof, "run"] + list(argv), capture_output=True, text=True,
                          env=env(), cwd=cwd or work)


def calls(path, name):
    st = pstats.Stats(path).stats
    found = [v[1] for k, v in st.items() if k[2] == name]
    return sum(found)


def leftovers(out):
    base = os.path.basename(out)
    return sorted(f for f in os.listdir(os.path.dirname(out))
                  if f.startswith(base + ".") )


def case_run_status():
    """127 for a missing program, 126 for one that cannot run, as env(1)."""
    noexec = os.path.join(work, "noexec")
    open(noexec, "w").write("#!/bin/sh\n")
    os.chmod(noexec, 0o644)
    for argv, status, msg in [(["/nonexistent/prog"], 127, "No such file or directory"),
                              (["no-such-program-anywhere"], 127, "No such file or directory"),
                              ([noexec], 126, "Permission denied"),
                              ([work], 126, "Permission denied")]:
        for opts in ([], ["--no-merge"]):
            r = run(*opts, "--", *argv)
            lines = r.stderr.splitlines()
            if r.returncode != status or len(lines) != 1 or \
                    lines[0] != "fnprof: run: %s: %s" % (argv[0], msg):
                fail("run %s: want %d and one line with %r" % (argv, status, msg), r)
    print("run: 127 and 126 as env(1)")


def wrapper(name, body):
    path = os.path.join(work, name)
    open(path, "w").write("#!/bin/sh\n" + body)
    os.chmod(path, 0o755)
    return path


def case_run_wrapper_two_processes():
    """A script running the program twice: one profile at the path, calls summed."""
    build("worker", ["worker.c"], ["-finstrument-functions"])
    stale = os.path.join(work, "out.prof.99999")
    shutil.copy(os.devnull, stale)  # an old run's file: neither merged nor removed
    script = wrapper("twice.sh", "./worker 3\n./worker 5\nexit 4\n")
    r = run("-o", "out.prof", "--", script)
    out = os.path.join(work, "out.prof")
    if r.returncode != 4:
        fail("run: want the script's exit status 4", r)
    if not os.path.exists(out):
        fail("no profile at out.prof", r)
    if calls(out, "work") != 8 or calls(out, "main") != 2:
        fail("merged: work has %d calls (want 3+5), main %d (want 2)"
             % (calls(out, "work"), calls(out, "main")), r)
    if leftovers(out) != ["out.prof.99999"]:
        fail("per-process files left, or the stale one taken: %s" % leftovers(out), r)
    if "fnprof: run: merged the profiles of 2 processes into %s" % out not in r.stderr:
        fail("run must say how many processes it merged", r)
    # --no-merge: each process's file as the runtime named it.
    os.unlink(out)
    r = run("--no-merge", "-o", "out.prof", "--", script)
    parts = [f for f in leftovers(out) if f != "out.prof.99999"]
    if r.returncode != 4 or len(parts) != 2 or os.path.exists(out):
        fail("--no-merge: want two out.prof.<pid> files, got %s" % parts, r)
    print("run: a script running the program twice gives one profile with the sum")


def case_run_wrapper_exec():
    """A script that execs the program, and one that runs it once: the profile at the path."""
    build("worker", ["worker.c"], ["-finstrument-functions"])
    out = os.path.join(work, "out.prof")
    r = run("-o", "out.prof", "--", wrapper("exec.sh", "exec ./worker 3\n"))
    if r.returncode or not os.path.exists(out) or calls(out, "work") != 3 or leftovers(out):
        fail("exec: want out.prof with 3 calls of work and nothing else", r)
    os.unlink(out)
    r = run("-o", "out.prof", "--", wrapper("once.sh", "./worker 6\ntrue\n"))
    if r.returncode or not os.path.exists(out) or calls(out, "work") != 6 or leftovers(out):
        fail("one child: want its file moved to out.prof, 6 calls", r)
    if "fnprof: run: moved " not in r.stderr:
        fail("run says it moved the one file", r)
    # A plain program: written by the runtime itself, nothing said by run.
    os.unlink(out)
    r = run("-o", "out.prof", "--", "./worker", "2", "5")
    if r.returncode != 5 or calls(out, "work") != 2 or "fnprof: run:" in r.stderr:
        fail("plain program: exit 5, 2 calls, no message of run's", r)
    # The program's signal is fnprof run's.
    r = run("-o", "out.prof", "--", wrapper("kill.sh", "kill -TERM $$\n"))
    if r.returncode != -signal.SIGTERM:
        fail("a program killed by SIGTERM: want fnprof run killed by it too", r)
    print("run: exec'd and single-child scripts, plain programs, signals")


CASES = {n[5:]: f for n, f in globals().items() if n.startswith("case_")}
if args.case not in CASES:
    fail("unknown case %s (%s)" % (args.case, ", ".join(CASES)))
CASES[args.case]()
# SPDX-License-Identifier: MIT
