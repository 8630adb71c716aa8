#!/usr/bin/env python3
"""Every view of a deep tree stays bounded (docs/convert.md, --max-depth): a chain of 10^6
calls and a comb 3000 deep (a leaf at every level), made here, converted to each format.
The views that write a path per calling context (collapsed, speedscope, pprof) grew with
the sum of the paths' depths (the chain: 5 * 10^11 frames of collapsed text) and took as
long; cut at --max-depth (default 256), every calling context deeper than that is folded
into one '[... N frames cut]' frame per parent at the cut, and stderr says so in one line.

A path view's output must be at most 64 bytes x (the contexts kept) x (cut + 1), the kept
contexts counted here from the tree (those above the cut, and one fold per parent at it);
the other views (flame graph, HTML, callgrind, dot: a frame per context, or per function)
at most 512 bytes a node and uncut (the chain for them: 10^5 deep, to spare the disk).
Outputs are written under RLIMIT_FSIZE and a timeout, so that an unbounded writer fails
rather than fill the disk. Then the contents: the label with its exact N in every path
view, no path longer than cut + 1 frames, totals unchanged (collapsed and speedscope sum
to the roots' inclusive ns), and the cut files read by their independent readers
(speedscope's schema as check_speedscope.py has it; go tool pprof -raw, when go is
installed, sees the label and the total). --max-depth 0 cuts nothing; --max-depth 10 cuts at 10; a bad
value is a usage error. python3 standard library only."""
import gzip
import json
import os
import resource
import shutil
import subprocess
import sys

import check_pprof
import check_speedscope
import viewlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "flamegraph"))
import synth  # noqa: E402  pylint: disable=wrong-import-position

PATHS = ["collapsed", "speedscope", "pprof"]
OTHERS = ["flamegraph", "html", "callgrind", "dot"]
CUT = 256
FSIZE = 256 << 20  # no bounded view of these trees comes near it
TIMEOUT = 60


def comb(path, depth):
    """main -> f -> f ... depth deep, and under every chain node a leaf g: pre-order is the
    chain, then the leaves from the deepest up."""
    keys = [("/src/c.c", 1, "main"), ("/src/c.c", 2, "f"), ("/src/c.c", 3, "g")]
    nodes = [(0 if i == 0 else 1, None if i == 0 else i - 1, 0, 1, 20 * (depth - i))
             for i in range(depth)]
    nodes += [(2, i, 0, 1, 10) for i in range(depth - 1, -1, -1)]
    synth.write(path, keys, nodes)


def kept(tree, cut):
    """Contexts a view keeps at this cut: the nodes above it, and a fold per parent at it;
    and the frames cut under each such parent (its deepest folded path)."""
    depth, at_cut = {}, {}  # at_cut: a folded node's ancestor at depth cut - 1
    folds = {}
    n = 0
    for node in tree.nodes:
        d = 0 if node.parent is None else depth[node.parent.index] + 1
        depth[node.index] = d
        if d < cut:
            n += 1
            continue
        up = node.parent.index
        anc = at_cut[node.index] = up if d == cut else at_cut[up]
        folds[anc] = max(folds.get(anc, 0), d - cut + 1)
    return n + len(folds), sorted(set(folds.values()))


def limit():
    resource.setrlimit(resource.RLIMIT_FSIZE, (FSIZE, FSIZE))


def convert(fnprof, prof, fmt, out, extra=()):
    if os.path.exists(out):
        os.unlink(out)
    cmd = [fnprof, "convert", prof, "--to", fmt, "-o", out] + list(extra)
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           preexec_fn=limit, timeout=TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        return None, "timed out after %d s" % TIMEOUT
    return r.returncode, r.stderr.decode(errors="replace")


def read_text(path):
    with open(path) as f:
        return f.read()


def total_ns(tree):
    return sum(viewlib.ns(tree, n.ticks) for n in tree.nodes if n.parent is None)


