#!/usr/bin/env python3
"""Compares a profile's calls with count_hooks.c's exact counts for the same binary.

    compare_counts.py --profile out.prof --counts counts.txt --binary ./lz4

Per function name (clone suffixes such as ".part.0" folded into their function, static
functions of one name added up on both sides), fnprof's ncalls must equal the hook's
count, and so must the totals. Exit 0 equal, 1 different, 2 bad input.
python3 standard library only.
"""

import argparse
import os
import pstats
import subprocess
import sys


def symbols(binary):
    """{address: name} of the binary's function symbols (nm), and whether addresses are
    absolute (ET_EXEC) rather than offsets from the load base (ET_DYN, PIE)."""
    out = subprocess.run(["nm", "--defined-only", binary], check=True,
                         stdout=subprocess.PIPE).stdout.decode()
    by_addr = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "tTWi":
            by_addr.setdefault(int(parts[0], 16), parts[2].split(".")[0])
    with open(binary, "rb") as f:
        head = f.read(18)
    absolute = int.from_bytes(head[16:18], "little") == 2  # ET_EXEC
    return by_addr, absolute


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--profile", required=True)
    ap.add_argument("--counts", required=True)
    ap.add_argument("--binary", required=True)
    args = ap.parse_args()

    by_addr, absolute = symbols(args.binary)
    binary = os.path.realpath(args.binary)
    hook = {}
    with open(args.counts) as f:
        for line in f:
            module, offset, addr, count = line.split()
            if module == "lost":
                print("count_hooks lost %s enters" % count, file=sys.stderr)
                return 2
            if module == "?" or os.path.realpath(module) != binary:
                name = "%s+%s" % (module, offset)
            else:
                key = int(addr, 16) if absolute else int(offset, 16)
                name = by_addr.get(key, "%s+%s" % (os.path.basename(module), offset))
            hook[name] = hook.get(name, 0) + int(count)

    prof = {}
    for (_file, _line, name), (_cc, nc, _tt, _ct, _callers) in pstats.Stats(
            args.profile).stats.items():
        if name == "<process>":
            continue
        short = name.split("(")[0]
        prof[short] = prof.get(short, 0) + nc

    diffs = sorted(n for n in set(hook) | set(prof) if hook.get(n) != prof.get(n))
    total_hook, total_prof = sum(hook.values()), sum(prof.values())
    print("functions: %d in the profile, %d counted by the hook; calls: %d vs %d"
          % (len(prof), len(hook), total_prof, total_hook))
    for n in diffs[:40]:
        print("  %-40s profile %-10s hook %s" % (n, prof.get(n), hook.get(n)))
    if diffs or total_hook != total_prof or not hook:
        print("FAIL: %d functions differ" % len(diffs))
        return 1
    print("ok: every function's calls equal")
    return 0


if __name__ == "__main__":
    sys.exit(main())
# SPDX-License-Identifier: MIT
