#!/usr/bin/env python3
"""A program that dies by a signal (SIGTERM, SIGSEGV) has its profile made from the raw
snapshot the signal handler writes (`fnprof symbolize`): the named regions of a C program
(progs/signal_regions.c, one still open at the signal) and the functions of a Python program
run by `python3 -m fnprof` are named there as at exit, not ('<unknown>', 0, '0x8000...').
The program still dies by its signal."""

import os
import pstats
import signal

from hostile import Skip, expect, main

PY_PROGRAM = """\
import os
import signal


def f():
    return 1


def main():
    for _ in range(1000):
        f()
    os.kill(os.getpid(), signal.SIGTERM)


main()
"""


def keys(path):
    return {(os.path.basename(k[0]), k[2]): v for k, v in pstats.Stats(path).stats.items()}


def no_unknown(found, path):
    unknown = [k for k in found if k[0] == "<unknown>" and k[1].startswith("0x8")]
    expect(not unknown, "%s: regions left unnamed: %s" % (path, unknown))


def c_program(ctx):
    prog = ctx.build("signal_regions.c")
    for sig in (signal.SIGTERM, signal.SIGSEGV):
        out = ctx.path("c-%d.prof" % sig)
        p = ctx.run([prog, str(int(sig))], {"PROF_OUTPUT": out})
        print("signal %d: exit %d; %s" % (sig, p.returncode, p.stderr.decode(errors="replace")))
        expect(p.returncode == -sig, "status %d, wanted death by signal %d" % (p.returncode, sig))
        expect(os.path.exists(out), "%s not written" % out)
        found = keys(out)
        no_unknown(found, out)
        step = found.get(("signal_regions.c", "parse_step"))
        expect(step is not None and step[1] == 1000,
               "%s: parse_step not named with its 1000 calls: %s" % (out, sorted(found)))
        expect(("signal_regions.c", "outer_loop") in found,
               "%s: the open region outer_loop not named: %s" % (out, sorted(found)))


def python_program(ctx):
    pydir = os.path.join(os.path.dirname(ctx.bin_dir), "python")
    if not os.path.isdir(os.path.join(pydir, "fnprof")):
        raise Skip("the Python package is not built (python3-dev missing): %s" % pydir)
    script = ctx.path("pyterm.py")
    with open(script, "w") as f:
        f.write(PY_PROGRAM)
    out = ctx.path("py.prof")
    p = ctx.run(["python3", "-m", "fnprof", "-o", out, script], {"PYTHONPATH": pydir})
    print("python: exit %d; %s" % (p.returncode, p.stderr.decode(errors="replace")))
    expect(p.returncode == -signal.SIGTERM, "status %d, wanted death by SIGTERM" % p.returncode)
    expect(os.path.exists(out), "%s not written" % out)
    found = keys(out)
    no_unknown(found, out)
    f = found.get(("pyterm.py", "f"))
    expect(f is not None and f[1] == 1000,
           "%s: f not named with its 1000 calls: %s" % (out, sorted(found)))
    expect(("pyterm.py", "main") in found, "%s: main not named: %s" % (out, sorted(found)))


def case(ctx):
    c_program(ctx)
    python_program(ctx)


if __name__ == "__main__":
    main(case)
# SPDX-License-Identifier: MIT
