#!/usr/bin/env python3
"""`fnprof run -o` killed by SIGTERM or SIGHUP after the program has ended, while it merges
the program's files into its output (just before the temporary is renamed into place:
progs/files_kill_at_rename.c, preloaded, acting in the fnprof process only). While the
program runs, fnprof run passes such signals on to it; once it is gone they are fnprof
run's own: it must die by them (not swallow them) and leave no temporary behind."""

import os
import signal

import files_common as fc
from hostile import expect, main


def case(ctx):
    prog = ctx.build("files_fork_work.c", fnprof=False, extra=["-finstrument-functions"])
    shim = ctx.build("files_kill_at_rename.c", out=ctx.path("kill_at_rename.so"),
                     extra=["-shared", "-fPIC", "-ldl"], fnprof=False)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        where = ctx.path(sig.name)
        os.mkdir(where)
        out = os.path.join(where, "out.prof")
        p = ctx.run([ctx.fnprof, "run", "-o", out, "--", prog],
                    {"LD_PRELOAD": shim, "FILES_KILL_SIGNAL": str(int(sig)),
                     "FILES_KILL_COMM": "fnprof"})
        print("%s: exit %d; folder %s" % (sig.name, p.returncode, sorted(os.listdir(where))))
        expect(b"files_fork_work: done" in p.stdout, "%s: the program did not run" % sig.name)
        expect(p.returncode == -sig, "%s: exit status %d, wanted death by %s"
               % (sig.name, p.returncode, sig.name))
        expect(not fc.leftovers(where), "%s: temporaries left behind: %s"
               % (sig.name, fc.leftovers(where)))


if __name__ == "__main__":
    main(case)
# SPDX-License-Identifier: MIT
