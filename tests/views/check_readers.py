#!/usr/bin/env python3
"""pstats readers see fnprof's file as cProfile's: the calling-context tree after the dict
changes nothing they read. For one reader (--reader pstats | pyprof2calltree | gprof2dot
| snakeviz), its output on paths.prof equals its output on the same file with the tree cut
off, and the file carries a tree at all. Exit 77 (skipped) when the reader is not
installed."""
import contextlib
import importlib
import io
import marshal
import os
import pstats
import shutil
import subprocess
import sys

import viewlib


def dict_only(path, out):
    with open(path, "rb") as f:
        data = f.read()
    stream = io.BytesIO(data)
    marshal.load(stream)
    with open(out, "wb") as f:
        f.write(data[:stream.tell()])
    return len(data) - stream.tell()


def read_pstats(path):
    s = pstats.Stats(path, stream=io.StringIO())
    s.sort_stats("cumulative").print_stats()
    s.print_callers()
    s.print_callees()
    text = s.stream.getvalue()
    return text[text.index("\n", text.index(path) + len(path)):]  # past the file name line


def read_pyprof2calltree(path):
    tool = shutil.which("pyprof2calltree")
    if not tool:
        return None
    out = path + ".callgrind"
    subprocess.run([tool, "-i", path, "-o", out], check=True, stdout=subprocess.DEVNULL)
    with open(out) as f:
        return f.read()


def read_gprof2dot(path):
    tool = shutil.which("gprof2dot")
    if tool:
        cmd = [tool]
    else:
        try:
            importlib.import_module("gprof2dot")
        except ImportError:
            return None
        cmd = [sys.executable, "-m", "gprof2dot"]
    return subprocess.run(cmd + ["-f", "pstats", path], check=True,
                          stdout=subprocess.PIPE).stdout.decode()


def read_snakeviz(path):
    try:
        stats_mod = importlib.import_module("snakeviz.stats")
    except ImportError:
        return None
    s = pstats.Stats(path, stream=io.StringIO())
    with contextlib.redirect_stdout(io.StringIO()):
        return repr(stats_mod.table_rows(s)) + repr(stats_mod.json_stats(s))


READERS = {"pstats": read_pstats, "pyprof2calltree": read_pyprof2calltree,
           "gprof2dot": read_gprof2dot, "snakeviz": read_snakeviz}


def main():
    a = viewlib.args(lambda ap: ap.add_argument("--reader", choices=READERS, required=True))
    v = viewlib.Verdict("readers." + a.reader)
    prof = os.path.join(a.workdir, "paths.prof")
    bare = os.path.join(a.workdir, "paths-dict-only.%s.prof" % a.reader)
    v.check(dict_only(prof, bare) > 0, "paths.prof carries no tree after its dict")
    # The two files must have the same name length for readers that print the name.
    work = os.path.join(a.workdir, "readers-" + a.reader)
    os.makedirs(work, exist_ok=True)
    with_tree, without = os.path.join(work, "a.prof"), os.path.join(work, "b.prof")
    shutil.copy(prof, with_tree)
    shutil.copy(bare, without)
    got = READERS[a.reader](with_tree)
    if got is None:
        print("SKIP: %s is not installed" % a.reader)
        return viewlib.SKIP
    want = READERS[a.reader](without)
    v.check(got.replace("a.prof", "X") == want.replace("b.prof", "X"),
            "%s reads the file with its tree differently:\n%s\n----\n%s"
            % (a.reader, got[:2000], want[:2000]))
    v.check("main" in got, "%s's output names no main" % a.reader)
    return v.done()


if __name__ == "__main__":
    sys.exit(main())
# SPDX-License-Identifier: MIT
