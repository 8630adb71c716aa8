#!/usr/bin/env python3
"""fnprof_pause and fnprof_resume in a program run without PROF_OUTPUT
(progs/fork_unarmed.c): one thread toggles without end while the main thread forks 300
times, each child toggling once. Unarmed, the calls do nothing; before, they took the
control lock, whose fork handlers only an armed run registers, and a child forked while
the other thread held it waited for ever."""

from hostile import expect, main


def case(ctx):
    prog = ctx.build("fork_unarmed.c", opt="-O2")
    p = ctx.run([prog], {}, timeout=60)
    out = p.stdout.decode(errors="replace").strip()
    expect(p.returncode == 0 and out == "forks 300 bad 0",
           "exit status %d, printed %r: a child hung or died" % (p.returncode, out))
    expect(not p.stderr, "fnprof wrote to stderr unarmed: %r" % p.stderr)


if __name__ == "__main__":
    main(case)
# SPDX-License-Identifier: MIT
