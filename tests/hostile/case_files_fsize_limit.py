#!/usr/bin/env python3
"""A low RLIMIT_FSIZE (ulimit -f) makes the writes of fnprof's files fail: the program's
exit status stays its own (SIGXFSZ used to kill it during the exit dump: 3 became 153),
no temporary file stays behind, and one line says why. The same for a program killed by
a signal (its raw snapshot) and for fnprof convert -o (one line, exit 1)."""

import os
import resource
import signal

import files_common as fc
from hostile import expect, main


def limit(nbytes):
    def set_limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (nbytes, nbytes))
    return set_limit


def case(ctx):
    prog = ctx.build("files_work.c")
    prof = ctx.path("o.prof")
    expect(ctx.run([prog], {"PROF_OUTPUT": prof}).returncode == fc.STATUS, "no profile")
    checks = fc.Checks()

    def folder(name):  # each part its own, so that one's leftovers fail it alone
        os.mkdir(ctx.path(name))
        return ctx.path(name)

    def exit_dump(var):
        # The profile is some 600 bytes; the program's own output goes to a pipe.
        where = folder(var)
        p = ctx.run([prog, "3", "malloc"], {var: os.path.join(where, "o")},
                    preexec_fn=limit(100))
        fc.expect_unharmed(p)
        fc.expect_one_line(p.stderr, "File too large")
        fc.expect_no_temporary(where)

    def killed(how, sig):
        # The signal path writes the raw snapshot (some 500 bytes) with every signal
        # blocked: the SIGXFSZ its write raised must not end the program in place of sig.
        where = folder(how)
        out = os.path.join(where, "killed.prof")
        p = ctx.run([prog, "0", how], {"PROF_OUTPUT": out}, preexec_fn=limit(100))
        expect(p.returncode == -sig,
               "status %d, not death by %s: %s" % (p.returncode, signal.Signals(sig).name,
                                                   p.stderr))
        expect(p.stdout == fc.OUTPUT, "the program's output changed: %r" % p.stdout)
        expect(len(fc.errors(p.stderr)) == 1, "not one line: %r" % fc.errors(p.stderr))
        fc.expect_no_temporary(where)

    def convert():
        where = folder("convert")
        out = os.path.join(where, "stacks.txt")
        p = ctx.run([ctx.fnprof, "convert", prof, "--to", "collapsed", "-o", out],
                    preexec_fn=limit(10))
        expect(p.returncode == 1, "status %d, not 1: %s" % (p.returncode, p.stderr))
        fc.expect_one_line(p.stderr, "File too large")
        fc.expect_no_temporary(where)

    checks.part("exit dump, PROF_OUTPUT", exit_dump, "PROF_OUTPUT")
    checks.part("exit dump, PROF_MEMORY", exit_dump, "PROF_MEMORY")
    checks.part("killed by SIGTERM, raw snapshot", killed, "kill", signal.SIGTERM)
    checks.part("killed by SIGSEGV, raw snapshot", killed, "segv", signal.SIGSEGV)
    checks.part("convert -o", convert)
    checks.done()


if __name__ == "__main__":
    main(case)
# SPDX-License-Identifier: MIT
