#!/usr/bin/env python3
"""Builds one test program, runs it under fnprof and checks the result.

    run_case.py --cc gcc --opt=-O2 --mode preload --prog fib \\
                --lib-dir build/lib --include-dir include --workdir build/tests/e2e/fib.gcc-O2.preload

--check profile (default): PROG.c built plain and with -finstrument-functions; the plain
  build, the instrumented one under fnprof (PROF_OUTPUT set) and the Python mirror PROG.py
  print the same; the profiled run exits 0 with nothing on stderr but "fnprof:" lines; then
  compare.py: fnprof's numbers equal cProfile's for PROG.py.
--check no-output: the instrumented build with fnprof loaded and PROF_OUTPUT unset prints
  what the plain build prints, nothing on stderr, and writes no file.
--check timing: PROG.c (spin) under fnprof; timing.py checks the times.
--check count: as profile, in count-only mode (PROF_TIMER=none): the same counts, times that
  are call counts (compare.check_count_only), and stderr saying no times were taken.

--mode link links with -lfnprof (rpath to --lib-dir); --mode preload links nothing of fnprof
and runs with LD_PRELOAD=<lib-dir>/libfnprof.so. Sources are compiled from their own
directory by relative name, as most builds do: fnprof must make the path absolute.
Exit 0 pass, 1 fail, 2 bad usage or broken setup. python3 standard library only.
"""

import argparse
import os
import shlex
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree

import compare  # noqa: E402
import timing  # noqa: E402

TIMEOUT = 120  # seconds, per command


class Failure(Exception):
    """A check failed: the message says which and why."""


def clean_env():
    """The environment without anything that would change fnprof's, the loader's or a
    sanitizer's behaviour (tests/robust/run_robust.py runs with it too)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PROF_", "FNPROF_", "TSAN_", "ASAN_", "LSAN_"))
           and k not in ("LD_PRELOAD", "LD_AUDIT")}
    env["LC_ALL"] = "C"
    return env


def show(cmd, env_extra=None, cwd=None):
    text = " ".join(shlex.quote(c) for c in cmd)
    if env_extra:
        text = " ".join("%s=%s" % (k, shlex.quote(v)) for k, v in env_extra.items()) + " " + text
    if cwd:
        text = "(cd %s && %s)" % (shlex.quote(cwd), text)
    print("$ " + text, flush=True)


def run(cmd, cwd, env_extra=None):
    """Runs cmd; returns (exit status, stdout, stderr, wall seconds)."""
    show(cmd, env_extra, cwd)
    env = clean_env()
    env.update(env_extra or {})
    start = time.monotonic()
    try:
        p = subprocess.run(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        raise Failure("%s: still running after %d s" % (cmd[0], TIMEOUT))
    wall = time.monotonic() - start
    return (p.returncode, p.stdout.decode("utf-8", "replace"),
            p.stderr.decode("utf-8", "replace"), wall)


def compile_prog(cc, args, src_dir, source, output, flags, libs=()):
    """cc -g OPT FLAGS SOURCE -o OUTPUT LIBS: libraries after the source, or the linker
    (--as-needed) drops them."""
    cmd = [cc, "-g", args.opt] + list(flags) + [source, "-o", output] + list(libs)
    status, out, err, _ = run(cmd, src_dir)
    sys.stdout.write(out + err)
    if status != 0:
        raise compare.SetupError("compiling %s failed (status %d)" % (source, status))


def needed(binary):
    """The binary's DT_NEEDED entries, as readelf -d prints them."""
    status, out, err, _ = run(["readelf", "-d", binary], None)
    if status != 0:
        raise compare.SetupError("readelf -d %s: %s" % (binary, err))
    return out


def excerpt(text, limit=2000):
    return text if len(text) <= limit else text[:limit] + "\n... (%d more bytes)" % (
        len(text) - limit)


def expect_same(what, got, want):
    if got != want:
        raise Failure("%s differs:\n--- want\n%s\n--- got\n%s" % (what, excerpt(want),
                                                                 excerpt(got)))


