#!/usr/bin/env python3
"""fnprof convert --to html, read twice: the JSON the page embeds, against the tree and the
pstats dict as tests/e2e/fnptree.py and marshal read them; and the page itself, rendered by
a headless Chromium driven over the DevTools protocol (tests/views/html/cdp.py), which
must log no error and request nothing, and must show:
  - a chart whose frames, read by their geometry (a frame's parent is the frame above that
    spans it), are the tree's paths with widths in proportion to their inclusive values:
    d under a;c, never under b;c;
  - a table of one row per function with pstats' ncalls ("n/p") and times;
  - a click on a frame zooms to it (it spans the chart) and shows its function's callers
    and callees with the dict's edge numbers; hovering shows its numbers;
  - a click on a column header re-sorts, typing in the filter box filters;
  - the CPython file's (rebuilt) paths under a banner saying they are estimates;
  - the run's metadata in the header, key by key, as text (values with markup in them);
  - a large profile (tests/views/html/bigprof.py: 250k paths, 3000 functions, 1500 deep)
    loading within --max-load-ms, only visible frames and the first rows drawn.
The checks must reject a wrong page: a count and a path changed in the JSON are caught.
Skips (77) when no chromium is installed. python3 standard library only.
"""
import io
import json
import marshal
import os
import pstats
import re
import sys
import time

import viewlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "html"))
import bigprof  # noqa: E402  pylint: disable=wrong-import-position
import cdp  # noqa: E402  pylint: disable=wrong-import-position

fnptree = viewlib.fnptree
DATA_RE = re.compile(r'<script type="application/json" id="fnprof-data">(.*?)</script>', re.S)


def extra_args(ap):
    ap.add_argument("--max-load-ms", type=float, default=2000,
                    help="the large profile's page must be painted within this")
    ap.add_argument("--screenshot", help="save the paths.prof report's screenshot here")


# ---- the embedded JSON against the dict and the tree ---------------------------------------

def embedded(html):
    m = DATA_RE.search(html)
    if not m:
        raise ValueError("no fnprof-data script")
    return json.loads(m.group(1))


def with_data(html, data):
    """html with its JSON replaced (for the self-checks)."""
    text = json.dumps(data).replace("<", "\\u003c").replace(">", "\\u003e").replace("&",
                                                                                    "\\u0026")
    return DATA_RE.sub(lambda m: '<script type="application/json" id="fnprof-data">\n%s\n'
                       '</script>' % text, html, count=1)


def data_keys(d):
    f = d["funcs"]
    return [(d["files"][f["file"][i]], f["line"][i], f["name"][i]) for i in range(len(f["name"]))]


def close(a, b):
    return abs(a - b) <= 1e-9 + 1e-9 * max(abs(a), abs(b))


