#!/usr/bin/env python3
"""fnprof's system() and popen() run the shell with environ swapped for a copy holding
PROF_OWNER (runtime/exec.c). The program's own changes made meanwhile by another thread
(setenv of a variable it has, unsetenv, putenv: in place, in the copy) must outlive the
call, and a program that cleared its environment (environ NULL) must get it back NULL,
never seeing fnprof's mark (progs/env_during_system.c). Each mode's output with fnprof
must be that without. Not popen: its window is the shell's start only, and a change in
the instant of the swap back is still lost (exec.c says so); a test of it would be
flaky."""

from hostile import expect, main


def case(ctx):
    plain = ctx.build("env_during_system.c", out=ctx.path("plain"), fnprof=False)
    prog = ctx.build("env_during_system.c")
    for how in ("system", "clearenv"):
        want = ctx.run([plain, how])
        expect(want.returncode == 0, "%s: the plain build failed: %r" % (how, want.stderr))
        got = ctx.run([prog, how], {"PROF_OUTPUT": ctx.path(how + ".prof"), "PROF_QUIET": "1"})
        expect(got.returncode == 0, "%s: exit status %d: %r" % (how, got.returncode, got.stderr))
        expect(got.stdout == want.stdout, "%s: the program saw %r, without fnprof %r"
               % (how, got.stdout.decode(), want.stdout.decode()))


if __name__ == "__main__":
    main(case)
# SPDX-License-Identifier: MIT