def fnprof_stderr_only(err):
    bad = [line for line in err.splitlines() if not line.startswith("fnprof:")]
    if bad:
        raise Failure("stderr has lines not from fnprof:\n%s" % excerpt(err))


def check_merged_label(prof, err, max_nodes):
    """Beyond PROF_MAX_NODES the merge is said on stderr and in the file, as a function
    ('~', 0, '<fnprof: N calls merged beyond PROF_MAX_NODES=M: ...>') of one call, no time."""
    want = "beyond PROF_MAX_NODES=%d" % max_nodes
    if not any(line.startswith("fnprof: ") and want in line for line in err.splitlines()):
        raise Failure("PROF_MAX_NODES=%d: stderr does not say calls were merged" % max_nodes)
    stats, _ = compare.load_pstats(prof)
    labels = [k for k in (stats or {}) if k[0] == "~" and k[2].startswith("<fnprof: ")
              and want in k[2]]
    if len(labels) != 1 or stats[labels[0]][:4] != (1, 1, 0.0, 0.0):
        raise Failure("PROF_MAX_NODES=%d: no label function (1 call, no time) in the file: %s"
                      % (max_nodes, [k for k in (stats or {}) if k[0] == "~"]))
    print("run_case: labelled: %s" % labels[0][2])


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cc", required=True, help="C compiler: gcc or clang (name or path)")
    p.add_argument("--opt", required=True, help="optimisation flag, e.g. -O0 or -O2")
    p.add_argument("--mode", required=True, choices=("link", "preload"))
    p.add_argument("--prog", required=True, help="program name: progs/PROG.c (and PROG.py)")
    p.add_argument("--lib-dir", required=True, help="directory holding libfnprof.so")
    p.add_argument("--include-dir", required=True, help="fnprof's public headers")
    p.add_argument("--workdir", required=True, help="scratch directory, emptied first")
    p.add_argument("--check", default="profile", choices=("profile", "no-output", "timing", "count"))
    p.add_argument("--progs-dir", default=os.path.join(HERE, "progs"))
    p.add_argument("--max-nodes", type=int,
                   help="PROF_MAX_NODES for the run; the profile must say calls were merged")
    args = p.parse_args(argv)

    try:
        run_case(args)
    except compare.SetupError as e:
        print("run_case: test setup: %s" % e, file=sys.stderr)
        return 2
    except Failure as e:
        print("run_case: FAIL: %s" % e, file=sys.stderr)
        return 1
    return 0


