"""What the views' check scripts share: arguments, running fnprof, the tree as the
independent reader (tests/e2e/fnptree.py) sees it, and the verdict.

python3 standard library only.
"""
import argparse
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
