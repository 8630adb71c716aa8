#!/usr/bin/env python3
"""An output that is a symlink is followed, never renamed over. A symlink to
/proc/self/fd/1 (what /dev/stdout is) sends the bytes to standard output: through a pipe,
or after what a regular file there already holds (the runtime's profile after the
program's own output, which stays). A symlink to a regular file has that file replaced
whole and stays a symlink; a symlink to nothing is refused with one line."""

import os

import files_common as fc
from hostile import expect, main

PROC_FD1 = "/proc/self/fd/1"


def case(ctx):
    prog = ctx.build("files_work.c")
    prof = ctx.path("o.prof")
    expect(ctx.run([prog], {"PROF_OUTPUT": prof}).returncode == fc.STATUS, "no profile")
    with open(prof, "rb") as f:
        profile_head = f.read(1)  # a pstats file is a marshalled dict: '{'
    link = ctx.path("stdout")
    checks = fc.Checks()
    collapsed = ["convert", prof, "--to", "collapsed"]

    def fresh_link():
        if os.path.lexists(link):
            os.unlink(link)
        os.symlink(PROC_FD1, link)

    def convert_pipe():
        fresh_link()
        p = ctx.run([ctx.fnprof] + collapsed + ["-o", link])
        fc.expect_link(link, PROC_FD1)
        expect(p.returncode == 0, "status %d: %s" % (p.returncode, p.stderr))
        expect(b"main;work;leaf" in p.stdout, "nothing on standard output: %r" % p.stdout)
        fc.expect_no_temporary(ctx.workdir)

    def convert_file():
        fresh_link()
        # { echo header; fnprof convert -o /dev/stdout; } > out.txt
        out = ctx.path("out.txt")
        with open(out, "wb") as f:
            f.write(b"header\n")
            f.flush()
            p = ctx.run([ctx.fnprof] + collapsed + ["-o", link], stdout=f)
        fc.expect_link(link, PROC_FD1)
        expect(p.returncode == 0, "status %d: %s" % (p.returncode, p.stderr))
        with open(out, "rb") as f:
            data = f.read()
        expect(data.startswith(b"header\n") and b"main;work;leaf" in data,
               "out.txt does not hold the header and then the stacks: %r" % data[:100])

    def runtime_pipe():
        fresh_link()
        p = ctx.run([prog], {"PROF_OUTPUT": link})
        fc.expect_link(link, PROC_FD1)
        expect(p.returncode == fc.STATUS, "exit status %d" % p.returncode)
        expect(p.stdout.startswith(fc.OUTPUT) and p.stdout[len(fc.OUTPUT):][:1] == profile_head,
               "standard output is not the program's output, then the profile: %r"
               % p.stdout[:60])
        fc.expect_quiet(p.stderr)

    def runtime_file():
        fresh_link()
        out = ctx.path("prog.txt")
        with open(out, "wb") as f:
            p = ctx.run([prog], {"PROF_OUTPUT": link}, stdout=f)
        fc.expect_link(link, PROC_FD1)
        expect(p.returncode == fc.STATUS, "exit status %d" % p.returncode)
        with open(out, "rb") as f:
            data = f.read()
        expect(data.startswith(fc.OUTPUT) and data[len(fc.OUTPUT):][:1] == profile_head,
               "prog.txt is not the program's output, then the profile: %r" % data[:60])

    def link_to_file():
        real = ctx.path("real.prof")
        with open(real, "wb") as f:
            f.write(b"old")
        lnk = ctx.path("latest.prof")
        os.symlink("real.prof", lnk)
        p = ctx.run([prog], {"PROF_OUTPUT": lnk})
        fc.expect_unharmed(p)
        fc.expect_link(lnk, "real.prof")
        with open(real, "rb") as f:
            expect(f.read(1) == profile_head, "real.prof was not replaced by the profile")
        fc.expect_no_temporary(ctx.workdir)

    def dangling():
        lnk = ctx.path("dangling.prof")
        os.symlink("nowhere/x.prof", lnk)
        p = ctx.run([prog], {"PROF_OUTPUT": lnk})
        fc.expect_unharmed(p, output=fc.OUTPUT)
        fc.expect_link(lnk, "nowhere/x.prof")
        fc.expect_one_line(p.stderr, "symlink")
        fc.expect_no_temporary(ctx.workdir)

    checks.part("convert -o stdout-link, a pipe", convert_pipe)
    checks.part("convert -o stdout-link, a file with a header", convert_file)
    checks.part("PROF_OUTPUT=stdout-link, a pipe", runtime_pipe)
    checks.part("PROF_OUTPUT=stdout-link, a file", runtime_file)
    checks.part("PROF_OUTPUT=symlink to a regular file", link_to_file)
    checks.part("PROF_OUTPUT=symlink to nothing", dangling)
    checks.done()


if __name__ == "__main__":
    main(case)
# SPDX-License-Identifier: MIT
