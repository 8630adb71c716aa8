"""What the trace's end-to-end runners (run_stream.py, run_ring.py) share: their common
arguments and an emptied work folder, a test program of this folder built with
-finstrument-functions, and a run of it under libfnprof.so with its profile in the folder."""
import argparse
import glob
import os
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))


def parse(ap):
    """ap's arguments with --case, --lib-dir and --workdir; the work folder made, emptied."""
    ap.add_argument("--case", required=True)
    ap.add_argument("--lib-dir", required=True)
    ap.add_argument("--workdir", required=True)
    a = ap.parse_args()
    os.makedirs(a.workdir, exist_ok=True)
    for f in glob.glob(os.path.join(a.workdir, "*")):
        if os.path.isfile(f):
            os.unlink(f)
    return a


def build(work, name, libs=()):
    exe = os.path.join(work, name)
    subprocess.check_call(["gcc", "-g", "-O1", "-finstrument-functions", "-pthread",
                           os.path.join(HERE, name + ".c"), "-o", exe] + list(libs))
    return exe


def run(exe, lib, work, args, env_extra, preexec=None):
    env = dict(os.environ)
    env.update(LD_PRELOAD=os.path.join(lib, "libfnprof.so"),
               PROF_OUTPUT=os.path.join(work, "out.prof"))
    env.update(env_extra)
    return subprocess.run([exe] + [str(a) for a in args], env=env, cwd=work,
                          capture_output=True, text=True, preexec_fn=preexec, timeout=600)
# SPDX-License-Identifier: MIT
