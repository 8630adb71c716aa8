#!/usr/bin/env python3
"""A fork while another thread is inside fnprof's handler of a fatal signal
(progs/fork_in_handler.c): the child inherits the note that a thread is handling a signal,
but not that thread. A fatal signal in the child must still end it (before, the child
waited for ever for a thread it does not have). The handler waits for `fnprof symbolize`,
found beside libfnprof.so: a stand-in there waits until the child has started, so the
fork comes inside the handler every time."""

import os
import shutil
import signal
import stat
import time

from hostile import Failure, expect, main

LIMIT = 30  # seconds the child may take to die before it counts as a hang


def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def case(ctx):
    out, pidfile = ctx.path("out.prof"), ctx.path("child.pid")
    lib, bin_ = ctx.path("rt", "lib"), ctx.path("rt", "bin")
    os.makedirs(lib)
    os.makedirs(bin_)
    for name in ("libfnprof.so", "libfnprof.so.0"):
        shutil.copy(ctx.libfnprof, os.path.join(lib, name))
    tool = os.path.join(bin_, "fnprof")
    with open(tool, "w") as f:
        f.write('#!/bin/sh\nn=0\nwhile [ ! -s "%s" ] && [ $n -lt %d ]; do sleep 0.01; '
                'n=$((n+1)); done\nexec "%s" "$@"\n' % (pidfile, LIMIT * 100, ctx.fnprof))
    os.chmod(tool, stat.S_IRWXU)
    prog = ctx.build("fork_in_handler.c", fnprof=False, extra=[
        "-finstrument-functions", "-L", lib, "-Wl,-rpath," + lib, "-lfnprof"])
    # the output to a file: a child left hanging must not keep the run's pipes open
    with open(ctx.path("stderr"), "wb") as err:
        p = ctx.run([prog, out + ".raw", pidfile], {"PROF_OUTPUT": out}, stdout=err, stderr=err)
    expect(p.returncode == -signal.SIGTERM, "exit status %d" % p.returncode)
    expect(os.path.exists(pidfile), "the child never ran")
    with open(pidfile) as f:
        child = int(f.read())
    for _ in range(LIMIT * 100):
        if not alive(child):
            break
        time.sleep(0.01)
    else:
        os.kill(child, signal.SIGKILL)
        raise Failure("the child %d did not die by its SIGINT in %d s: killed" % (child, LIMIT))
    expect(os.path.exists(out), "the parent's profile is missing")


if __name__ == "__main__":
    main(case)
# SPDX-License-Identifier: MIT
