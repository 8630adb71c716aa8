#!/usr/bin/env python3
"""PROF_TRACE_EVENTS=N bounds the calls the trace holds over all threads, the calls still
open at exit included: 26 threads inside a function at exit (progs/trace_open.c) must not
make a trace of 1 + 26 calls at PROF_TRACE_EVENTS=1. The rest is counted as dropped."""

import json

from hostile import expect, fnprof_lines, main


def case(ctx):
    prog = ctx.build("trace_open.c")
    for limit in (1, 5, 30):
        trace = ctx.path("t%d.json" % limit)
        p = ctx.run([prog], {"PROF_OUTPUT": ctx.path("o%d.prof" % limit), "PROF_TRACE": trace,
                             "PROF_TRACE_EVENTS": str(limit)})
        expect(p.returncode == 0, "exit status %d" % p.returncode)
        with open(trace) as f:
            doc = json.load(f)
        calls = [e for e in doc["traceEvents"] if e.get("ph") == "X"]
        other = doc["otherData"]
        print("PROF_TRACE_EVENTS=%d: %d calls, %d dropped" % (
            limit, len(calls), other["fnprof_events_dropped"]))
        expect(len(calls) <= limit, "PROF_TRACE_EVENTS=%d: the trace holds %d calls: %s"
               % (limit, len(calls), fnprof_lines(p.stderr)))
        expect(other["fnprof_events_dropped"] > 0, "nothing said dropped")


if __name__ == "__main__":
    main(case)
# SPDX-License-Identifier: MIT