def check_data(v, name, d, stats, tree, rebuilt, meta=()):
    v.check(d.get("meta") == [[k, x] for k, x in meta], "%s: metadata %r, the file's %r"
            % (name, d.get("meta"), meta))
    keys = data_keys(d)
    f = d["funcs"]
    v.check(sorted(keys) == sorted(stats), "%s: functions differ from the dict" % name)
    for i, k in enumerate(keys):
        if k not in stats:
            continue
        pc, nc, tt, ct = stats[k][:4]
        v.check((f["nc"][i], f["pc"][i]) == (nc, pc),
                "%s: %r ncalls %d/%d, the dict %d/%d" % (name, k, f["nc"][i], f["pc"][i], nc, pc))
        v.check(close(f["tt"][i], tt) and close(f["ct"][i], ct), "%s: %r times %r %r, dict %r %r"
                % (name, k, f["tt"][i], f["ct"][i], tt, ct))
    want = {(caller, callee): e for callee, s in stats.items() for caller, e in s[4].items()}
    e = d["edges"]
    got = {(keys[e[i]], keys[e[i + 1]]): e[i + 2:i + 6] for i in range(0, len(e), 6)}
    v.check(set(got) == set(want), "%s: edges differ: missing %s, extra %s" % (
        name, sorted(set(want) - set(got))[:3], sorted(set(got) - set(want))[:3]))
    for edge, (nc, pc, tt, ct) in got.items():
        if edge in want:
            w = want[edge]  # cProfile's caller entries: (nc, pc, tt, ct)
            v.check((nc, pc) == tuple(w[:2]) and close(tt, w[2]) and close(ct, w[3]),
                    "%s: edge %r: %r, the dict %r" % (name, edge, (nc, pc, tt, ct), w))
    v.check(d["rebuilt"] == (1 if rebuilt else 0), "%s: rebuilt %r" % (name, d["rebuilt"]))
    if tree is None:
        return
    v.check(d["unit"] == ("calls" if tree.kind == fnptree.KIND_CALLS else "ns"),
            "%s: unit %r" % (name, d["unit"]))
    tick = 1 if tree.kind == fnptree.KIND_CALLS else tree.tick_seconds * 1e9
    v.check(close(d["tick"], tick), "%s: tick %r, the file's %r" % (name, d["tick"], tick))
    v.check(d["threads"] == tree.threads, "%s: threads %r" % (name, d["threads"]))
    got, want = data_paths(d), tree_paths(tree)
    v.check(set(got) == set(want), "%s: paths differ: missing %s, extra %s" % (
        name, sorted(set(want) - set(got))[:3], sorted(set(got) - set(want))[:3]))
    for path, (calls, incl) in want.items():
        if path in got:
            v.check(got[path] == (calls, incl), "%s: %s: calls, ticks %r, the tree %r"
                    % (name, "/".join(str(p) for p in path), got[path], (calls, incl)))


def data_paths(d):
    """{(thread, key, key, ...): (calls, inclusive ticks)} from the JSON's tree."""
    keys, t = data_keys(d), d["tree"]
    paths, roots = [], iter(t["thread"])
    out = {}
    for i in range(len(t["func"])):
        up = t["up"][i]
        path = ((next(roots),) if up == 0 else paths[i - up]) + (keys[t["func"][i]],)
        paths.append(path)
        out[path] = (t["calls"][i], t["incl"][i])
    return out


def tree_incl(tree):
    """Inclusive values as a flame graph needs them: own (clamped at 0) plus children's."""
    incl = {}
    for node in reversed(tree.nodes):
        incl[node.index] = tree.self_value(node) + sum(incl[c.index] for c in node.children)
    return incl


def tree_paths(tree):
    incl = tree_incl(tree)
    return {(n.thread,) + tree.path(n): (n.ncalls, incl[n.index]) for n in tree.nodes}


# ---- the page ---------------------------------------------------------------------------------

FRAMES_JS = """(() => {
  const box = document.getElementById('frames');
  if (!box) return null;
  const c = box.getBoundingClientRect();
  return {width: box.clientWidth, left: c.left, top: c.top,
          frames: [...box.querySelectorAll('.fr')].map(e => {
            const r = e.getBoundingClientRect();
            return [e.textContent, r.left - c.left, r.top - c.top, r.width, r.height,
                    e.className];
          })};
})()"""


def read_frames(page):
    """The chart as drawn: [{label, x, w, row, path (labels from the top), cls}], and the
    chart's width. A frame's parent is the frame in the row above whose span holds its
    middle."""
    g = page.eval(FRAMES_JS)
    if g is None:
        return [], 0, (0, 0)
    tops = sorted({round(f[2], 1) for f in g["frames"]})
    row_of = {t: i for i, t in enumerate(tops)}
    frames = [{"label": f[0], "x": f[1], "w": f[3], "y": f[2], "h": f[4], "cls": f[5],
               "row": row_of[round(f[2], 1)]} for f in g["frames"]]
    by_row = {}
    for fr in frames:
        by_row.setdefault(fr["row"], []).append(fr)
    for fr in sorted(frames, key=lambda fr: fr["row"]):
        mid = fr["x"] + fr["w"] / 2
        up = [p for p in by_row.get(fr["row"] - 1, []) if p["x"] - 0.01 <= mid <= p["x"] +
              p["w"] + 0.01]
        fr["path"] = (up[0]["path"] if up else ()) + (fr["label"],)
    return frames, g["width"], (g["left"], g["top"])


