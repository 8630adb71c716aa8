#!/usr/bin/env python3
"""fnprof convert --to flamegraph: a self-contained SVG, read with xml.etree and compared
with the tree as tests/e2e/fnptree.py reads it.

  - well-formed XML, an <svg> root, no outside resource (no href/src/url() leaving the
    file, no http(s) URL but the SVG namespace, no @import), an inline script that zooms
    and searches;
  - the frames (children of <g id="frames">): one per tree node (data-node), plus the
    synthetic "all" and, with several threads, one per thread (data-synthetic); each a
    <title>, a <rect> and a <text> (the name, or its start and "..", or nothing);
  - each node's title: its label, file:line, its exact calls, its self and total value
    in ns/us/ms/s (or calls) within the display's rounding, and the share of the whole;
  - geometry, read from the rects alone: the frame a row below whose x-range holds a
    frame is its tree parent's; widths are total values times one scale; siblings do
    not overlap; c calls d only under a;
  - colours warm and the same for one function; count-only and CPython inputs; edge
    cases (names with any character, an empty tree, one name in two files, a deep
    chain, a random tree of 20k nodes, and the time for 200k); and a wrong file fails.
python3 standard library only.
"""
import bisect
import os
import re
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

import viewlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "flamegraph"))
import synth  # noqa: E402  pylint: disable=wrong-import-position

fnptree = viewlib.fnptree
SVG = "{http://www.w3.org/2000/svg}"
URL = re.compile(r"(?i)\b(?:https?|ftp|file|data):")
NAMESPACE = re.compile(r'xmlns(?::\w+)?="http://www\.w3\.org/2000/svg"')
UNITS = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9, "call": 1, "calls": 1}


def shown(name):
    """A name as the SVG can hold it: invalid UTF-8 (marshal's surrogates) and control
    characters but tab become U+FFFD."""
    name = name.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    return "".join("\ufffd" if (ord(c) < 0x20 and c != "\t") or c == "\x7f" else c
                   for c in name)


def num(text):
    """A coordinate and its rounding: half a unit of its last decimal."""
    dec = len(text.split(".")[1]) if "." in text else 0
    return float(text), 0.5 * 10 ** -dec + 1e-9 * abs(float(text))


def outside_references(text, root):
    problems = []
    if URL.search(NAMESPACE.sub("", text)):
        problems.append("a URL in the file: %r" % URL.search(NAMESPACE.sub("", text)).group(0))
    if "@import" in text:
        problems.append("a CSS @import")
    for el in root.iter():
        for attr, value in el.attrib.items():
            local = attr.split("}")[-1]
            if local in ("href", "src") and not value.startswith("#"):
                problems.append("<%s %s=%r>" % (el.tag.split("}")[-1], local, value))
            for ref in re.findall(r"url\(\s*['\"]?([^)'\"]*)", value):
                if not ref.startswith("#"):
                    problems.append("%s=url(%s)" % (local, ref))
        if el.tag in (SVG + "style",) and el.text:
            for ref in re.findall(r"url\(\s*['\"]?([^)'\"]*)", el.text):
                if not ref.startswith("#"):
                    problems.append("style url(%s)" % ref)
        if el.tag in (SVG + "image", SVG + "foreignObject", SVG + "iframe"):
            problems.append("a <%s> element" % el.tag.split("}")[-1])
    return problems


class Frame:
    __slots__ = ("kind", "node", "thread", "lines", "x", "xtol", "w", "wtol", "y", "fill",
                 "text", "parent")


def parse(text):
    """(root, frames, problems) of an SVG's text; frames in document order."""
    try:
        root = ET.fromstring(text)
    except ET.ParseError as e:
        return None, [], ["not well-formed XML: %s" % e]
    problems = []
    if root.tag != SVG + "svg":
        problems.append("the root is <%s>, not <svg>" % root.tag)
    problems += outside_references(text, root)
    holder = [g for g in root.iter(SVG + "g") if g.get("id") == "frames"]
    if len(holder) != 1:
        return root, [], problems + ["%d <g id=frames>" % len(holder)]
    frames = []
    for i, g in enumerate(holder[0]):
        kids = list(g)
        if g.tag != SVG + "g" or [k.tag for k in kids] != [SVG + "title", SVG + "rect",
                                                          SVG + "text"]:
            problems.append("frame %d: <%s> of %s, want <g> of title, rect, text"
                            % (i, g.tag, [k.tag.split("}")[-1] for k in kids]))
            continue
        f = Frame()
        f.kind = g.get("data-synthetic") or ("node" if g.get("data-node") else None)
        f.node = int(g.get("data-node")) if g.get("data-node") else None
        f.thread = int(g.get("data-thread")) if g.get("data-thread") else None
        f.lines = (kids[0].text or "").split("\n")
        rect = kids[1]
        try:
            f.x, f.xtol = num(rect.get("x"))
            f.w, f.wtol = num(rect.get("width"))
            f.y = float(rect.get("y"))
        except (TypeError, ValueError, IndexError):
            problems.append("frame %d: rect %r" % (i, rect.attrib))
            continue
        f.fill = rect.get("fill")
        f.text = kids[2].text or ""
        f.parent = None
        frames.append(f)
    return root, frames, problems


