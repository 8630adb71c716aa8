#!/usr/bin/env python3
"""Runs one libFuzzer target as a ctest test (tests/fuzz.cmake).

    run_fuzz.py --name NAME --workdir DIR (--fuzzer BIN | --skip WHY)
                [--seeds-from DIR]... [--tree-seeds DIR] -- LIBFUZZER-ARGS...

New inputs accumulate in DIR/NAME.corpus (the first corpus, the one libFuzzer writes to);
the *.prof and *.raw files of each --seeds-from directory (profiles other tests' fixtures
made) are copied to DIR/NAME.seeds first. --tree-seeds: calling-context tree bodies
(tests/data/tree_seeds, whose first byte is fuzz_tree_read's mode), each made a whole
file behind the dict and trailer header of the first seed that has a tree; the target's
mutator then sets the header's lengths and checksums.

Exit status: libFuzzer's (0: nothing found), with the path of the input that failed
printed last; 77 with --skip.
"""
import argparse
import os
import shutil
import subprocess
import sys

ARTIFACT_KINDS = ("crash-", "leak-", "timeout-", "oom-", "slow-unit-")
TREE_MAGIC = b"FNPTREE\n"
TREE_HEADER = 44


def artifacts(workdir, name):
    prefix = name + "."
    return {
        os.path.join(workdir, f)
        for f in os.listdir(workdir)
        if f.startswith(prefix) and f[len(prefix):].startswith(ARTIFACT_KINDS)
    }


def copy_seeds(dirs, tree_dir, seeds):
    shutil.rmtree(seeds, ignore_errors=True)
    os.makedirs(seeds)
    with_tree = None
    for d in dirs:
        if not os.path.isdir(d):
            sys.exit(f"run_fuzz: {d}: no such directory (its fixture did not run?)")
        for f in sorted(os.listdir(d)):
            if f.endswith((".prof", ".raw")):
                src = os.path.join(d, f)
                dst = os.path.join(seeds, os.path.basename(d) + "-" + f)
                shutil.copyfile(src, dst)
                with open(src, "rb") as fh:
                    data = fh.read()
                at = data.find(TREE_MAGIC)
                if with_tree is None and at > 0 and len(data) >= at + TREE_HEADER:
                    with_tree = data[: at + TREE_HEADER]
    if tree_dir:
        if with_tree is None:
            sys.exit("run_fuzz: --tree-seeds: no seed profile has a tree to borrow a dict from")
        for f in sorted(os.listdir(tree_dir)):
            with open(os.path.join(tree_dir, f), "rb") as fh:
                body = fh.read()[1:]
            with open(os.path.join(seeds, "tree-" + f), "wb") as out:
                out.write(with_tree + body)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--name", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--fuzzer")
    ap.add_argument("--skip")
    ap.add_argument("--seeds-from", action="append", default=[])
    ap.add_argument("--tree-seeds")
    ap.add_argument("args", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    args = a.args[1:] if a.args[:1] == ["--"] else a.args
    if a.skip:
        print(f"fuzz {a.name}: skipped: {a.skip}")
        return 77
    if not a.fuzzer or not os.access(a.fuzzer, os.X_OK):
        print(f"fuzz {a.name}: {a.fuzzer}: not built")
        return 1
    os.makedirs(a.workdir, exist_ok=True)
    corpus = os.path.join(a.workdir, a.name + ".corpus")
    os.makedirs(corpus, exist_ok=True)
    dirs = [corpus]
    if a.seeds_from or a.tree_seeds:
        seeds = os.path.join(a.workdir, a.name + ".seeds")
        copy_seeds(a.seeds_from, a.tree_seeds, seeds)
        dirs.append(seeds)
    flags = [x for x in args if x.startswith("-")]
    dirs += [x for x in args if not x.startswith("-")]
    before = artifacts(a.workdir, a.name)
    cmd = [a.fuzzer, "-print_final_stats=1",
           "-artifact_prefix=" + os.path.join(a.workdir, a.name + ".")] + flags + dirs
    print("run_fuzz:", " ".join(cmd), flush=True)
    rc = subprocess.call(cmd)
    if rc == 0:
        return 0
    found = sorted(artifacts(a.workdir, a.name) - before)
    for path in found:
        print(f"fuzz {a.name}: FAILED (exit {rc}): the input is kept in {path}; "
              f"rerun: {a.fuzzer} {path}")
    if not found:
        print(f"fuzz {a.name}: FAILED (exit {rc}), no input kept: see libFuzzer's output above")
    return 1


if __name__ == "__main__":
    sys.exit(main())
# SPDX-License-Identifier: MIT
