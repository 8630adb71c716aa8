#!/usr/bin/env python3
"""An output that is a FIFO is written in place, never replaced by a regular file: with a
reader, the profile arrives through it whole; with none, the program neither hangs nor
changes its output or status, and one line says why nothing was written. The same for
PROF_MEMORY, PROF_TRACE and fnprof convert -o."""

import json
import os

import files_common as fc
from hostile import Failure, expect, main


def case(ctx):
    prog = ctx.build("files_work.c")
    prof = ctx.path("o.prof")
    fifo = ctx.path("fifo")
    expect(ctx.run([prog], {"PROF_OUTPUT": prof}).returncode == fc.STATUS, "no profile")
    checks = fc.Checks()

    def fresh_fifo():
        if os.path.lexists(fifo):
            os.unlink(fifo)
        os.mkfifo(fifo)

    def runtime_read(env, is_profile):
        fresh_fifo()
        reader = fc.FifoReader(fifo)
        p = ctx.run([prog, "3", "malloc"], env)
        data = reader.take()
        fc.expect_fifo(fifo)
        fc.expect_unharmed(p)
        fc.expect_quiet(p.stderr)
        fc.expect_no_temporary(ctx.workdir)
        is_profile(data)

    def runtime_no_reader(env, words):
        fresh_fifo()
        p = ctx.run([prog, "3", "malloc"], env, timeout=60)
        fc.expect_fifo(fifo)
        fc.expect_unharmed(p)
        fc.expect_one_line(p.stderr, words)
        fc.expect_no_temporary(ctx.workdir)

    def pstats(data):
        # What came through the FIFO is the profile: fnprof reads it back.
        got = ctx.path("through-fifo.prof")
        with open(got, "wb") as f:
            f.write(data)
        r = ctx.run([ctx.fnprof, "report", got])
        expect(r.returncode == 0 and b"work" in r.stdout,
               "what came through the FIFO (%d bytes) is not the profile: %s"
               % (len(data), r.stderr))

    def trace(data):
        try:
            doc = json.loads(data)
        except ValueError:
            raise Failure("what came through the FIFO (%d bytes) is not JSON" % len(data))
        expect("traceEvents" in doc, "what came through the FIFO is not a trace")

    def convert(with_reader):
        fresh_fifo()
        reader = fc.FifoReader(fifo) if with_reader else None
        p = ctx.run([ctx.fnprof, "convert", prof, "--to", "collapsed", "-o", fifo], timeout=60)
        fc.expect_fifo(fifo)
        fc.expect_no_temporary(ctx.workdir)
        if reader:
            data = reader.take()
            expect(p.returncode == 0, "status %d: %s" % (p.returncode, p.stderr))
            expect(b"main;work;leaf" in data, "the collapsed stacks did not arrive: %r" % data)
        else:
            expect(p.returncode == 1, "status %d with no reader" % p.returncode)
            fc.expect_one_line(p.stderr, "reader")

    checks.part("PROF_OUTPUT=FIFO with a reader", runtime_read, {"PROF_OUTPUT": fifo}, pstats)
    checks.part("PROF_MEMORY=FIFO with a reader", runtime_read, {"PROF_MEMORY": fifo}, pstats)
    checks.part("PROF_TRACE=FIFO with a reader", runtime_read,
                {"PROF_OUTPUT": prof, "PROF_TRACE": fifo}, trace)
    checks.part("PROF_OUTPUT=FIFO without a reader", runtime_no_reader,
                {"PROF_OUTPUT": fifo}, "reader")
    checks.part("PROF_TRACE=FIFO without a reader", runtime_no_reader,
                {"PROF_OUTPUT": prof, "PROF_TRACE": fifo}, "reader")
    checks.part("convert -o FIFO with a reader", convert, True)
    checks.part("convert -o FIFO without a reader", convert, False)
    checks.done()


if __name__ == "__main__":
    main(case)
# SPDX-License-Identifier: MIT
