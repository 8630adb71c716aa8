#!/usr/bin/env python3
"""quick_exit(3) after the program's own at_quick_exit handler (progs/ends.c): the exit
status stays 3, the handler still runs, and the profile, the memory profile and the trace
are written as at exit."""

import os

from hostile import expect, main


def case(ctx):
    prog = ctx.build("ends.c")
    env = {"PROF_OUTPUT": ctx.path("q.prof"), "PROF_MEMORY": ctx.path("q.mem"),
           "PROF_TRACE": ctx.path("q.json")}
    p = ctx.run([prog, "quick_exit"], env)
    print("exit %d; %s" % (p.returncode, p.stderr.decode(errors="replace")))
    expect(p.returncode == 3, "exit status %d, wanted 3" % p.returncode)
    expect(p.stdout.endswith(b"quick_exit handler\n"), "the program's handler: %r" % p.stdout)
    for var, path in env.items():
        expect(os.path.exists(path), "%s=%s not written" % (var, path))


if __name__ == "__main__":
    main(case)
# SPDX-License-Identifier: MIT