def geometric_parents(frames):
    """Each frame's parent found from the rects alone: the frame one row down (the row
    height is the all frame's distance to the frames above it) whose x-range holds it.
    Zero-width frames have none (any would hold them)."""
    rows = sorted({f.y for f in frames}, reverse=True)
    step = rows[0] - rows[1] if len(rows) > 1 else 0
    by_row = {}
    for f in frames:
        by_row.setdefault(f.y, []).append(f)
    for row in by_row.values():
        row.sort(key=lambda f: f.x)
    starts = {y: [f.x for f in row] for y, row in by_row.items()}
    found = {}
    for f in frames:
        if f.y == rows[0] or f.w <= f.wtol:
            continue
        below = by_row.get(f.y + step, [])
        # frames in a row do not overlap (siblings_apart): look left from f's start
        # until a frame ends before it
        holders = []
        # (a start rounds by at most 0.005: two decimals are the fewest written)
        for j in range(bisect.bisect_right(starts.get(f.y + step, []), f.x + 0.011) - 1, -1, -1):
            p = below[j]
            if p.w <= p.wtol:
                continue
            slack = p.xtol + p.wtol + f.xtol + f.wtol
            if p.x + p.w + slack < f.x:
                break
            if p.x - p.xtol - f.xtol <= f.x and f.x + f.w <= p.x + p.w + slack:
                holders.append(p)
        found[id(f)] = holders
    return found, step


def value_of(line, what):
    """The number in 'what: 1.234 ms (5.67%)', in ns (or calls), its rounding, and pct."""
    m = re.fullmatch(r"%s: (\d+(?:\.(\d+))?) (ns|us|ms|s|calls?) \((\d+\.\d\d)%%\)" % what,
                     line)
    if not m:
        return None
    unit = UNITS[m.group(3)]
    dec = len(m.group(2) or "")
    return float(m.group(1)) * unit, 0.5 * 10 ** -dec * unit + 1e-6, float(m.group(4))


def incl_values(tree):
    """Each node's total as fnp_tree_values defines it: its own value (clamped at 0) plus
    its children's totals."""
    incl = [tree.self_value(n) for n in tree.nodes]
    for n in reversed(tree.nodes):
        if n.parent is not None:
            incl[n.parent.index] += incl[n.index]
    return incl