def run_case(args):
    progs = os.path.abspath(args.progs_dir)
    c_source = os.path.join(progs, args.prog + ".c")
    if not os.path.isfile(c_source) and os.path.isfile(os.path.join(progs, args.prog + ".cc")):
        c_source = os.path.join(progs, args.prog + ".cc")  # C++: --cc names g++ or clang++
    py_source = os.path.join(progs, args.prog + ".py")
    lib_dir = os.path.abspath(args.lib_dir)
    libfnprof = os.path.join(lib_dir, "libfnprof.so")
    workdir = os.path.abspath(args.workdir)
    cc = shutil.which(args.cc)
    if cc is None:
        raise compare.SetupError("compiler %r not found" % args.cc)
    if not os.path.isfile(c_source):
        raise compare.SetupError("no %s" % c_source)
    if args.check in ("profile", "count") and not os.path.isfile(py_source):
        raise compare.SetupError("no Python mirror %s" % py_source)
    if not os.path.isfile(libfnprof):
        raise Failure("no %s: build the fnprof_shared target first" % libfnprof)

    shutil.rmtree(workdir, ignore_errors=True)
    os.makedirs(workdir)
    rundir = os.path.join(workdir, "run")  # the programs' cwd: it must stay empty
    os.makedirs(rundir)
    source = os.path.basename(c_source)  # compiled from its directory, by relative name
    plain = os.path.join(workdir, args.prog + ".plain")
    instrumented = os.path.join(workdir, args.prog)
    prof = os.path.join(workdir, args.prog + ".prof")

    # The plain build compiles fnprof.h's calls away, as a user's release build would.
    if args.check != "timing":
        compile_prog(cc, args, progs, source, plain,
                     ["-I", os.path.abspath(args.include_dir), "-DFNPROF_DISABLE"])
    fnprof_flags = ["-finstrument-functions", "-I", os.path.abspath(args.include_dir)]
    libs = []
    if args.mode == "link":
        libs = ["-L", lib_dir, "-Wl,-rpath," + lib_dir, "-lfnprof"]
    compile_prog(cc, args, progs, source, instrumented, fnprof_flags, libs)
    if args.mode == "link" and "libfnprof.so" not in needed(instrumented):
        raise compare.SetupError("%s does not need libfnprof.so: link mode tests nothing"
                                 % instrumented)
    loader = {"LD_PRELOAD": libfnprof} if args.mode == "preload" else {}

    if args.check != "timing":
        status, want_out, err, _ = run([plain], rundir)
        if status != 0 or err:
            raise compare.SetupError("the plain build exits %d, stderr %r" % (status, err))

    if args.check == "no-output":
        status, out, err, _ = run([instrumented], rundir, loader)
        if status != 0:
            raise Failure("exit status %d with PROF_OUTPUT unset" % status)
        expect_same("stdout with PROF_OUTPUT unset", out, want_out)
        if err:
            raise Failure("stderr with PROF_OUTPUT unset is not empty:\n%s" % excerpt(err))
        left = sorted(os.listdir(rundir)) + sorted(f for f in os.listdir(workdir)
                                                   if f.endswith(".prof"))
        if left:
            raise Failure("PROF_OUTPUT unset, yet files were written: %s" % " ".join(left))
        print("run_case: PROF_OUTPUT unset: same output, nothing on stderr, no file")
        return

    if args.check in ("profile", "count"):
        status, mirror_out, err, _ = run([sys.executable, "-B", py_source], rundir)
        if status != 0:
            raise compare.SetupError("the Python mirror exits %d: %s" % (status, err))
        if mirror_out != want_out:
            raise compare.SetupError("the Python mirror prints something else than %s:\n%s\n%s"
                                     % (source, want_out, mirror_out))

    env = dict(loader, PROF_OUTPUT=prof)
    if args.check == "count":
        env["PROF_TIMER"] = "none"
    if args.max_nodes:
        env["PROF_MAX_NODES"] = str(args.max_nodes)
    status, out, err, wall = run([instrumented], rundir, env)
    sys.stdout.write(err)
    if status != 0:
        raise Failure("exit status %d under fnprof" % status)
    fnprof_stderr_only(err)
    if args.check in ("profile", "count"):
        expect_same("stdout under fnprof", out, want_out)
    if args.check == "count" and "count-only: no times taken" not in err:
        raise Failure("PROF_TIMER=none: stderr does not say that no times were taken")
    if os.listdir(rundir):
        raise Failure("files written in the program's cwd: %s" % " ".join(os.listdir(rundir)))
    # The file is written whole (a temporary file renamed over PROF_OUTPUT): none may be left.
    made = {os.path.basename(f) for f in (plain, instrumented, prof, rundir)}
    stray = sorted(set(os.listdir(workdir)) - made)
    if stray:
        raise Failure("files left beside PROF_OUTPUT: %s" % " ".join(stray))
    if not os.path.isfile(prof):
        raise Failure("no profile written at PROF_OUTPUT=%s" % prof)

    if args.max_nodes:
        check_merged_label(prof, err, args.max_nodes)
    if args.check == "timing":
        ok = timing.check_timing(c_source, prof, out, wall, sys.stdout)
    else:
        ok = compare.compare(c_source, py_source, prof, out=sys.stdout,
                             count_only=args.check == "count", times=not args.max_nodes)
    if not ok:
        raise Failure("%s: fnprof's profile is wrong (see above)" % args.prog)


if __name__ == "__main__":
    sys.exit(main())
# SPDX-License-Identifier: MIT
