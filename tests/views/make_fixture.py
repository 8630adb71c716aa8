#!/usr/bin/env python3
"""Builds and profiles the views' test program once for every view test (ctest fixture).

    make_fixture.py --cc gcc --lib-dir DIR --include-dir DIR --workdir DIR

Writes into WORKDIR:
  paths.prof        fnprof, timed, 2 threads (progs/paths.c)
  paths-count.prof  the same program with PROF_TIMER=none (calls as values)
  paths-py.prof     CPython's cProfile on progs/paths.py: no calling-context tree
python3 standard library only.
"""
import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def run(cmd, **kw):
    print("$ " + " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, **kw)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cc", default="gcc")
    ap.add_argument("--lib-dir", required=True)
    ap.add_argument("--include-dir", required=True)
    ap.add_argument("--workdir", required=True)
    args = ap.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    exe = os.path.join(args.workdir, "paths")
    run([args.cc, "-O0", "-g", "-finstrument-functions", "-pthread",
         os.path.join(HERE, "progs", "paths.c"), os.path.join(HERE, "progs", "paths_other.c"),
         "-o", exe, "-L" + args.lib_dir,
         "-Wl,-rpath," + args.lib_dir, "-lfnprof"])
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROF_")}
    for name, extra in (("paths.prof", {}), ("paths-count.prof", {"PROF_TIMER": "none"})):
        out = os.path.join(args.workdir, name)
        run([exe], env=dict(env, PROF_OUTPUT=out, PROF_QUIET="1", **extra),
            stdout=subprocess.DEVNULL)
        if not os.path.exists(out):
            sys.exit("make_fixture: %s was not written" % out)
    run([sys.executable, "-B", os.path.join(HERE, "progs", "paths.py"),
         os.path.join(args.workdir, "paths-py.prof")])
    return 0


if __name__ == "__main__":
    sys.exit(main())
# SPDX-License-Identifier: MIT