def expected_frames(stats, tree):
    """{label path: inclusive value} of the chart at the top: "all", the thread when there are
    several, then the function labels."""
    labels = viewlib.labels(stats)
    incl = tree_incl(tree)
    out = {("all",): 0}
    for n in tree.nodes:
        prefix = ("all",) + ((tree.threads[n.thread],) if len(tree.threads) > 1 else ())
        out[prefix + tuple(labels[k] for k in tree.path(n))] = incl[n.index]
        if n.parent is None:
            out[("all",)] += incl[n.index]
            if len(prefix) > 1:
                out[prefix] = out.get(prefix, 0) + incl[n.index]
    return out


def check_chart(v, name, page, stats, tree):
    frames, width, _ = read_frames(page)
    if not v.check(frames, "%s: no frames drawn" % name):
        return frames
    want = expected_frames(stats, tree)
    total = want[("all",)]
    got = {fr["path"]: fr for fr in frames}
    v.check(len(got) == len(frames), "%s: two frames on one path" % name)
    for path, incl in want.items():
        px = incl / total * width if total else 0
        fr = got.get(path)
        if fr is None:
            v.check(px < 1, "%s: no frame for %s (%.1f px wide)" % (name, ";".join(path), px))
        else:
            v.check(abs(fr["w"] - px) <= 1, "%s: %s is %.1f px wide, should be %.1f"
                    % (name, ";".join(path), fr["w"], px))
    for path in got:
        v.check(path in want, "%s: a frame for %s, which the tree does not have"
                % (name, ";".join(path)))
    return frames


def shape(v, name, frames):
    """The program's promise: d runs under a;c, never under b;c."""
    d = [fr["path"] for fr in frames if fr["label"] == "d"]
    v.check(d and all(p[-3:] == ("a", "c", "d") for p in d), "%s: d drawn at %s" % (
        name, [";".join(p) for p in d]))
    v.check(not any(p[-3:] == ("b", "c", "d") for p in d), "%s: d drawn under b;c" % name)


TABLE_JS = """[...document.querySelectorAll('#table tbody tr')].map(
  tr => [...tr.cells].map(td => td.textContent))"""


def pstats_ncalls(s):
    pc, nc = s[0], s[1]
    return str(nc) if nc == pc else "%d/%d" % (nc, pc)


def close_text(text, value, count):
    """A table cell against a number: calls exactly, seconds within their last decimal."""
    try:
        x = float(text)
    except ValueError:
        return False
    if count:
        return x == round(value)
    decimals = len(text.split(".")[1]) if "." in text else 0
    return abs(x - value) <= 0.5 * 10 ** -decimals + 1e-12


def check_table(v, name, page, stats, count, limit=200):
    rows = page.eval(TABLE_JS)
    std = {pstats.func_std_string(k): k for k in stats}
    v.check(len(rows) == min(len(stats), limit), "%s: %d rows for %d functions" % (
        name, len(rows), len(stats)))
    seen = set()
    for cells in rows:
        k = std.get(cells[5])
        if not v.check(k is not None, "%s: a row for %r, no such function" % (name, cells[5])):
            continue
        seen.add(k)
        s = stats[k]
        v.check(cells[0] == pstats_ncalls(s), "%s: %s ncalls %r, pstats %r" % (
            name, cells[5], cells[0], pstats_ncalls(s)))
        v.check(close_text(cells[1], s[2], count) and close_text(cells[3], s[3], count),
                "%s: %s tottime, cumtime %r %r, pstats %r %r" % (name, cells[5], cells[1],
                                                                 cells[3], s[2], s[3]))
    v.check(len(seen) == len(rows), "%s: a function twice in the table" % name)
    return rows


