#!/usr/bin/env python3
"""The refusals and notes of compensation, through the command and the runtime: each is one
line on stderr, and the exit status says what happened.

    check_cli.py --fnprof BIN --lib-dir DIR --workdir DIR
"""
import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "e2e"))
import fnptree  # noqa: E402

FAILED = []


def check(cond, what):
    if not cond:
        FAILED.append(what)
        print("FAIL: " + what)


def run(cmd, env=None):
    return subprocess.run([str(c) for c in cmd], env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)


def refused(fnprof, args, status, words, what):
    r = run([fnprof, *args])
    lines = r.stderr.splitlines()
    check(r.returncode == status, f"{what}: exit {r.returncode}, not {status}: {r.stderr!r}")
    check(len(lines) == 1 and lines[0].startswith("fnprof: ") and words in lines[0],
          f"{what}: one line saying '{words}': {r.stderr!r}")
    check(r.stdout == "", f"{what}: nothing on stdout: {r.stdout[:200]!r}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fnprof", required=True)
    ap.add_argument("--lib-dir", required=True)
    ap.add_argument("--workdir", required=True)
    a = ap.parse_args()
    cc = shutil.which("gcc")
    if not cc:
        print("SKIP: needs gcc")
        return 77
    work = Path(a.workdir) / "cli"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    prog = work / "known"
    r = run([cc, "-O2", "-g", "-finstrument-functions", HERE / "known.c", "-o", prog])
    if r.returncode:
        sys.exit(r.stderr)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROF_")}
    env["LD_PRELOAD"] = str(Path(a.lib_dir) / "libfnprof.so")
    f = a.fnprof

    def profile(name, **extra):
        out = work / f"{name}.prof"
        r = run([prog, "work", "200"], dict(env, PROF_OUTPUT=str(out), **extra))
        check(r.returncode == 0 and out.exists(), f"{name}: written ({r.stderr!r})")
        return out, r.stderr

    raw, _ = profile("raw", PROF_QUIET="1")
    # the runtime: count-only has no times; a value that is not 0 or 1 is said and ignored
    counted, err = profile("counted", PROF_TIMER="none", PROF_COMPENSATE="1", PROF_QUIET="1")
    check(err.count("\n") == 1 and "PROF_COMPENSATE: a count-only run" in err,
          f"PROF_COMPENSATE=1 with PROF_TIMER=none: one line: {err!r}")
    _, err = profile("yes", PROF_COMPENSATE="yes", PROF_QUIET="1")
    check(err.count("\n") == 1 and "PROF_COMPENSATE=yes: not 0 or 1" in err,
          f"PROF_COMPENSATE=yes: one line: {err!r}")
    check("fnprof.compensated" not in dict(fnptree.read_meta(work / "yes.prof")),
          "PROF_COMPENSATE=yes: not compensated")
    _, err = profile("zero", PROF_COMPENSATE="0", PROF_QUIET="1")
    check(err == "", f"PROF_COMPENSATE=0: nothing said: {err!r}")

    refused(f, ["report", counted, "--compensate"], 1, "cannot compensate: no times",
            "report --compensate of a count-only profile")
    refused(f, ["convert", counted, "--compensate", "--to", "collapsed"], 1,
            "cannot compensate: no times", "convert --compensate of a count-only profile")
    refused(f, ["report", "--memory", raw, "--compensate"], 2, "--compensate",
            "report --memory --compensate")

    # files from elsewhere: CPython's cProfile (no tree, no calibration), an fnprof
    # profile without a calibration, one whose calibration is not a number
    cpy = work / "cpython.prof"
    run([sys.executable, "-c", f"import cProfile; cProfile.run('sum(range(9))', {str(cpy)!r})"])
    refused(f, ["report", cpy, "--compensate"], 1, "cannot compensate: no times",
            "report --compensate of CPython's profile")
    stats, tree = fnptree.read(raw)
    meta = fnptree.read_meta(raw)
    old = work / "old.prof"
    old.write_bytes(fnptree.encode(stats, tree, [(k, v) for k, v in meta
                                                 if not k.startswith("fnprof.hook")], 4))
    refused(f, ["report", old, "--compensate"], 1, "no calibration of the hooks",
            "report --compensate without a calibration")
    refused(f, ["convert", old, "--compensate", "--to", "html"], 1,
            "no calibration of the hooks", "convert --compensate without a calibration")
    check(run([f, "report", old]).returncode == 0, "the same file reports without --compensate")
    bad = work / "bad.prof"
    bad.write_bytes(fnptree.encode(stats, tree, [(k, "nan" if k == "fnprof.hook_in_ns" else v)
                                                 for k, v in meta], 4))
    refused(f, ["report", bad, "--compensate"], 1, "is not two costs in ns",
            "report --compensate of a calibration that is no number")
    if FAILED:
        print(f"{len(FAILED)} check(s) failed")
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
# SPDX-License-Identifier: MIT
