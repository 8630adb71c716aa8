#!/usr/bin/env python3
"""fnprof convert -o killed by SIGINT, SIGTERM or SIGHUP while its output is a whole
temporary file not yet renamed into place (a preloaded shim sends the signal at that
moment: progs/files_kill_at_rename.c) leaves no temporary file behind and dies by that
same signal; the output is not written. Started with the signal ignored (nohup), it
stays ignored and the output is written."""

import os
import signal

import files_common as fc
from hostile import expect, main


def case(ctx):
    prog = ctx.build("files_work.c")
    prof = ctx.path("o.prof")
    expect(ctx.run([prog], {"PROF_OUTPUT": prof}).returncode == fc.STATUS, "no profile")
    shim = ctx.build("files_kill_at_rename.c", out=ctx.path("kill_at_rename.so"),
                     extra=["-shared", "-fPIC", "-ldl"], fnprof=False)
    checks = fc.Checks()

    def killed(sig, ignored=False):
        where = ctx.path(signal.Signals(sig).name + ("-ignored" if ignored else ""))
        os.mkdir(where)
        out = os.path.join(where, "stacks.txt")
        env = {"LD_PRELOAD": shim, "FILES_KILL_SIGNAL": str(int(sig))}

        def ignore():
            signal.signal(sig, signal.SIG_IGN)

        p = ctx.run([ctx.fnprof, "convert", prof, "--to", "collapsed", "-o", out], env,
                    preexec_fn=ignore if ignored else None)
        fc.expect_no_temporary(where)
        if ignored:
            expect(p.returncode == 0, "status %d: %s" % (p.returncode, p.stderr))
            expect(os.path.isfile(out), "no output although the signal was ignored")
        else:
            expect(p.returncode == -sig, "status %d, not death by %s"
                   % (p.returncode, signal.Signals(sig).name))
            expect(not os.path.exists(out), "an output from a killed convert")

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        checks.part("killed by %s" % signal.Signals(sig).name, killed, sig)
    checks.part("SIGINT ignored from the start", killed, signal.SIGINT, True)
    checks.done()


if __name__ == "__main__":
    main(case)
# SPDX-License-Identifier: MIT
