#!/usr/bin/env python3
"""A signal during the exit dump is held until the profile is written; a second one ends the
process at once (whoever sends it insists). Sent twice just before the profile's temporary
is renamed into place (progs/files_kill_at_rename.c, preloaded), the second must still
leave no NAME.fnprof-XXXXXX behind: the handler removes the temporary, says in one line
what is lost, and the program dies by that signal."""

import os
import signal

import files_common as fc
from hostile import expect, fnprof_lines, main


def case(ctx):
    prog = ctx.build("files_work.c")
    shim = ctx.build("files_kill_at_rename.c", out=ctx.path("kill_at_rename.so"),
                     extra=["-shared", "-fPIC", "-ldl"], fnprof=False)
    for sig in (signal.SIGTERM, signal.SIGINT):
        where = ctx.path(sig.name)
        os.mkdir(where)
        out = os.path.join(where, "o.prof")
        p = ctx.run([prog], {"PROF_OUTPUT": out, "LD_PRELOAD": shim,
                             "FILES_KILL_SIGNAL": str(int(sig)), "FILES_KILL_COUNT": "2"},
                    preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        said = [ln for ln in fnprof_lines(p.stderr) if "not instrumented" not in ln]
        print("%s: exit %d; %s; folder %s" % (sig.name, p.returncode, said,
                                             sorted(os.listdir(where))))
        expect(p.stdout == fc.OUTPUT, "%s: the program's output changed: %r"
               % (sig.name, p.stdout))
        expect(p.returncode == -sig, "%s: exit status %d, wanted death by %s"
               % (sig.name, p.returncode, sig.name))
        expect(not fc.leftovers(where), "%s: temporaries left behind: %s"
               % (sig.name, fc.leftovers(where)))
        expect(len(said) == 1 and "lost" in said[0],
               "%s: wanted one line saying the profile is lost, got %s" % (sig.name, said))


if __name__ == "__main__":
    main(case)
# SPDX-License-Identifier: MIT
