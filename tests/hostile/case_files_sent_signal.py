#!/usr/bin/env python3
"""The writer blocks SIGPIPE and SIGXFSZ while it writes a file, and drops the one its own
writes raise (a FIFO's reader gone, RLIMIT_FSIZE). One that another process sends in that
moment (kill) is not the writes' doing: it must still arrive, and the program die by it as
it would without fnprof. Sent during the exit dump, just before the profile's temporary is
renamed into place, by a child the preloaded progs/files_kill_at_rename.c forks. (The
kernel sends the writes' own as the process's own kill, SI_USER from its own pid, so a
raise() by the program itself in that moment cannot be told apart: not checked.)"""

import os
import signal

from hostile import expect, main


def case(ctx):
    prog = ctx.build("files_work.c")
    shim = ctx.build("files_kill_at_rename.c", out=ctx.path("kill_at_rename.so"),
                     extra=["-shared", "-fPIC", "-ldl"], fnprof=False)
    for sig in (signal.SIGPIPE, signal.SIGXFSZ):
        out = ctx.path("%s.prof" % sig.name)
        p = ctx.run([prog], {"PROF_OUTPUT": out, "LD_PRELOAD": shim,
                             "FILES_KILL_SIGNAL": str(int(sig)), "FILES_KILL_FROM_CHILD": "1"})
        print("%s: exit %d; profile %s" % (sig.name, p.returncode, os.path.exists(out)))
        expect(p.returncode == -sig, "%s sent during the dump: exit status %d, wanted death "
               "by %s (the writer swallowed it)" % (sig.name, p.returncode, sig.name))
        expect(os.path.exists(out), "%s: the profile was not written" % sig.name)


if __name__ == "__main__":
    main(case)
# SPDX-License-Identifier: MIT