def center(page, selector_js):
    """The viewport point at the middle of the element selector_js finds, scrolled into
    view."""
    r = page.eval("(() => { const e = %s; if (!e) return null; e.scrollIntoView({block: "
                  "'nearest'}); const r = e.getBoundingClientRect(); return [r.left + r.width "
                  "/ 2, r.top + r.height / 2]; })()" % selector_js)
    if r is None:
        raise cdp.CDPError("nothing at " + selector_js)
    return r


def click_frame(page, frames, path):
    """Clicks the frame drawn for path (labels); False when there is none."""
    index = [i for i, fr in enumerate(frames) if fr["path"] == path]
    if not index:
        return False
    fr = frames[index[0]]
    # The frame's element: the one at its position with its text.
    x, y = center(page, "[...document.querySelectorAll('#frames .fr')].find(e => "
                  "e.textContent === %s && Math.abs(e.getBoundingClientRect().left - "
                  "document.getElementById('frames').getBoundingClientRect().left - %r) < 0.5 "
                  "&& Math.abs(e.getBoundingClientRect().top - document.getElementById("
                  "'frames').getBoundingClientRect().top - %r) < 0.5)"
                  % (json.dumps(fr["label"]), fr["x"], fr["y"]))
    page.click(x, y)
    return True


def edge_rows(page, table_id):
    return page.eval("[...document.querySelectorAll('#%s tbody tr')].map(tr => [...tr.cells]"
                     ".map(td => td.textContent).concat([tr.cells[3].title]))" % table_id) or []


def check_edges(v, name, page, stats, key, count):
    """The detail panel of key: its callers and callees with the dict's edge numbers."""
    std = {pstats.func_std_string(k): k for k in stats}
    want_callers = stats[key][4]
    want_callees = {k: s[4][key] for k, s in stats.items() if key in s[4]}
    for table, want in (("callers", want_callers), ("callees", want_callees)):
        rows = edge_rows(page, table)
        got = {std.get(r[4]): r for r in rows}
        v.check(set(got) == set(want), "%s: %s of %s: %s, the dict %s" % (
            name, table, key[2], sorted(r[4] for r in rows), sorted(want)))
        for k, r in got.items():
            if k in want:
                nc, pc, tt, ct = want[k]
                calls = str(nc) if nc == pc else "%d/%d" % (nc, pc)
                v.check(r[0] == calls and close_text(r[1], tt, count) and
                        close_text(r[2], ct, count), "%s: %s %s of %s: %r, the dict %r" % (
                            name, table, k[2], key[2], r[:3], want[k]))


META_JS = """(() => {
  const dl = document.getElementById('meta');
  if (!dl) return null;
  return {hidden: dl.hidden || dl.getBoundingClientRect().height === 0,
          pairs: [...dl.children].map(d => [d.querySelector('dt').textContent,
                                            d.querySelector('dd').textContent]),
          markup: dl.querySelectorAll('dd *, dt *').length};
})()"""


def check_meta(v, name, page, meta):
    """The header shows the file's metadata, in order, as text; nothing when it has none."""
    got = page.eval(META_JS)
    if not v.check(got is not None, "%s: no metadata list in the page" % name):
        return
    if meta:
        v.check(not got["hidden"], "%s: the metadata is hidden" % name)
        v.check(got["pairs"] == [[k, x] for k, x in meta], "%s: metadata shown %r, the file's "
                "%r" % (name, got["pairs"], meta))
        v.check(got["markup"] == 0, "%s: a metadata value became markup" % name)
    else:
        v.check(got["hidden"] and not got["pairs"], "%s: metadata shown for a file without: %r"
                % (name, got))


def with_meta(data, meta):
    """A profile file's bytes (fnptree.encode's) with meta in its trailer."""
    stream = io.BytesIO(data)
    stats = marshal.load(stream)
    end = stream.tell()
    return fnptree.encode(stats, fnptree.parse(stats, data[:end], data[end:]), meta)


