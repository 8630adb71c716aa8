#!/usr/bin/env python3
"""A daemon with PROF_DUMP_SIGNAL, and PROF_TOGGLE_SIGNAL beside it (progs/daemon_fds.c): it
closes every fd (close_range), reopens 0-2 on /dev/null, makes a pipe, then sends itself
the dump signal (after the toggle signal). Its pipe must receive nothing of fnprof's, the
dump must be made, and the fds it gets (its first one before closing, its pipe's, its next
file's) must be those it gets without fnprof: fnprof holds no fd the program can see, close
or have reused."""

from hostile import Failure, expect, main


def case(ctx):
    prog = ctx.build("daemon_fds.c")

    def result(name, how, env):
        path, out = ctx.path(name), ctx.path(name + ".prof")
        if env:
            env = dict(env, PROF_OUTPUT=out)
        p = ctx.run([prog, path, how, out, "20"], env)
        if p.returncode == 7:
            raise Failure("%s: no profile was dumped on the signal" % name)
        expect(p.returncode == 0, "%s: exit status %d" % (name, p.returncode))
        with open(path) as f:
            return f.read()

    plain = result("plain", "none", {})
    print("without fnprof: " + plain, end="")
    expect(plain.startswith("first 3, pipe 3 4, read 'hello', result 5"),
           "an unexpected start without fnprof: %r" % plain)
    dump = {"PROF_DUMP_SIGNAL": "USR2"}
    both = dict(dump, PROF_TOGGLE_SIGNAL="USR1")  # the toggle's handler and thread too
    for name, how, env in (("signalled", "signal", dump), ("quiet", "none", dump),
                           ("toggled", "toggle", both), ("toggle-quiet", "none", both)):
        got = result(name, how, env)
        print("with fnprof (%s): %s" % (name, got), end="")
        expect(got == plain, "%s: the daemon saw %r, without fnprof %r" % (name, got, plain))


if __name__ == "__main__":
    main(case)
# SPDX-License-Identifier: MIT
