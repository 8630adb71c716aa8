#!/usr/bin/env python3
"""fnprof merge of MPI ranks' profiles names the ranks the sum holds (docs/mpi.md): four
ranks give "ranks: 0-3" and no "rank" (a merge of four ranks is none of them), "size"
stays; a merge of merges joins their lists ("0-1" + "3" = "0-1,3"); the files of one rank
(a rank's forked children) stay that "rank". fnprof ranks still reads the ranks' files and
the merged one, and fnprof report shows the list. Usage: check_merge_ranks.py FNPROF WORKDIR
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import fnptree  # noqa: E402  pylint: disable=wrong-import-position

FNPROF, WORK = sys.argv[1], sys.argv[2]
os.makedirs(WORK, exist_ok=True)
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def write(name, rank, size=4):
    path = os.path.join(WORK, name)
    stats = {("app.c", 10, "main"): (1, 1, 0.5, 1.0 + rank, {})}
    meta = [("program", "/bin/app"), ("pid", str(100 + rank)), ("rank", str(rank)),
            ("size", str(size))]
    with open(path, "wb") as f:
        f.write(fnptree.encode(stats, None, meta=meta))
    return path


def fnprof(*args):
    p = subprocess.run([FNPROF, *args], capture_output=True, text=True, check=False)
    if p.returncode != 0:
        fail(f"fnprof {' '.join(args)}: exit {p.returncode}: {p.stderr}")
    return p


def merged(name, *inputs):
    out = os.path.join(WORK, name)
    fnprof("merge", "-o", out, *inputs)
    return dict(fnptree.read_meta(out)), out


def main():
    ranks = [write(f"out.{r}.prof", r) for r in (2, 0, 3, 1)]
    meta, all4 = merged("all.prof", *ranks)
    if "rank" in meta:
        fail(f"a merge of four ranks keeps rank {meta['rank']!r}: {meta}")
    if meta.get("ranks") != "0-3":
        fail(f"ranks {meta.get('ranks')!r}, wanted '0-3'")
    if meta.get("size") != "4" or meta.get("merged") != "4":
        fail(f"size and merged: {meta}")

    meta01, m01 = merged("m01.prof", ranks[1], ranks[3])
    meta, _ = merged("m013.prof", m01, ranks[2])
    if meta01.get("ranks") != "0-1" or meta.get("ranks") != "0-1,3" or "rank" in meta:
        fail(f"merge of merges: {meta01.get('ranks')!r} then {meta}")

    child = write("out.2.child.prof", 2)
    meta, _ = merged("rank2.prof", ranks[0], child)
    if meta.get("rank") != "2" or "ranks" in meta:
        fail(f"two files of rank 2: {meta}")

    r = fnprof("ranks", *ranks)
    if "4 ranks (0-3)" not in r.stdout:
        fail(f"fnprof ranks of the four files: {r.stdout[:200]!r}")
    fnprof("ranks", all4)
    r = fnprof("report", all4)
    if "ranks: 0-3" not in r.stdout or "\nrank: " in r.stdout:
        fail(f"fnprof report of the merge: {r.stdout[:300]!r}")
    if failures:
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
# SPDX-License-Identifier: MIT
