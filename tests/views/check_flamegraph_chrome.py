#!/usr/bin/env python3
"""fnprof convert --to flamegraph, as headless Chromium renders it (tests/views/html/cdp.py):
check_flamegraph.py reads the SVG's text; this reads the page a reader sees, after the
SVG's own script ran.

  - opened over file://: no console error, no exception, no request for anything else;
  - every function of the tree names a frame (its title), and a frame's drawn text is its
    name or the name's start and "..";
  - each frame's rendered width (getBoundingClientRect) is its tree total times one scale,
    and each thread's frame is as wide as the thread's total, within a pixel;
  - the script works: a click on a frame zooms (it and its ancestors span the whole, its
    siblings are hidden, its children keep their share of it); a click on "all" undoes
    it; Search (prompt answered by the test) paints the matching frames and says the
    share they cover.
The checks must reject a wrong file: one frame's width changed, a script error injected,
and a script whose click no longer zooms. Skips (77) when no chromium is installed.
python3 standard library only.
"""
import os
import re
import sys

import viewlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "html"))
import cdp  # noqa: E402  pylint: disable=wrong-import-position
from check_flamegraph import incl_values, shown  # noqa: E402  pylint: disable=wrong-import-position

fnptree = viewlib.fnptree
PX = 1.0  # a pixel: the SVG is drawn at its own size (width = viewBox width)
HIT = "rgb(230, 0, 230)"  # the script's search colour, as getComputedStyle spells it

READY = "typeof F !== 'undefined' && F.length > 0 && " \
    "F.length === document.querySelectorAll('#frames > g').length"

FRAMES_JS = """[...document.querySelectorAll('#frames > g')].map(g => {
  const r = g.children[1].getBoundingClientRect();
  return {node: g.hasAttribute('data-node') ? +g.getAttribute('data-node') : null,
          synthetic: g.getAttribute('data-synthetic'),
          thread: g.hasAttribute('data-thread') ? +g.getAttribute('data-thread') : null,
          name: g.children[0].textContent.split('\\n')[0], text: g.children[2].textContent,
          x: r.left, y: r.top, w: r.width,
          fill: getComputedStyle(g.children[1]).fill,
          shown: getComputedStyle(g).display !== 'none'};
})"""


def read_frames(page):
    return page.eval(FRAMES_JS)


def check_drawn(v, name, frames, stats, tree):
    """Names and rendered widths against the tree."""
    names = viewlib.labels(stats)
    titles = {f["name"] for f in frames}
    for key in sorted({n.key for n in tree.nodes}):
        label = shown(names[key])
        v.check(label in titles, "%s: no frame names %r" % (name, label))
    for f in frames:
        t = f["text"]
        v.check(t == "" or t == f["name"] or (t.endswith("..") and f["name"].startswith(t[:-2])),
                "%s: frame %r drawn as %r" % (name, f["name"], t))
    whole = [f for f in frames if f["synthetic"] == "all"]
    if not v.check(len(whole) == 1, "%s: %d 'all' frames" % (name, len(whole))):
        return
    whole = whole[0]
    incl = incl_values(tree)
    total = sum(incl[n.index] for n in tree.roots())
    scale = whole["w"] / total if total else 0
    by_node = {f["node"]: f for f in frames if f["node"] is not None}
    v.check(len(by_node) == len(tree.nodes), "%s: %d frames for %d nodes"
            % (name, len(by_node), len(tree.nodes)))
    for n in tree.nodes:
        f = by_node.get(n.index)
        if f and abs(f["w"] - incl[n.index] * scale) > PX:
            v.check(False, "%s: %s is %.2f px wide, its total %d of %d is %.2f px"
                    % (name, f["name"], f["w"], incl[n.index], total, incl[n.index] * scale))
    threads = {f["thread"]: f for f in frames if f["synthetic"] == "thread"}
    for t in range(len(tree.threads)):
        want = sum(incl[n.index] for n in tree.roots() if n.thread == t) * scale
        if len(tree.threads) > 1:
            f = threads.get(t)
            got = f["w"] if f else -1
        else:
            got = sum(by_node[n.index]["w"] for n in tree.roots() if n.index in by_node)
        v.check(abs(got - want) <= PX, "%s: thread %d drawn %.2f px wide, its total %.2f px"
                % (name, t, got, want))


def center(f):
    return f["x"] + f["w"] / 2, f["y"] + 8


def check_zoom(v, name, page, tree):
    """A click on c under a;main zooms to it; a click on 'all' undoes it."""
    before = read_frames(page)
    whole = [f for f in before if f["synthetic"] == "all"][0]
    by_node = {f["node"]: f for f in before if f["node"] is not None}
    path = lambda n: [k[2] for k in tree.path(n)]  # noqa: E731
    target = max((n for n in tree.nodes if path(n)[-3:] == ["main", "a", "c"]),
                 key=lambda n: by_node[n.index]["w"])
    page.click(*center(by_node[target.index]))
    after = read_frames(page)
    z = {f["node"]: f for f in after if f["node"] is not None}
    got = z[target.index]
    v.check(abs(got["w"] - whole["w"]) <= PX and abs(got["x"] - whole["x"]) <= PX,
            "%s: c under main;a clicked, it is %.2f px wide at %.2f, the whole %.2f at %.2f"
            % (name, got["w"], got["x"], whole["w"], whole["x"]))
    ratio = whole["w"] / by_node[target.index]["w"]
    ancestors = set()
    up = target.parent
    while up is not None:
        ancestors.add(up.index)
        up = up.parent
    sub = {target.index}
    for n in tree.nodes:
        if n.parent is not None and n.parent.index in sub:
            sub.add(n.index)
    for n in tree.nodes:
        f = z[n.index]
        if n.index in ancestors:
            v.check(f["shown"] and abs(f["w"] - whole["w"]) <= PX,
                    "%s: ancestor %s %.2f px wide after the zoom" % (name, f["name"], f["w"]))
        elif n.index in sub:
            want = by_node[n.index]["w"] * ratio
            v.check(f["shown"] and abs(f["w"] - want) <= PX, "%s: %s %.2f px after the zoom, "
                    "want %.2f" % (name, f["name"], f["w"], want))
        else:
            v.check(not f["shown"], "%s: %s still shown after the zoom" % (name, f["name"]))
    page.click(*center([f for f in after if f["synthetic"] == "all"][0]))
    back = read_frames(page)
    # unzoom writes the widths back with two decimals
    moved = [(f["name"], f["x"], f["w"], f["shown"], g["x"], g["w"]) for f, g in zip(back, before)
             if abs(f["x"] - g["x"]) > 0.01 or abs(f["w"] - g["w"]) > 0.01 or not f["shown"]]
    v.check(len(back) == len(before) and not moved,
            "%s: a click on 'all' does not restore the graph: %s" % (name, moved[:3]))