def check_page(v, name, page, html_path, prof, screenshot=None):
    """Everything a reader of the report relies on, for one fnprof profile with a tree."""
    stats, tree, meta = fnptree.read_all(prof)
    count = tree.kind == fnptree.KIND_CALLS
    page.navigate("file://" + html_path)
    for p in page.problems():
        v.check(False, "%s: %s" % (name, p))
    seen = len(page.events)
    check_meta(v, name, page, meta)
    v.check(page.eval("document.getElementById('banner').hidden"),
            "%s: the rebuilt-paths banner shows for a tree of its own" % name)
    frames = check_chart(v, name, page, stats, tree)
    shape(v, name, frames)
    rows = check_table(v, name, page, stats, count)
    head = page.eval("[...document.querySelectorAll('#table th')].map(t => t.textContent)")
    v.check(head[1] == ("tot calls" if count else "tottime"), "%s: header %r" % (name, head))
    if screenshot:
        page.screenshot(screenshot)

    # Sorting: ncalls descending, then ascending.
    before = [r[5] for r in rows]
    for direction in ("descending", "ascending"):
        page.click(*center(page, "document.querySelector('#table th[data-key=nc]')"))
        got = page.eval(TABLE_JS)
        calls = [int(r[0].split("/")[0]) for r in got]
        ordered = calls == sorted(calls, reverse=direction == "descending")
        v.check(ordered, "%s: ncalls not %s after a click: %s" % (name, direction, calls))
        v.check(page.eval("document.querySelector('#table th[data-key=nc]')"
                          ".getAttribute('aria-sort')") == direction,
                "%s: the header does not say %s" % (name, direction))
    v.check([r[5] for r in got] != before, "%s: the order did not change" % name)
    page.click(*center(page, "document.querySelector('#table th[data-key=ct]')"))

    # The filter: typed text keeps the rows whose pstats name holds it, marks their frames.
    page.click(*center(page, "document.getElementById('filter')"))
    page.cmd("Input.insertText", text="REC")
    got = page.eval(TABLE_JS)
    want = sorted(s for s in (pstats.func_std_string(k) for k in stats) if "rec" in s.lower())
    v.check(sorted(r[5] for r in got) == want, "%s: filter 'REC' shows %s, not %s" % (
        name, [r[5] for r in got], want))
    hits = page.eval("[...document.querySelectorAll('#frames .fr.hit')].map(e => e.textContent)")
    v.check(hits and set(hits) == {"rec"}, "%s: frames marked by the filter: %s" % (name, hits))
    page.eval("(() => { const f = document.getElementById('filter'); f.value = ''; "
              "f.dispatchEvent(new Event('input')); })()")
    v.check(len(page.eval(TABLE_JS)) == len(rows), "%s: clearing the filter" % name)

    # Hover, then click, on c under a: its numbers in the tooltip; the chart zooms to it.
    ac = [fr for fr in frames if fr["path"][-3:] == ("main", "a", "c")]
    if v.check(ac, "%s: no frame main;a;c" % name):
        fr = ac[0]
        _, _, origin = read_frames(page)
        page.hover(origin[0] + fr["x"] + fr["w"] / 2, origin[1] + fr["y"] + fr["h"] / 2)
        tip = page.eval("(t => t.hidden ? null : t.textContent)(document.getElementById('tip'))")
        node = [n for n in tree.nodes if [k[2] for k in tree.path(n)] == ["main", "a", "c"]][0]
        v.check(tip and tip.startswith("c") and "paths.c:%d" % node.key[1] in tip and
                "calls on this path%d" % node.ncalls in tip,
                "%s: tooltip over a;c: %r" % (name, tip))
        v.check(click_frame(page, frames, fr["path"]), "%s: cannot click a;c" % name)
        zoomed, width, _ = read_frames(page)
        crumb = page.eval("(b => b && b.textContent)(document.querySelector("
                          "'#crumbs [aria-current]'))")
        v.check(crumb == "c", "%s: after the click the zoomed frame is %r" % (name, crumb))
        top = [z for z in zoomed if z["path"] == fr["path"]]
        v.check(top and abs(top[0]["w"] - width) <= 1, "%s: zoomed c is %s px of %s" % (
            name, top and top[0]["w"], width))
        v.check(not any(z["label"] == "b" for z in zoomed), "%s: b drawn inside a;c" % name)
        shape(v, name + " zoomed", zoomed)
        under = {z["path"][-1] for z in zoomed if z["path"][:-1] == fr["path"]}
        v.check(under == {"d", "burn"}, "%s: under zoomed c: %s" % (name, under))
        v.check(page.eval("document.querySelector('#detail .fname').textContent") == "c",
                "%s: the click did not select c" % name)
        c_key = [k for k in stats if k[2] == "c"][0]
        check_edges(v, name, page, stats, c_key, count)
        page.click(*center(page, "document.getElementById('reset')"))
        v.check(page.eval("document.querySelector('#crumbs [aria-current]').textContent") ==
                "all", "%s: reset did not zoom out" % name)

    # A row click selects its function.
    page.click(*center(page, "[...document.querySelectorAll('#table tbody tr')].find(tr => "
                       "tr.cells[5].textContent.endsWith('(rec)'))"))
    rec = [k for k in stats if k[2] == "rec"][0]
    v.check(page.eval("document.querySelector('#detail .fname').textContent") == "rec",
            "%s: a row click did not select rec" % name)
    check_edges(v, name, page, stats, rec, count)
    for p in page.problems(since=seen):
        v.check(False, "%s: after clicking around: %s" % (name, p))