def check_svg(text, stats, tree, rebuilt=False):
    """Problems of a flame graph against the dict and, when the file has one, the tree."""
    root, frames, problems = parse(text)
    if root is None or not frames:
        return problems + ([] if root is None else ["no frames"])
    script = "".join(s.text or "" for s in root.iter(SVG + "script"))
    for needed in ("function zoom", "function unzoom", "function search", "prompt("):
        if needed not in script:
            problems.append("the script has no %r" % needed)
    ids = {el.get("id") for el in root.iter()}
    for needed in ("unzoom", "search", "matched", "details", "title"):
        if needed not in ids:
            problems.append("no element with id %r" % needed)
    alls = [f for f in frames if f.kind == "all"]
    threads = [f for f in frames if f.kind == "thread"]
    nodes = [f for f in frames if f.kind == "node"]
    if len(alls) != 1 or frames[0] is not alls[0]:
        return problems + ["%d all frames, the first frame is %s" % (len(alls), frames[0].kind)]
    if len(nodes) + len(alls) + len(threads) != len(frames):
        problems.append("frames that are neither nodes nor synthetic")
    names = viewlib.labels(stats)
    by_label = {shown(names[k]): k for k in stats}
    # geometry from the rects alone
    parents, step = geometric_parents(frames)
    if len(frames) > 1 and step <= 0:
        problems.append("frames are not stacked in rows")
    whole = alls[0]
    warm = re.compile(r"rgb\((\d+),(\d+),(\d+)\)")
    fills = {}
    for f in nodes:
        m = warm.fullmatch(f.fill or "")
        if not m or not (int(m.group(1)) >= 200 and int(m.group(3)) <= 60):
            problems.append("node %d: fill %r is not a warm hue" % (f.node, f.fill))
        label = f.lines[0]
        if fills.setdefault(label, f.fill) != f.fill:
            problems.append("%r drawn in two colours" % label)
        if f.text and f.text != label and not (f.text.endswith("..")
                                               and label.startswith(f.text[:-2])):
            problems.append("node %d: text %r for %r" % (f.node, f.text, label))
    if tree is None:
        return problems + check_rebuilt(frames, parents, stats, by_label, whole)

    # one frame per node, in the tree's order
    if [f.node for f in nodes] != list(range(len(tree.nodes))):
        problems.append("frames for nodes %s, the tree has %d"
                        % ([f.node for f in nodes][:10], len(tree.nodes)))
        return problems
    several = len(tree.threads) > 1
    if len(threads) != (len(tree.threads) if several else 0):
        problems.append("%d thread frames for %d threads" % (len(threads), len(tree.threads)))
    incl = incl_values(tree)
    total_ticks = sum(incl[n.index] for n in tree.roots())
    total = viewlib.ns(tree, total_ticks)
    scale = whole.w / total_ticks if total_ticks else 0
    frame_of = {f.node: f for f in nodes}
    thread_frame = {f.thread: f for f in threads}
    for n in tree.nodes:
        f = frame_of[n.index]
        where = "node %d (%s)" % (n.index, ";".join(k[2] for k in tree.path(n)))
        want = [shown(names[n.key]),
                "built-in" if n.key[0] == "~" else "%s:%d" % (shown(n.key[0]), n.key[1]),
                "%d call%s" % (n.ncalls, "" if n.ncalls == 1 else "s")]
        if f.lines[:3] != want:
            problems.append("%s: title %r, want %r" % (where, f.lines[:3], want))
        for what, ticks, line in (("self", tree.self_value(n), 3), ("total", incl[n.index], 4)):
            got = value_of(f.lines[line] if len(f.lines) > line else "", what)
            v = viewlib.ns(tree, ticks)
            if got is None:
                problems.append("%s: no %s value in %r" % (where, what, f.lines))
            elif abs(got[0] - v) > got[1] or (total and abs(got[2] - 100 * v / total) > 0.0051):
                problems.append("%s: %s %r, the tree says %d of %d" % (where, what, got, v, total))
        # geometry: width by total, held by the parent's frame, one row up
        if abs(f.w - incl[n.index] * scale) > f.wtol + 1e-9 * whole.w:
            problems.append("%s: width %r for a total of %d ticks (%r a tick)"
                            % (where, f.w, incl[n.index], scale))
        up = (frame_of[n.parent.index] if n.parent is not None
              else thread_frame.get(n.thread) if several else whole)
        if up is None or abs(up.y - f.y - step) > 1e-9:
            problems.append("%s: not one row above its parent's frame" % where)
        elif id(f) in parents and parents[id(f)] != [up]:
            problems.append("%s: drawn over %s, its parent is %s" % (
                where, [p.lines[0] for p in parents[id(f)]], up.lines[0]))
    for t, f in thread_frame.items():
        want = sum(incl[n.index] for n in tree.roots() if n.thread == t)
        # XML has no U+FFFE or U+FFFF: the writer puts U+FFFD there, as for invalid bytes.
        name = tree.threads[t].replace("\ufffe", "\ufffd").replace("\uffff", "\ufffd")
        if f.lines[0] != name or abs(f.w - want * scale) > f.wtol + 1e-9 * whole.w:
            problems.append("thread frame %d: %r, width %r for %d ticks" % (t, f.lines[0], f.w,
                                                                           want))
    problems += siblings_apart(frames)
    return problems


def siblings_apart(frames):
    by_row = {}
    for f in frames:
        by_row.setdefault(f.y, []).append(f)
    problems = []
    for row in by_row.values():
        row.sort(key=lambda f: (f.x, f.w))
        for a, b in zip(row, row[1:]):
            if b.x + b.xtol + a.xtol + a.wtol < a.x + a.w and b.w > b.wtol and a.w > a.wtol:
                problems.append("%r and %r overlap" % (a.lines[0], b.lines[0]))
    return problems[:5]