def check_search(v, name, page, tree):
    """Search for ^c$ (the prompt answered by the test): c's frames painted, the rest not,
    and the share they cover said."""
    page.eval("window.prompt = () => '^c$', true")
    btn = page.eval("(() => { const r = document.getElementById('search')"
                    ".getBoundingClientRect();"
                    " return [r.left + r.width / 2, r.top + r.height / 2]; })()")
    page.click(*btn)
    frames = read_frames(page)
    for f in frames:
        hit = f["name"] == "c" and f["synthetic"] is None
        v.check((f["fill"] == HIT) == hit, "%s: after searching ^c$, %s is %s"
                % (name, f["name"], f["fill"]))
    incl = incl_values(tree)
    total = sum(incl[n.index] for n in tree.roots())
    cs = sum(incl[n.index] for n in tree.nodes if n.key[2] == "c" and
             not any(k[2] == "c" for k in tree.path(n)[:-1]))
    said = page.eval("document.getElementById('matched').textContent")
    m = re.fullmatch(r"Matched: ([\d.]+)%", said or "")
    v.check(m and abs(float(m.group(1)) - 100.0 * cs / total) <= 0.1,
            "%s: search says %r, c covers %.2f%%" % (name, said, 100.0 * cs / total))
    page.click(*btn)
    v.check(all(f["fill"] != HIT for f in read_frames(page)),
            "%s: Reset Search leaves frames painted" % name)


def check_svg(v, name, page, path, stats, tree):
    try:
        page.navigate("file://" + os.path.abspath(path), ready=READY, timeout=20)
    except cdp.CDPError as e:
        v.check(False, "%s: %s" % (name, e))
    for p in page.problems():
        v.check(False, "%s: %s" % (name, p))
    try:
        check_drawn(v, name, read_frames(page), stats, tree)
        check_zoom(v, name, page, tree)
        check_search(v, name, page, tree)
    except (cdp.CDPError, KeyError, IndexError, ValueError) as e:
        v.check(False, "%s: %s: %s" % (name, type(e).__name__, e))
    for p in page.problems():
        v.check(False, "%s: %s" % (name, p))


def self_check(v, page, text, workdir, stats, tree):
    """Each wrong file must be rejected."""
    def width_off(t):
        return re.sub(r'(data-node="3">.*?width=")([\d.]+)',
                      lambda m: m.group(1) + "%.2f" % (float(m.group(2)) + 5), t, count=1,
                      flags=re.S)

    def script_error(t):
        return t.replace("function frameOf(node) {", "function frameOf(node) {\n  nosuch();",
                         1)

    def click_does_not_zoom(t):
        return t.replace("else zoom(k);", "else {}", 1)

    for mutate in (width_off, script_error, click_does_not_zoom):
        bad = mutate(text)
        if not v.check(bad != text, "self-check: %s changed nothing" % mutate.__name__):
            continue
        path = os.path.join(workdir, "paths-bad-%s.chromium.svg" % mutate.__name__)
        with open(path, "w", encoding="utf-8") as f:
            f.write(bad)
        probe = viewlib.Verdict("self-check")
        check_svg(probe, mutate.__name__, page, path, stats, tree)
        v.check(probe.problems, "self-check: the checks accept %s" % mutate.__name__)
        if mutate is script_error:
            v.check(any("exception" in p for p in probe.problems),
                    "self-check: the script's exception is not reported")
        for p in probe.problems[:2]:
            print("self-check %s caught: %s" % (mutate.__name__, p))


def main():
    a = viewlib.args()
    v = viewlib.Verdict("flamegraph in chromium")
    exe = cdp.Browser.find()
    if not exe:
        print("SKIP: no chromium on PATH (Debian: apt-get install chromium)")
        return viewlib.SKIP
    svgs = {}
    for base in ("paths", "paths-count"):
        out = os.path.join(a.workdir, base + ".chromium.svg")
        viewlib.convert(a.fnprof, os.path.join(a.workdir, base + ".prof"), "flamegraph", out)
        svgs[base] = out
    with cdp.Browser(exe) as browser:
        page = browser.page()
        for base, path in svgs.items():
            stats, tree = fnptree.read(os.path.join(a.workdir, base + ".prof"))
            check_svg(v, base, page, path, stats, tree)
        stats, tree = fnptree.read(os.path.join(a.workdir, "paths.prof"))
        with open(svgs["paths"], encoding="utf-8") as f:
            self_check(v, page, f.read(), a.workdir, stats, tree)
        page.close()
    return v.done()


if __name__ == "__main__":
    sys.exit(main())
# SPDX-License-Identifier: MIT