def check_rebuilt(v, page, html_path, prof):
    """CPython's file: exact table, rebuilt paths, and a banner that says so."""
    stats, _ = fnptree.read(prof)
    page.navigate("file://" + html_path)
    for p in page.problems():
        v.check(False, "paths-py: %s" % p)
    check_meta(v, "paths-py", page, [])
    banner = page.eval("(b => b.hidden ? '' : b.textContent)(document.getElementById('banner'))")
    v.check("rebuilt from caller edges" in banner and "estimates" in banner,
            "paths-py: no banner about estimated paths: %r" % banner)
    frames, _, _ = read_frames(page)
    v.check(any(fr["path"][-4:] == ("main", "a", "c", "d") for fr in frames),
            "paths-py: no frame main;a;c;d")
    check_table(v, "paths-py", page, stats, False)


# Values a page must show as they are: markup, quotes, a newline, a long path, no value.
ODD_META = [("program", "/very/long/" + "directory/" * 30 + "app"), ("pid", "4242"),
            ("start", "2026-11-24T19:14:49Z"),
            ("note", '</script><img src=x onerror="window.pwned=2"> & \'q\'\nline 2'),
            ("caf\u00e9 <key>", ""), ("empty", "")]

ODD_NAMES = ['</script><img src=x onerror="window.pwned=1">', "a & b <c> \"q\" 'r'",
             "operator<<(std::ostream&)", "na\u00efve_\u03bb\u2028line", "dup", "dup"]


