#!/usr/bin/env python3
"""A threaded program forks 200 times while its other threads begin regions of new names
and add metadata in a loop (progs/fork_storm.c): every child must end, having written its
own profile. A lock of fnprof's held at the fork by a thread the child does not have would
leave the child waiting for ever, in fnprof_region_begin, fnprof_add_metadata or its exit
dump; the program kills a child still running after 30 s and fails."""

import os

from hostile import Failure, expect, fnprof_lines, main

FORKS = 200


def case(ctx):
    prog = ctx.build("fork_storm.c")
    out = ctx.path("out.prof")
    p = ctx.run([prog, str(FORKS), "30"], {"PROF_OUTPUT": out, "PROF_QUIET": "1"}, timeout=600)
    print(p.stdout.decode(errors="replace"), end="")
    if p.returncode != 0:
        raise Failure("exit status %d: %s" % (p.returncode, p.stdout.decode(errors="replace")))
    # The regions thread soon passes the 65,536 distinct regions a run keeps: that is said,
    # and the regions past it (the children's too) are not recorded; anything else is news.
    said = [ln for ln in fnprof_lines(p.stderr)
            if "distinct regions" not in ln and "no region is open" not in ln]
    expect(not said, "fnprof said: %r" % said)
    children = [f for f in os.listdir(ctx.workdir) if f.startswith("out.prof.")]
    expect(os.path.exists(out), "the parent's profile is missing")
    expect(len(children) == FORKS,
           "%d children's profiles, wanted %d" % (len(children), FORKS))


if __name__ == "__main__":
    main(case)
# SPDX-License-Identifier: MIT
