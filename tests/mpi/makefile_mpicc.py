#!/usr/bin/env python3
"""The README's MPI build line on a Makefile of Open MPI's kind (one that compiles and links
with its own $(MPICC), as Open MPI's examples do): the program it builds must be
instrumented and linked with libfnprof (fnprof doctor says it will be profiled). Also: the
line that sets only CC builds an uninstrumented program, and fnprof doctor says so.

    makefile_mpicc.py --bin DIR --readme README.md --work DIR [--mpicc mpicc.mpich]

DIR holds fnprof, fnprof-cc. --mpicc: the README's line with another MPI's compiler
(FNPROF_CC=mpicc.mpich, MPICH beside Open MPI); the program must then need that MPI. Exit 0 pass, 1 fail, 77 skipped (no mpicc or make).
python3 standard library only.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def readme_line(readme):
    """The README's MPI build command: the shell line naming FNPROF_CC=mpicc."""
    for line in open(readme):
        if "FNPROF_CC=mpicc" in line and "make" in line:
            return line.split("#")[0].strip()
    fail("%s: no MPI build line (FNPROF_CC=mpicc ... make)" % readme)


def build(cmd, work, env):
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(os.path.join(HERE, "makefile"), work)
    r = subprocess.run(["sh", "-c", cmd], cwd=work, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        fail("%s: exit %d\n%s%s" % (cmd, r.returncode, r.stdout, r.stderr))
    return os.path.join(work, "hello_c")


def doctor(fnprof, prog, env):
    r = subprocess.run([fnprof, "doctor", "--json", prog], env=env, capture_output=True,
                       text=True)
    try:
        return r.returncode, json.loads(r.stdout)
    except ValueError:
        fail("fnprof doctor --json %s: exit %d, %s" % (prog, r.returncode, r.stderr))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--readme", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--mpicc", default="mpicc")
    a = ap.parse_args()
    for tool in (a.mpicc, "make"):
        if not shutil.which(tool):
            pkgs = "mpich libmpich-dev" if a.mpicc == "mpicc.mpich" else "openmpi-bin"
            print("skipped: %s not found (install %s, make)" % (tool, pkgs))
            return 77
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PROF_", "FNPROF_")) and k not in ("CC", "MPICC", "LD_PRELOAD")}
    env["PATH"] = os.path.abspath(a.bin) + ":" + env.get("PATH", "")
    fnprof = os.path.join(a.bin, "fnprof")

    line = readme_line(a.readme).replace("FNPROF_CC=mpicc ", "FNPROF_CC=%s " % a.mpicc)
    prog = build(line, os.path.join(a.work, "readme"), env)
    if a.mpicc == "mpicc.mpich":
        r = subprocess.run(["readelf", "-d", prog], capture_output=True, text=True)
        if "[libmpich.so.12]" not in r.stdout:
            fail("%r: the program does not need MPICH's libmpich.so.12:\n%s" % (line, r.stdout))
    status, d = doctor(fnprof, prog, env)
    exe = d["modules"][0]
    if status != 0 or not exe["instrumented"] or not exe["functions"]:
        fail("the README's line %r built an uninstrumented program (doctor: exit %d, %s)"
             % (line, status, d["verdict"]))

    # CC alone: the Makefile never runs $(CC); doctor says there is nothing to profile.
    prog = build("FNPROF_CC=%s make CC=fnprof-cc" % a.mpicc, os.path.join(a.work, "cc-only"),
                 env)
    status, d = doctor(fnprof, prog, env)
    if status != 1 or "nothing to profile" not in d["verdict"]:
        fail("CC=fnprof-cc alone: doctor exit %d, verdict %r" % (status, d["verdict"]))
    print("ok: %r profiles; CC alone is reported uninstrumented by doctor" % line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
# SPDX-License-Identifier: MIT