def check_rebuilt(frames, parents, stats, by_label, whole):
    """CPython's file: every frame is a function of the dict, stands on one frame, a
    caller of its function, and is as wide as its total says; the whole is the
    functions' own times."""
    problems = []
    whole_total = value_of(whole.lines[-1], "total")
    for f in frames:
        if f.kind != "node":
            continue
        key = by_label.get(f.lines[0])
        if key is None:
            problems.append("frame %r is no function of the dict" % f.lines[0])
            continue
        total = value_of(f.lines[4] if len(f.lines) > 4 else "", "total")
        if total is None or whole_total is None or not whole_total[0]:
            problems.append("frame %r: no total in %r" % (f.lines[0], f.lines))
            continue
        want = total[0] / whole_total[0] * whole.w
        slack = f.wtol + whole.w * (total[1] + whole_total[1] * total[0] / whole_total[0]) / \
            whole_total[0]
        if abs(f.w - want) > slack:
            problems.append("frame %r: width %r for %r of %r" % (f.lines[0], f.w, total,
                                                                 whole_total))
        holders = parents.get(id(f), [])
        if f.w > f.wtol and len(holders) != 1:
            problems.append("frame %r stands on %d frames" % (f.lines[0], len(holders)))
        if len(holders) == 1 and holders[0].kind == "node":
            caller = by_label.get(holders[0].lines[0])
            if caller not in stats[key][4]:
                problems.append("%r over %r, which never calls it" % (f.lines[0],
                                                                      holders[0].lines[0]))
    got = value_of(whole.lines[-1], "total")
    want = sum(v[2] for v in stats.values()) * 1e9
    if got is None or not (0.99 * want <= got[0] + got[1] and got[0] - got[1] <= want * 1.0001):
        problems.append("the whole is %r, the dict's own times %.0f ns" % (got, want))
    return problems


def d_only_under_a(text):
    """The shape fnprof exists to get right, from the rects alone."""
    _, frames, problems = parse(text)
    parents, _ = geometric_parents(frames)

    def chain(f):
        out = []
        while True:
            up = parents.get(id(f), [])
            if len(up) != 1:
                return out
            f = up[0]
            out.append(f.lines[0])

    ds = [f for f in frames if f.lines[0] == "d"]
    if not ds:
        problems.append("no frame for d")
    for f in ds:
        if chain(f)[:3] != ["c", "a", "main"]:
            problems.append("d drawn over %s" % chain(f))
    return problems


