#!/usr/bin/env python3
"""A program that ignores SIGCHLD, then dies by SIGTERM (progs/ends.c). The signal path
runs `fnprof symbolize` on its raw snapshot and waits for it; with SIGCHLD ignored the
kernel reaps that child and the wait fails. What fnprof says must be true: the profile
is written (and said so), and no line points at a raw snapshot that is not there."""

import os
import signal

from hostile import expect, fnprof_lines, main


def case(ctx):
    prog = ctx.build("ends.c")
    out = ctx.path("out.prof")
    p = ctx.run([prog, "sigchld"], {"PROF_OUTPUT": out})
    lines = fnprof_lines(p.stderr)
    print("exit %d; %s" % (p.returncode, lines))
    expect(p.returncode == -signal.SIGTERM, "exit status %d, wanted death by SIGTERM"
           % p.returncode)
    expect(os.path.exists(out), "no profile")
    for ln in lines:
        if "raw snapshot in" in ln:
            raw = ln.split("raw snapshot in ", 1)[1].split(";")[0]
            expect(os.path.exists(raw), "said %r, but %s is not there" % (ln, raw))
    expect(any(ln.startswith("fnprof: wrote " + out) for ln in lines),
           "the profile was written but not said: %s" % lines)


if __name__ == "__main__":
    main(case)
# SPDX-License-Identifier: MIT
