# SPDX-License-Identifier: MIT
"""Threads started before and after Profile.enable are all recorded (cProfile sees only the
thread that enabled it). Writes the stats' counts as JSON to argv[1]."""
import json
import pstats
import sys
import threading

import fnprof


def work_before(n):
    return n


def work_after(n):
    return n


def body(fn, k, go):
    go.wait()
    for i in range(k):
        fn(i)


go = threading.Event()
early = threading.Thread(target=body, args=(work_before, 7, go))
early.start()
prof = fnprof.Profile()
prof.enable()
late = threading.Thread(target=body, args=(work_after, 11, go))
late.start()
go.set()
early.join()
late.join()
prof.disable()
stats = pstats.Stats(prof).stats
out = {k[2]: [v[0], v[1]] for k, v in stats.items() if k[2].startswith("work_")}
with fnprof.region("tail"):
    work_after(0)
json.dump(out, open(sys.argv[1], "w"))