def check_odd(v, a, page):
    """Names with HTML's characters and a name shared by two files: shown as text, never
    markup, with fnprof's unambiguous labels; and a profile with no call paths."""
    keys = [("/src/odd/x.c", 3 + i, name) for i, name in enumerate(ODD_NAMES)]
    keys[-1] = ("/src/odd/two.c", 2, "dup")
    keys.append(("/src/odd/main.c", 1, "main"))
    m = len(keys) - 1
    # main -> each odd name; the first odd name -> the second -> the third.
    raw = [(m, None, 0, 1, 100)]
    raw += [(0, 0, 0, 2, 300), (1, 1, 0, 3, 200), (2, 2, 0, 4, 100)]
    raw += [(i, 0, 0, 1, 500) for i in range(3, len(ODD_NAMES))]
    for name, data in (("odd", with_meta(bigprof.encode(keys, raw, ["thread 1"]), ODD_META)),
                       ("empty", bigprof.encode(keys[:1], [], ["thread 1"]))):
        prof = os.path.join(a.workdir, name + ".prof")
        html = os.path.join(a.workdir, name + ".html")
        with open(prof, "wb") as f:
            f.write(data)
        viewlib.convert(a.fnprof, prof, "html", out=html)
        stats, tree, meta = fnptree.read_all(prof)
        v.check(meta == (ODD_META if name == "odd" else []), "%s: fnptree reads metadata %r"
                % (name, meta))
        check_data(v, name, embedded(open(html, encoding="utf-8").read()), stats, tree, False,
                   meta)
        page.navigate("file://" + html)
        for p in page.problems():
            v.check(False, "%s: %s" % (name, p))
        v.check(page.eval("window.pwned === undefined && !document.querySelector('#app img')"),
                "%s: a function's name or a metadata value became markup" % name)
        check_meta(v, name, page, meta)
        check_table(v, name, page, stats, False)
        if tree.nodes:
            check_chart(v, name, page, stats, tree)
            labels = set(page.eval("[...document.querySelectorAll('#frames .fr')].map(e => "
                                   "e.textContent)"))
            v.check({"dup [x.c:7]", "dup [two.c:2]"} <= labels, "%s: frames %s" % (name, labels))
        else:
            v.check("no call paths" in page.eval("document.getElementById('flame').textContent"),
                    "%s: no word that there are no call paths" % name)


def check_big(v, a, page):
    """A profile of Lua's size: load time, and only what can be seen is drawn."""
    prof = os.path.join(a.workdir, "big.prof")
    html = os.path.join(a.workdir, "big.html")
    with open(prof, "wb") as f:
        f.write(bigprof.build(250000, 3000, 1500, 1))
    start = time.monotonic()
    viewlib.convert(a.fnprof, prof, "html", out=html)
    convert_s = time.monotonic() - start
    d = embedded(open(html, encoding="utf-8").read())
    stats, tree = fnptree.read(prof)
    check_data(v, "big", d, stats, tree, False)
    took = page.navigate("file://" + html)
    r = page.eval("window.fnprofReport")
    for p in page.problems():
        v.check(False, "big: %s" % p)
    print("big profile: %d paths, %d functions, %.1f MB of HTML; convert %.0f ms; page "
          "script done at %.0f ms (itself %.0f ms), painted at %.0f ms after navigation start "
          "(%.0f ms by the test's clock); %d frames laid out, %d drawn"
          % (len(tree.nodes), len(stats), os.path.getsize(html) / 1e6, convert_s * 1e3,
             r["readyMs"], r["scriptMs"], r["paintedMs"], took * 1e3, r["frames"],
             page.eval("document.querySelectorAll('#frames .fr').length")))
    v.check(r["paintedMs"] <= a.max_load_ms, "big: painted at %.0f ms, over %.0f ms" % (
        r["paintedMs"], a.max_load_ms))
    drawn = page.eval("document.querySelectorAll('#frames .fr').length")
    v.check(0 < drawn < 6000, "big: %d frames in the document" % drawn)
    rows = page.eval(TABLE_JS)
    v.check(len(rows) == 200 and "Show all" in page.eval(
        "document.getElementById('more').textContent"), "big: %d rows, no 'Show all'" % len(rows))
    # The filter searches every function, not the rows shown.
    last = [k for k in stats if k[2] == "fn2999"]
    if last:
        page.click(*center(page, "document.getElementById('filter')"))
        page.cmd("Input.insertText", text="(fn2999)")
        got = page.eval(TABLE_JS)
        v.check([r[5] for r in got] == [pstats.func_std_string(last[0])],
                "big: the filter found %s" % [r[5] for r in got])
    # The 1500-deep chain: rows are drawn as they scroll into view.
    deep = page.eval("(() => { const c = document.getElementById('chart'); c.scrollTop = "
                     "c.scrollHeight; return c.scrollHeight; })()")
    time.sleep(0.2)
    rows_drawn = page.eval("[...document.querySelectorAll('#frames .fr')].map(e => "
                           "parseFloat(e.style.top))")
    v.check(deep > 1500 * 16 and rows_drawn and min(rows_drawn) > deep / 2,
            "big: scrolled to %d px, frames drawn from %s px" % (deep, rows_drawn and
                                                                  min(rows_drawn)))


