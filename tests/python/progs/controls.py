"""The runtime's controls from Python (python.trace, memory, schedule, dump_signal,
filter): allocations in Python frames, fnprof.step(), a dump signal, names to filter."""
import os
import shutil
import signal
import sys
import time

import fnprof


def big_alloc(n):
    return bytearray(n)


def small_alloc(n):
    return [object() for _ in range(n)]


def step_work(i):
    return i


def skipped(i):
    return i


def kept(i):
    return i


def after_signal():
    return 0


def main():
    keep = [big_alloc(1 << 20) for _ in range(3)]
    keep.append(small_alloc(1000))
    for i in range(6):
        step_work(i)
        fnprof.step()
    for i in range(4):
        skipped(i)
        kept(i)
    if len(sys.argv) > 1:  # PROF_DUMP_SIGNAL=USR2: copy the dump it makes, then go on
        out = os.environ["PROF_OUTPUT"]
        os.kill(os.getpid(), signal.SIGUSR2)
        for _ in range(200):
            if os.path.exists(out):
                break
            time.sleep(0.05)
        time.sleep(0.2)
        shutil.copy(out, sys.argv[1])
        after_signal()
    return keep


main()
# SPDX-License-Identifier: MIT
