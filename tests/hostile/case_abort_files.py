#!/usr/bin/env python3
"""abort() in a program run with PROF_OUTPUT, PROF_MEMORY and PROF_TRACE, and with
PROF_MEMORY alone (progs/ends.c): the program still dies by SIGABRT, the timing profile is
written from the signal path, and the memory profile and the trace, which are made at exit
only, are each named in one line that says they are not written; never dropped without a
word."""

import os
import signal

from hostile import expect, fnprof_lines, main


def case(ctx):
    prog = ctx.build("ends.c")
    runs = (
        ("all", {"PROF_OUTPUT": ctx.path("all.prof"), "PROF_MEMORY": ctx.path("all.mem"),
                 "PROF_TRACE": ctx.path("all.json")}),
        ("memory", {"PROF_MEMORY": ctx.path("memory.mem")}),
    )
    for name, env in runs:
        p = ctx.run([prog, "abort"], env)
        lines = fnprof_lines(p.stderr)
        print("%s: exit %d; %s" % (name, p.returncode, lines))
        expect(p.returncode == -signal.SIGABRT,
               "%s: exit status %d, wanted death by SIGABRT" % (name, p.returncode))
        if "PROF_OUTPUT" in env:
            expect(os.path.exists(env["PROF_OUTPUT"]), "%s: no timing profile" % name)
        for var in ("PROF_MEMORY", "PROF_TRACE"):
            if var not in env:
                continue
            path = env[var]
            said = [ln for ln in lines if var in ln and path in ln]
            expect(os.path.exists(path) or len(said) == 1,
                   "%s: %s=%s neither written nor said lost in one line: %s"
                   % (name, var, path, lines))


if __name__ == "__main__":
    main(case)
# SPDX-License-Identifier: MIT
