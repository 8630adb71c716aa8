#!/usr/bin/env python3
"""SIGTERM and SIGINT sent while the exit dump is being written (progs/slow_dump.c: the
dump waits, half way, for room on a full stderr pipe, so the signal comes at that point
every time), taken by the dumping thread or by another one. The profile must be written
whole, then the program dies by that signal, as it would have without fnprof."""

import glob
import os
import platform
import pstats
import shutil
import signal
import subprocess
import time

from hostile import Failure, Skip, clean_env, expect, main, show

WRITE = {"x86_64": "1", "aarch64": "64"}.get(platform.machine())
LIMIT = 60  # seconds a step may take before it counts as a hang


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def blocked_in_write(pid):
    """The main thread waits in write(2, ...) (its stderr pipe is full)."""
    call = read("/proc/%d/syscall" % pid).split()
    if WRITE and len(call) > 1:
        return call[0] == WRITE and call[1] == "0x2"
    return read("/proc/%d/wchan" % pid) == "pipe_write"


def taken(pid, sig):
    """sig is no longer pending for the process or any of its threads: a handler took it
    (or the process is gone)."""
    bit = 1 << (sig - 1)
    status = [read("/proc/%d/status" % pid)]
    status += [read(p) for p in glob.glob("/proc/%d/task/*/status" % pid)]
    for text in status:
        for line in text.splitlines():
            if line.startswith(("ShdPnd:", "SigPnd:")) and int(line.split()[1], 16) & bit:
                return False
    return True


def wait_for(what, cond, step=0.01):
    for _ in range(int(LIMIT / step)):
        if cond():
            return
        time.sleep(step)
    raise Failure("%s: not after %d s" % (what, LIMIT))


def case(ctx):
    if not os.path.exists("/proc/self/syscall") and not os.path.exists("/proc/self/wchan"):
        raise Skip("no /proc/<pid>/syscall or wchan to see where the dump waits")
    # libfnprof.so alone, without its symbolizer: the dump says so on fd 2 before writing.
    lib = ctx.path("lib")
    os.makedirs(lib)
    for name in ("libfnprof.so", "libfnprof.so.0"):
        shutil.copy(ctx.libfnprof, os.path.join(lib, name))
    prog = ctx.build("slow_dump.c", fnprof=False, extra=[
        "-finstrument-functions", "-L", lib, "-Wl,-rpath," + lib, "-lfnprof"])
    for sig in (signal.SIGTERM, signal.SIGINT):
        for how in ("main", "thread"):
            label = "%s, %s thread" % (sig.name, how)
            out = ctx.path("%s-%s.prof" % (sig.name, how))
            env = clean_env()
            env["PROF_OUTPUT"] = out
            show([prog, how], {"PROF_OUTPUT": out})
            p = subprocess.Popen(
                [prog, how], env=env, cwd=ctx.workdir, stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
            try:
                expect(p.stdout.read().startswith(b"exiting"), "%s: no start" % label)
                wait_for("%s: the dump waiting on fd 2" % label,
                         lambda: blocked_in_write(p.pid))
                os.kill(p.pid, sig)
                wait_for("%s: the signal taken" % label, lambda: taken(p.pid, sig))
                err = p.stderr.read()
                p.wait(timeout=LIMIT)
            finally:
                if p.poll() is None:
                    p.kill()
                    p.wait()
            said = [ln.lstrip(".") for ln in err.decode(errors="replace").split("\n")
                    if "fnprof:" in ln]  # after the dots the program filled its pipe with
            print("%s: exit %d; %s" % (label, p.returncode, said))
            expect(p.returncode == -sig, "%s: exit status %d, wanted death by %s"
                   % (label, p.returncode, sig.name))
            expect(os.path.exists(out), "%s: no profile, and no line saying so" % label)
            # named by address: the symbolizer is not there
            expect(len(pstats.Stats(out).stats) >= 2, "%s: a profile without its calls" % label)


if __name__ == "__main__":
    main(case)
# SPDX-License-Identifier: MIT
