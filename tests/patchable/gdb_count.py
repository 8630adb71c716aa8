"""Run by gdb (run_runtime.py: gdb -batch -x gdb_count.py --args PROGRAM ARGS...): counts
every call of the functions named in $GC_FUNCS (comma-separated) as cProfile would, from
the real stack, and writes {"funcs": {name: [calls, primitive]}, "edges": {"caller\\tcallee":
[calls, primitive]}} to $GC_OUT.

A breakpoint on each function's first instruction; on each hit, the stack is unwound (gdb's
own unwinder: DWARF call frame information, through signal frames too) and the named
functions on it, innermost first, are what cProfile's stack would hold. A call is primitive
when its function is not on the stack below it; a call on an edge, when that edge (the same
caller calling the same callee) is not on the stack below it. A call with no named function
below it hangs from <process>. Frames of inlined functions are gdb's own view, not calls.
The program runs with its sites unpatched (PROF_OUTPUT unset): the count is independent
of fnprof."""
import json
import os

import gdb  # pylint: disable=import-error

FUNCS = set(os.environ["GC_FUNCS"].split(","))
funcs, edges = {}, {}


def plain(name):
    return name.split("(")[0] if name else name


class Entry(gdb.Breakpoint):
    def stop(self):
        stack = []
        f = gdb.newest_frame()
        while f is not None:
            if f.type() != gdb.INLINE_FRAME and plain(f.name()) in FUNCS:
                stack.append(plain(f.name()))
            f = f.older()
        if not stack:
            return False
        me, below = stack[0], stack[1:]
        caller = below[0] if below else "<process>"
        open_edges = set(zip(below[1:], below[:-1]))
        c = funcs.setdefault(me, [0, 0])
        c[0] += 1
        c[1] += me not in below
        e = edges.setdefault(caller + "\t" + me, [0, 0])
        e[0] += 1
        e[1] += (caller, me) not in open_edges
        return False


gdb.execute("set pagination off")
gdb.execute("set confirm off")
gdb.execute("set startup-with-shell off")
for name in sorted(FUNCS):
    Entry("*" + name, internal=True)
gdb.execute("run")
with open(os.environ["GC_OUT"], "w") as out:
    json.dump({"funcs": funcs, "edges": edges}, out)
# SPDX-License-Identifier: MIT
