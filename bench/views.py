#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The views' benchmark rows: what the calling-context tree adds to a profile, and how long
`fnprof convert` takes for each format.

    bench/views.py --fnprof build-bench/bin/fnprof [--runs 3] PROFILE...

bench/harness.py calls it at the end of a run with every workload's fnprof profile (Lua's
and SQLite's are the large ones); it also runs on its own on any profiles. Per profile: its
size, the tree's share of it (bytes, and bytes per calling context: the tree is O(contexts),
with no strings), then per format the median wall time of `fnprof convert` (reading the file
and writing the view, through the command) and the output's size. Goal: each well under 1 s.
Then bench/diff.py's rows: fnprof diff on two 100,000-function profiles (goal < 1 s), and
bench/ranks.py's: fnprof ranks and merge over 64 rank files of SQLite (goal < 1 s).
"""
import argparse
import io
import marshal
import os
import statistics
import subprocess
import sys
import time

FORMATS = ["collapsed", "callgrind", "speedscope", "flamegraph", "dot", "pprof", "html"]
SUFFIX = {"collapsed": "folded", "callgrind": "callgrind", "speedscope": "speedscope.json",
          "flamegraph": "svg", "dot": "dot", "pprof": "pb.gz", "html": "html"}


def tree_part(path):
    """(file bytes, dict bytes, nodes) of a profile; nodes None without a tree."""
    with open(path, "rb") as f:
        data = f.read()
    s = io.BytesIO(data)
    marshal.load(s)
    end = s.tell()
    if end == len(data):
        return len(data), end, None
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                    "e2e"))
    import fnptree  # pylint: disable=import-outside-toplevel
    stats = marshal.loads(data[:end])
    tree = fnptree.parse(stats, data[:end], data[end:])
    return len(data), end, len(tree.nodes)


def fmt_size(n):
    for unit, div in (("M", 1 << 20), ("K", 1 << 10)):
        if n >= div:
            return f"{n / div:.1f}{unit}"
    return f"{n}B"


def table(header, rows):
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    out = ["  ".join(str(h).ljust(w) for h, w in zip(header, widths)),
           "  ".join("-" * w for w in widths)]
    for r in rows:
        out.append("  ".join(str(c).rjust(w) if i else str(c).ljust(w)
                             for i, (c, w) in enumerate(zip(r, widths))))
    return "\n".join(out)


def report(fnprof, profiles, runs, outdir):
    os.makedirs(outdir, exist_ok=True)
    rows = []
    for prof in profiles:
        name = os.path.basename(prof).split(".")[0]
        size, dict_len, nodes = tree_part(prof)
        if nodes is None:
            rows.append([name, fmt_size(size), "no tree", "", "", "", "", ""])
            continue
        tree_len = size - dict_len
        first = True
        for fmt in FORMATS:
            out = os.path.join(outdir, f"{name}.{SUFFIX[fmt]}")
            times = []
            err = ""
            for _ in range(runs):
                t0 = time.monotonic_ns()
                r = subprocess.run([fnprof, "convert", prof, "--to", fmt, "-o", out],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                times.append(time.monotonic_ns() - t0)
                if r.returncode:
                    err = (r.stderr.decode(errors="replace").strip().splitlines() or ["?"])[-1]
                    break
            cell = f"{statistics.median(times) / 1e6:.0f}" if not err else f"failed: {err}"
            osize = fmt_size(os.path.getsize(out)) if not err and os.path.exists(out) else "-"
            rows.append([name if first else "", fmt_size(size) if first else "",
                         f"{nodes:,}" if first else "",
                         f"{fmt_size(tree_len)} ({100 * tree_len / size:.0f}%)" if first else "",
                         f"{tree_len / max(nodes, 1):.1f}" if first else "", fmt, cell, osize])
            first = False
    return table(["profile", "file", "contexts", "tree", "B/context", "--to", "convert ms",
                  "output"], rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fnprof", required=True)
    ap.add_argument("--runs", type=int, default=3, help="median of this many (default 3)")
    ap.add_argument("--outdir", default="/tmp/fnprof-bench-views")
    ap.add_argument("--lib", help="libfnprof.so's directory, for bench/ranks.py")
    ap.add_argument("--sqlite", help="the instrumented speedtest1, for bench/ranks.py")
    ap.add_argument("--ranks", type=int, default=64, help="rank files for bench/ranks.py")
    ap.add_argument("profiles", nargs="+")
    a = ap.parse_args()
    print(f"fnprof convert, median of {a.runs} (wall ms, the whole command):")
    print(report(a.fnprof, a.profiles, a.runs, a.outdir))
    # fnprof diff on two synthetic 100,000-function profiles (bench/diff.py): its own files,
    # whatever the workloads were.
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import diff  # pylint: disable=import-outside-toplevel
    print()
    print(diff.report(a.fnprof, runs=a.runs, outdir=os.path.join(a.outdir, "diff")))
    # fnprof ranks and merge over the rank files of SQLite run as an MPI launcher starts it.
    if a.lib and a.sqlite and os.path.exists(a.sqlite):
        import ranks  # pylint: disable=import-outside-toplevel
        print()
        print(ranks.report(a.fnprof, a.lib, a.sqlite, ranks=a.ranks, runs=a.runs,
                           outdir=os.path.join(a.outdir, "ranks"), size=5 if a.ranks > 8 else 1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