def check_paths(v, name, fmt, data, labels, total, cut, out, workdir):
    """The path views' contents: the labels, no path over cut + 1 frames, the total."""
    text = data.decode(errors="replace")
    for n in labels:
        label = "[... %d frames cut]" % n
        if fmt == "pprof":
            v.check(label.encode() in gzip.decompress(data), "%s %s: no %r" % (name, fmt, label))
        else:
            v.check(label in text, "%s %s: no %r" % (name, fmt, label))
    if fmt == "collapsed":
        lines = text.splitlines()
        v.check(max(ln.count(";") + 1 for ln in lines) <= cut + 1,
                "%s collapsed: a path of more than %d frames" % (name, cut + 1))
        v.check(sum(int(ln.rsplit(" ", 1)[1]) for ln in lines) == total,
                "%s collapsed: the values do not add up to %d ns" % (name, total))
    if fmt == "speedscope":
        doc = json.loads(text)
        prof = doc["profiles"][0]
        v.check(max(len(s) for s in prof["samples"]) <= cut + 1,
                "%s speedscope: a sample of more than %d frames" % (name, cut + 1))
        v.check(sum(prof["weights"]) == total, "%s speedscope: weights do not add up" % name)
        for p in check_speedscope.check_doc(doc):
            v.check(False, "%s speedscope: %s" % (name, p))
    if fmt == "pprof" and shutil.which("go"):
        r = check_pprof.pprof(check_pprof.go_env(workdir), "-raw", out, check=False)
        if v.check(r.returncode == 0, "%s: go tool pprof -raw: %r" % (name, r.stderr[-300:])):
            _, samples = check_pprof.parse_raw(r.stdout.decode(errors="replace"))
            v.check(max(len(s[1]) for s in samples) <= cut + 1,
                    "%s pprof: a sample of more than %d frames" % (name, cut + 1))
            v.check(sum(s[2][-1] for s in samples) == total,
                    "%s pprof: wall values do not add up to %d" % (name, total))
            for n in labels:
                v.check(any(s[1][-1] == "[... %d frames cut]" % n for s in samples),
                        "%s pprof: go tool pprof sees no '[... %d frames cut]' leaf" % (name, n))


def main():
    a = viewlib.args()
    v = viewlib.Verdict("deep")
    w = os.path.join(a.workdir, "deep")
    os.makedirs(w, exist_ok=True)
    chain = os.path.join(w, "chain.prof")
    synth.deep(chain, 1000000)
    combed = os.path.join(w, "comb.prof")
    comb(combed, 3000)
    chain5 = os.path.join(w, "chain-1e5.prof")
    synth.deep(chain5, 100000)
    for prof, formats in ((chain, PATHS), (combed, PATHS + OTHERS), (chain5, OTHERS)):
        name = os.path.basename(prof)
        stats, tree = viewlib.fnptree.read(prof)
        nkept, labels = kept(tree, CUT)
        total = total_ns(tree)
        for fmt in formats:
            paths = fmt in PATHS
            bound = 64 * nkept * (CUT + 1) if paths else 512 * len(tree.nodes) + 65536
            out = os.path.join(w, "%s.%s" % (name, fmt))
            rc, err = convert(a.fnprof, prof, fmt, out)
            if not v.check(rc == 0, "%s --to %s: exit %s: %s" % (name, fmt, rc, err[-300:])):
                continue
            size = os.path.getsize(out)
            v.check(size <= bound, "%s --to %s: %d bytes, over %d" % (name, fmt, size, bound))
            if paths:
                v.check(err.count("\n") == 1 and err.startswith("fnprof: convert: ")
                        and "folded into" in err and "--max-depth" in err,
                        "%s --to %s: no one-line note of the cut: %r" % (name, fmt, err))
                with open(out, "rb") as f:
                    check_paths(v, name, fmt, f.read(), labels, total, CUT, out, w)
            else:
                with open(out, "rb") as f:
                    uncut = b"frames cut" not in f.read()
                v.check(not err and uncut, "%s --to %s: cut, or %r" % (name, fmt, err))
            os.unlink(out)
    # Other cuts on a chain of 500: none, and 10 frames (501 - 10 = 491 cut).
    small = os.path.join(w, "chain500.prof")
    synth.deep(small, 500)
    out = os.path.join(w, "chain500.collapsed")
    rc, err = convert(a.fnprof, small, "collapsed", out, ["--max-depth", "0"])
    text = read_text(out) if rc == 0 else ""
    v.check(rc == 0 and not err and "frames cut" not in text and max(
        ln.count(";") + 1 for ln in text.splitlines()) == 501, "--max-depth 0: %r" % err)
    rc, err = convert(a.fnprof, small, "collapsed", out, ["--max-depth", "10"])
    text = read_text(out) if rc == 0 else ""
    v.check(rc == 0 and "[... 491 frames cut]" in text and "deeper than 10 frames" in err,
            "--max-depth 10: %r" % err)
    for bad in ("-1", "x", "4294967296"):
        rc, err = convert(a.fnprof, small, "collapsed", out, ["--max-depth", bad])
        v.check(rc == 2 and err.count("\n") == 1 and "--max-depth" in err,
                "--max-depth %s: exit %s, %r" % (bad, rc, err))
    return v.done()


if __name__ == "__main__":
    sys.exit(main())
# SPDX-License-Identifier: MIT
