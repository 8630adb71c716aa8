#!/usr/bin/env python3
"""End-to-end checks of what PROF_OUTPUT and friends do, on a program that chdirs and
calls exit() deep in its stack (exit_deep.c). Each check names what a wrong runtime gets
wrong; the first failure exits 1 with a message."""
import argparse
import os
import pstats
import subprocess
import sys
import tempfile

ap = argparse.ArgumentParser()
ap.add_argument("--prog", required=True, help="exit_deep built with -finstrument-functions")
ap.add_argument("--lib", required=True, help="libfnprof.so")
args = ap.parse_args()


def run(env_extra, cwd):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROF_")}
    env["LD_PRELOAD"] = args.lib
    env.update(env_extra)
    return subprocess.run([args.prog], cwd=cwd, env=env, capture_output=True, text=True)


def fail(msg, r=None):
    if r is not None:
        msg += f"\n  exit {r.returncode}\n  stdout {r.stdout!r}\n  stderr {r.stderr!r}"
    sys.exit("FAIL: " + msg)


def by_name(path):
    return {k[2]: v for k, v in pstats.Stats(path).stats.items()}


with tempfile.TemporaryDirectory() as d:
    # Relative path, taken against the start directory although the program chdirs.
    os.makedirs(f"{d}/rel")
    r = run({"PROF_OUTPUT": "rel/out.prof"}, d)
    if r.returncode != 3:
        fail("exit status changed", r)
    f = by_name(f"{d}/rel/out.prof")
    if f["work"][:2] != (1, 5) or f["main"][:2] != (1, 1) or f["leave_now"][:2] != (1, 1):
        fail(f"open calls at exit() not counted: {f}")
    if not (f["main"][3] >= f["work"][3] >= f["leave_now"][3] > 0):
        fail(f"open calls' times not nested: {f}")
    lines = r.stderr.splitlines()
    if len(lines) != 1 or not lines[0].startswith("fnprof: wrote "):
        fail("expected exactly one 'fnprof: wrote' line", r)

    # PROF_QUIET=1: nothing on stderr; %p: the pid; %% a percent sign.
    r = run({"PROF_OUTPUT": f"{d}/p%p%%.prof", "PROF_QUIET": "1"}, d)
    pid = r.stdout.split()[1]
    if r.stderr or not os.path.exists(f"{d}/p{pid}%.prof"):
        fail("PROF_QUIET or %p expansion", r)

    # Unwritable: a missing directory. One line naming the path and the cause; status kept;
    # nothing else created.
    before = set(os.listdir(d))
    r = run({"PROF_OUTPUT": f"{d}/missing/out.prof"}, d)
    lines = r.stderr.splitlines()
    if r.returncode != 3 or len(lines) != 1 or not lines[0].startswith("fnprof: ") \
            or "missing/out.prof" not in lines[0] or "No such file" not in lines[0]:
        fail("unwritable PROF_OUTPUT", r)
    if set(os.listdir(d)) != before:
        fail("files left behind by a failed write")

    # A directory that is a regular file: the cause is named.
    open(f"{d}/afile", "w").close()
    r = run({"PROF_OUTPUT": f"{d}/afile/out.prof"}, d)
    if r.returncode != 3 or "Not a directory" not in r.stderr:
        fail("PROF_OUTPUT under a file", r)

    # Unset or empty: inert, silent, no file.
    for env in ({}, {"PROF_OUTPUT": ""}):
        before = set(os.listdir(d))
        r = run(env, d)
        if r.returncode != 3 or r.stderr or set(os.listdir(d)) != before:
            fail(f"inert run with {env} was not silent", r)
print("env checks passed")
