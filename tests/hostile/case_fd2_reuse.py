#!/usr/bin/env python3
"""A program whose fd 2 is a data file of its own: closed and reused by the program, or
closed when it started and then taken by its first open (progs/fd2_reuse.c), and reused
by a program that then dies by SIGTERM (the signal path's lines, and those of the command
it runs to make the profile). fnprof must not write a byte into that file (its `fnprof:
wrote` line included): fd 2 is written only while it is the file it was at start. The
profile is still written, and the death by the signal kept."""

import os
import signal

from hostile import expect, main


def case(ctx):
    prog = ctx.build("fd2_reuse.c")
    for how in ("closed", "reuse", "kill"):
        data, out = ctx.path(how + ".data"), ctx.path(how + ".prof")
        kw = {"preexec_fn": lambda: os.close(2)} if how == "closed" else {}
        p = ctx.run([prog, how, data], {"PROF_OUTPUT": out}, **kw)
        want = -signal.SIGTERM if how == "kill" else 0
        expect(p.returncode == want, "%s: exit status %d, wanted %d" % (how, p.returncode, want))
        expect(p.stdout == b"fd 2\n", "%s: the data file got %r, wanted fd 2" % (how, p.stdout))
        with open(data, "rb") as f:
            got = f.read()
        expect(got == b"data 34950\n", "%s: the program's data file holds %r" % (how, got))
        expect(os.path.exists(out), "%s: no profile" % how)


if __name__ == "__main__":
    main(case)
# SPDX-License-Identifier: MIT
