"""What the views' check scripts share: arguments, running fnprof, the tree as the
independent reader (tests/e2e/fnptree.py) sees it, and the verdict.

python3 standard library only.
"""
import argparse
import marshal
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import fnptree  # noqa: E402  pylint: disable=wrong-import-position

SKIP = 77  # ctest's SKIP_RETURN_CODE for these tests


def args(extra=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--fnprof", required=True)
    ap.add_argument("--workdir", required=True)
    if extra:
        extra(ap)
    return ap.parse_args()


def convert(fnprof, prof, fmt, out=None, extra=(), check=True):
    """Runs fnprof convert; returns the CompletedProcess (stdout bytes)."""
    cmd = [fnprof, "convert", prof, "--to", fmt] + list(extra)
    if out:
        cmd += ["-o", out]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if check and r.returncode != 0:
        raise SystemExit("FAIL: %s exited %d: %s" % (" ".join(cmd), r.returncode,
                                                    r.stderr.decode(errors="replace")))
    return r


def labels(stats):
    """fnprof's short names (views/labels.c): the name; where two keys share it,
    'name [file:line]' with the file's base name, or its whole path when two of them have
    the same base name and line."""
    by_name = {}
    for key in stats:
        by_name.setdefault(key[2], []).append(key)
    out = {}
    for name, keys in by_name.items():
        for k in keys:
            if len(keys) == 1:
                out[k] = name
                continue
            base = os.path.basename(k[0]) or k[0]
            clash = any(o != k and o[1] == k[1] and (os.path.basename(o[0]) or o[0]) == base
                        for o in keys)
            out[k] = "%s [%s:%d]" % (name, k[0] if clash else base, k[1])
    return out


def ns(tree, ticks):
    """What fnprof writes for ticks: integer ns, or calls for a count-only tree."""
    if tree.kind == fnptree.KIND_CALLS:
        return ticks
    return int(ticks * tree.tick_seconds * 1e9 + 0.5)


def odd_profile(path):
    """A pstats dict CPython could not write but a C++ profile can hold: names with what
    the formats reserve (quotes, backslashes, escape sequences, entities, newlines, a
    callgrind-style "(12)" prefix), an invalid UTF-8 byte, an empty name, an empty file,
    a name of 20,000 bytes, one name in two files, all called from main, and one edge
    between two odd names."""
    names = [("/src/dir one/ops.cc", 10, "bool operator<(A const&, B const&)"),
             ("/src/t.h", 20, "std::vector<std::pair<int, int> >::push_back(std::pair<int, int>&&)"),
             ("/src/q.c", 30, 'say "hi" \\N \\n \\l back\\slash\\ &lt; &amp'),
             ("/src/nl.c", 40, "line\nbreak\rcr\ttab"),
             ("/src/a.c", 50, "dup"), ("/src/b.c", 50, "dup"),
             ("/src/quote\"d\\dir/x.c", 55, "graph"),
             ("/src/p.c", 60, "(12) looks compressed"),
             ("/src/e.c", 70, ""),
             ("~", 0, "<built-in method x>"),
             ("/src/u.c", 80, "caf\udce9 \u00e9t\u00e9 \u2603"),
             ("/src/long.cc", 90, "L" * 20000),
             ("", 3, "nofile")]
    root = ("/src/main.c", 1, "main")
    stats, total = {}, 0.0
    for i, k in enumerate(names):
        tt = 1e-4 * (i + 1)
        stats[k] = (i + 1, i + 1, tt, tt, {root: (i + 1, i + 1, tt, tt)})
        total += tt
    stats[names[0]][4][names[1]] = (7, 7, 0.0, 0.0)
    stats[root] = (1, 1, 1e-3, 1e-3 + total, {})
    with open(path, "wb") as f:
        marshal.dump(stats, f)


class Verdict:
    def __init__(self, name):
        self.name, self.problems = name, []

    def check(self, cond, what):
        if not cond:
            self.problems.append(what)
        return cond

    def done(self):
        for p in self.problems[:30]:
            print("FAIL: %s: %s" % (self.name, p))
        if not self.problems:
            print("ok: %s" % self.name)
        return 1 if self.problems else 0
# SPDX-License-Identifier: MIT
