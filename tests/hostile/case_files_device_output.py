#!/usr/bin/env python3
"""An output that is a character device (what /dev/null is) is written in place, never
replaced by a regular file: PROF_OUTPUT, PROF_MEMORY, PROF_TRACE, the -o of fnprof
convert, merge, suggest-filter and run (whose gathering of a child's file renamed it over
OUT), and the raw snapshot a signal's death renames to <out>.raw. A device node of the case's own stands in for /dev/null. Needs root (mknod)."""

import os
import signal
import stat

import files_common as fc
from hostile import expect, main, need_root


def case(ctx):
    need_root("a device node of its own (mknod)")
    prog = ctx.build("files_work.c")
    prof = ctx.path("o.prof")
    expect(ctx.run([prog], {"PROF_OUTPUT": prof}).returncode == fc.STATUS, "no profile")
    checks = fc.Checks()

    def fresh_null():
        if os.path.lexists(ctx.path("null")):
            os.unlink(ctx.path("null"))
        return fc.null_device(ctx)

    def runtime(env):
        null = fresh_null()
        env = {k: (null if v == "NULL" else v) for k, v in env.items()}
        p = ctx.run([prog, "3", "malloc"], env)
        fc.expect_device(null)
        fc.expect_unharmed(p)
        fc.expect_quiet(p.stderr)
        fc.expect_no_temporary(ctx.workdir)

    def command(args):
        null = fresh_null()
        p = ctx.run([ctx.fnprof] + [null if a == "NULL" else a for a in args])
        fc.expect_device(null)
        expect(p.returncode == 0, "status %d: %s" % (p.returncode, p.stderr))
        fc.expect_no_temporary(ctx.workdir)

    def run_below_shell():
        # The program below a shell writes null.<pid>, which fnprof run gathers into OUT:
        # that was a rename over the device.
        null = fresh_null()
        p = ctx.run([ctx.fnprof, "run", "-o", null, "--", "sh", "-c", "%s; exit $?" % prog])
        fc.expect_device(null)
        fc.expect_unharmed(p)
        fc.expect_no_temporary(ctx.workdir)
        left = [n for n in os.listdir(ctx.workdir) if n.startswith("null.")]
        expect(not left, "the program's own file was not gathered: %s" % left)

    def raw_snapshot():
        # A program killed by a signal renames its raw snapshot to <out>.raw: a device
        # there is left alone, and one line says the snapshot could not be written.
        fresh_null()
        out = ctx.path("killed.prof")
        raw = out + ".raw"
        os.mknod(raw, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        p = ctx.run([prog, "0", "kill"], {"PROF_OUTPUT": out})
        fc.expect_device(raw)
        expect(p.returncode == -signal.SIGTERM, "status %d, not death by SIGTERM" % p.returncode)
        expect(p.stdout == fc.OUTPUT, "the program's output changed: %r" % p.stdout)
        fc.expect_one_line(p.stderr, "raw snapshot")
        fc.expect_no_temporary(ctx.workdir)

    checks.part("PROF_OUTPUT=device", runtime, {"PROF_OUTPUT": "NULL"})
    checks.part("PROF_MEMORY=device", runtime, {"PROF_MEMORY": "NULL"})
    checks.part("PROF_TRACE=device", runtime, {"PROF_OUTPUT": prof, "PROF_TRACE": "NULL"})
    checks.part("convert -o device", command, ["convert", prof, "--to", "collapsed", "-o", "NULL"])
    checks.part("merge -o device", command, ["merge", "-o", "NULL", prof, prof])
    checks.part("suggest-filter -o device", command, ["suggest-filter", "-o", "NULL", prof])
    checks.part("run -o device, program below a shell", run_below_shell)
    checks.part("<out>.raw a device, program killed", raw_snapshot)
    checks.done()


if __name__ == "__main__":
    main(case)
# SPDX-License-Identifier: MIT