def self_check(v, a, page):
    """The checks reject a page whose numbers, paths or metadata are wrong."""
    prof = os.path.join(a.workdir, "paths.prof")
    html = open(os.path.join(a.workdir, "paths.html"), encoding="utf-8").read()
    stats, tree, meta = fnptree.read_all(prof)
    d = embedded(html)
    names = d["funcs"]["name"]
    # 1: c's ncalls one more.
    bad = json.loads(json.dumps(d))
    bad["funcs"]["nc"][names.index("c")] += 1
    # 2: a and b swapped under main, so that d runs under b;c.
    bad2 = json.loads(json.dumps(d))
    t = bad2["tree"]
    a_i, b_i = names.index("a"), names.index("b")
    for i, f in enumerate(t["func"]):
        if f in (a_i, b_i) and t["up"][i] and t["func"][i - t["up"][i]] == names.index("main"):
            t["func"][i] = b_i if f == a_i else a_i
    # 3: a metadata value changed (or a pair added, for a file without).
    bad3 = json.loads(json.dumps(d))
    bad3["meta"] = [[k, x + "!"] for k, x in bad3["meta"]] or [["pid", "1"]]
    for label, data in (("ncalls", bad), ("path", bad2), ("metadata", bad3)):
        probe = viewlib.Verdict("self-check")
        check_data(probe, "bad " + label, data, stats, tree, False, meta)
        v.check(probe.problems, "the JSON check accepts a wrong %s" % label)
        path = os.path.join(a.workdir, "paths-bad-%s.html" % label)
        with open(path, "w", encoding="utf-8") as f:
            f.write(with_data(html, data))
        probe = viewlib.Verdict("self-check")
        page.navigate("file://" + path)
        frames, _, _ = read_frames(page)
        shape(probe, "bad " + label, frames)
        check_table(probe, "bad " + label, page, stats, False)
        check_meta(probe, "bad " + label, page, meta)
        v.check(probe.problems, "the page checks accept a wrong %s" % label)


def main():
    a = viewlib.args(extra_args)
    v = viewlib.Verdict("html")
    htmls = {}
    for base in ("paths", "paths-count", "paths-py"):
        prof = os.path.join(a.workdir, base + ".prof")
        out = os.path.join(a.workdir, base + ".html")
        r = viewlib.convert(a.fnprof, prof, "html", out=out)
        htmls[base] = out
        stats, tree, meta = fnptree.read_all(prof)
        d = embedded(open(out, encoding="utf-8").read())
        check_data(v, base, d, stats, tree, base == "paths-py", meta)
        if base == "paths-py":
            err = r.stderr.decode()
            v.check("rebuilt from caller edges" in err, "paths-py: no note on stderr: %r" % err)
    exe = cdp.Browser.find()
    if not exe:
        if v.problems:
            return v.done()
        print("SKIP: no chromium on PATH (Debian: apt-get install chromium); the JSON was "
              "checked, the page was not")
        return viewlib.SKIP
    with cdp.Browser(exe) as browser:
        page = browser.page()
        for base in ("paths", "paths-count"):
            check_page(v, base, page, htmls[base], os.path.join(a.workdir, base + ".prof"),
                       a.screenshot if base == "paths" else None)
        check_rebuilt(v, page, htmls["paths-py"], os.path.join(a.workdir, "paths-py.prof"))
        check_odd(v, a, page)
        self_check(v, a, page)
        check_big(v, a, page)
        page.close()
    return v.done()


if __name__ == "__main__":
    sys.exit(main())
# SPDX-License-Identifier: MIT
