#!/usr/bin/env python3
"""execl, execle and execlp called in the child of vfork (progs/vfork_execl.c): the child
shares the parent's memory and may not call malloc, so fnprof's wrappers of the list forms
must build the argument array without it. The program counts the mallocs made while its
child execs and prints them; the exec must also still work (the child exits 0)."""

from hostile import expect, main


def case(ctx):
    prog = ctx.build("vfork_execl.c")
    for how in ("execl", "execle", "execlp"):
        p = ctx.run([prog, how], {"PROF_OUTPUT": ctx.path(how + ".prof"), "PROF_QUIET": "1",
                                  "PATH": "/usr/bin:/bin"})
        out = p.stdout.decode(errors="replace").strip()
        expect(p.returncode == 0, "%s: exit status %d: %r" % (how, p.returncode, p.stderr))
        expect(out == "%s exit 0 mallocs 0" % how,
               "%s: printed %r; the wrapper must neither malloc in a vfork child nor "
               "fail the exec" % (how, out))


if __name__ == "__main__":
    main(case)
# SPDX-License-Identifier: MIT