def self_check(v, text, stats, tree):
    """Each wrong file must be rejected."""
    def calls_off(t):
        return re.sub(r"\n3 calls\n", "\n4 calls\n", t, count=1)

    def width_off(t):
        return re.sub(r'(data-node="3">.*?width=")([\d.]+)',
                      lambda m: m.group(1) + "%.2f" % (float(m.group(2)) * 1.1), t, count=1,
                      flags=re.S)

    def outside_image(t):
        return t.replace("</svg>", '<image href="http://example.com/x.png"/></svg>')

    def outside_relative(t):
        return t.replace("</svg>", '<image href="pic.png" width="9" height="9"/></svg>')

    def outside_font(t):
        return t.replace("</style>", "@font-face { src: url(https://example.com/f.woff); }"
                         "</style>")

    def frame_dropped(t):
        return re.sub(r'<g data-node="5">.*?</g>\n', "", t, count=1, flags=re.S)

    def not_well_formed(t):
        return t[:len(t) // 2]

    def self_time_off(t):
        return re.sub(r"\nself: [\d.]+ (ns|us|ms)", "\nself: 999 \\1", t, count=1)

    def wrong_name(t):
        return t.replace("<title>c\n", "<title>cc\n", 1)

    def d_moved_under_b(t):
        # d's frame and its burn, shifted onto b;c's x-range
        _, frames, _ = parse(t)
        bc = [f for f in frames if f.lines[0] == "c" and f.node is not None and
              tree.nodes[f.node].parent.key[2] == "b"][0]
        for f in frames:
            if f.node is not None and "d" in [k[2] for k in tree.path(tree.nodes[f.node])]:
                t = re.sub(r'(data-node="%d">.*?<rect x=")[\d.]+' % f.node,
                           lambda m: m.group(1) + "%.3f" % bc.x, t, count=1, flags=re.S)
        return t

    for mutate in (calls_off, width_off, outside_image, outside_relative, outside_font,
                   frame_dropped,
                   not_well_formed, self_time_off, wrong_name, d_moved_under_b):
        bad = mutate(text)
        if bad == text:
            v.check(False, "self-check: %s changed nothing" % mutate.__name__)
            continue
        problems = check_svg(bad, stats, tree) + d_only_under_a(bad)
        v.check(problems, "self-check: the checker accepts %s" % mutate.__name__)


def convert(a, prof, out):
    r = viewlib.convert(a.fnprof, prof, "flamegraph", out)
    with open(out, encoding="utf-8") as f:
        return f.read(), r.stderr.decode()


def report(v, name, problems):
    for p in problems[:15]:
        v.check(False, "%s: %s" % (name, p))


def check_js(v, text, workdir):
    """The inline script parses (node --check), when node is installed."""
    node = shutil.which("node") or shutil.which("nodejs")
    if not node:
        print("note: no node on PATH: the script's syntax is not checked")
        return
    root = ET.fromstring(text)
    js = "\n".join(s.text or "" for s in root.iter(SVG + "script"))
    path = os.path.join(workdir, "flamegraph-script.js")
    with open(path, "w", encoding="utf-8") as f:
        f.write(js)
    r = subprocess.run([node, "--check", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    v.check(r.returncode == 0, "the script does not parse: %s" % r.stderr.decode()[:300])


def main():
    a = viewlib.args()
    v = viewlib.Verdict("flamegraph")
    for name in ("paths.prof", "paths-count.prof"):
        prof = os.path.join(a.workdir, name)
        text, _ = convert(a, prof, os.path.join(a.workdir, name + ".svg"))
        stats, tree = fnptree.read(prof)
        report(v, name, check_svg(text, stats, tree) + d_only_under_a(text))
        if tree.kind == fnptree.KIND_CALLS:
            v.check("\nself: 1 call (" in text and " calls (" in text,
                    name + ": count-only values are not in calls")
        else:
            check_js(v, text, a.workdir)
            self_check(v, text, stats, tree)
    # CPython's cProfile file: no tree; paths rebuilt, said on stderr and in the subtitle
    prof = os.path.join(a.workdir, "paths-py.prof")
    text, err = convert(a, prof, os.path.join(a.workdir, "paths-py.svg"))
    v.check(err.count("rebuilt from caller edges") == 1, "paths-py.prof: no note on stderr")
    v.check("rebuilt from caller edges" in text, "paths-py.prof: the graph does not say rebuilt")
    stats, _ = fnptree.read(prof)
    report(v, "paths-py.prof", check_svg(text, stats, None))
    # edge cases, made up
    synth_dir = os.path.join(a.workdir, "flamegraph-synth")
    os.makedirs(synth_dir, exist_ok=True)
    for name, make in (("odd", synth.odd_names), ("empty", synth.empty),
                       ("long-threads", synth.long_threads),
                       ("deep", lambda p: synth.deep(p, 3000)),
                       ("random", lambda p: synth.large(p, 20000))):
        prof = os.path.join(synth_dir, name + ".prof")
        make(prof)
        text, _ = convert(a, prof, os.path.join(synth_dir, name + ".svg"))
        stats, tree = fnptree.read(prof)
        report(v, name, check_svg(text, stats, tree))
    prof = os.path.join(synth_dir, "large.prof")
    synth.large(prof, 200000)
    out = os.path.join(synth_dir, "large.svg")
    start = time.monotonic()
    viewlib.convert(a.fnprof, prof, "flamegraph", out)
    took = time.monotonic() - start
    with open(out, "rb") as f:
        frames = f.read().count(b"<g data-node=")
    _, tree = fnptree.read(prof)
    print("large: %d nodes drawn in %.2f s" % (len(tree.nodes), took))
    v.check(frames == len(tree.nodes), "large: %d frames for %d nodes" % (frames,
                                                                          len(tree.nodes)))
    v.check(took < 2.0, "large: %.2f s for %d nodes (want well under 1 s; 2 s allowed)"
            % (took, len(tree.nodes)))
    os.unlink(out)
    return v.done()


if __name__ == "__main__":
    sys.exit(main())
# SPDX-License-Identifier: MIT
