#!/usr/bin/env python3
"""Writes the hand-made seeds of fuzz_pipeline into tests/data/pipeline_seeds (they are committed;
run again after changing a case). Each is a file a user could hand to fnprof that once hit
undefined behaviour; the fuzz test replays them on every run, under UBSan.

  raw-back-overflow.raw   links whose ticks add past 2^63 to one node's back ticks
                          (profile/build.c, fnp_raw_add_link: signed overflow)
  calls-past-2-64.pstats    a pstats dict without a tree whose edges call more often than
                          their caller was called: the rebuilt tree's estimate of calls
                          is past 2^64 (profile/tree.c, add_node: double to u64 overflow)

The other files there are inputs fuzz_pipeline found, kept as they were:

  flamegraph-past-2-64.raw  a raw snapshot whose flame graph has frames wider than 2^64
                            hundredths of a pixel (views/flamegraph.c put_fixed, fit:
                            double to u64 and long overflow)
"""
import marshal
import os
import struct

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "pipeline_seeds")


def raw(*records, secs=1e-9):
    out = b"FNPRAW1\n" + struct.pack("<dQ", secs, 0)
    path = b"/bin/prog"
    out += b"M" + struct.pack("<QQQQQ", 0x400000 - 0x1000, 0x1000, 0x3000, 0xFFFFFFFF, len(path))
    out += path
    for r in records:
        out += r[0].encode() + struct.pack("<%dQ" % (len(r) - 1), *r[1:])
    return out + b"E" + struct.pack("<5Q", 0, 0, 1, 0, 0)


def write(name, data):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(data)


# main(11) -> f(12) -> g(13); two links to g recorded from main add 2^62 ticks each to
# main's back ticks.
write("raw-back-overflow.raw",
      raw(("T",), ("N", 11, 0, 0x1000, 1, 100), ("N", 12, 11, 0x1100, 1, 50),
          ("N", 13, 12, 0x1200, 1, 10), ("L", 20, 13, 11, 1, 1 << 62, 0),
          ("L", 21, 13, 11, 1, 1 << 62, 0), ("L", 22, 13, 11, 1, 1 << 62, 0)))

# main (called once) -> f, an edge of 2^64 - 1 calls: f's node in the rebuilt tree gets
# 2^64 - 1 * 1 / 1 calls, and main's root 2^64 - 1 calls.
big = (1 << 64) - 1
main = ("a.c", 1, "main")
f = ("a.c", 2, "f")
write("calls-past-2-64.pstats",
      marshal.dumps({main: (big, big, 0.5, 1.0, {}),
                     f: (big, big, 0.5, 0.5, {main: (big, big, 0.5, 0.5)})}))
# SPDX-License-Identifier: MIT
