#!/usr/bin/env python3
"""Checks `fnprof convert --to dot` with graphviz's own reader.

    check_dot.py --fnprof PATH --workdir DIR (--profile NAME | --odd-names | --render)

--profile NAME converts WORKDIR/NAME (the views fixture's paths.prof, paths-count.prof or
paths-py.prof) with no thresholds, the default ones and --node-threshold 50; each output
must pass `dot -Tsvg` and `dot -Tplain`, and from -Tplain's nodes and edges:
  - every function is a node labelled name, file:line, total% (self%) and its calls, the
    calls exact and the shares those of the pstats dict (total: the larger of the summed
    tottime and the largest cumtime, as gprof2dot takes it);
  - every pstats edge is an arrow labelled with its share and its exact ncalls, and no
    other arrow is drawn (so d is called from c only, c from a and b);
  - colours are gprof2dot's "color" theme of each share;
  - a threshold leaves out exactly the functions under it (with their arrows) and the
    arrows under the edge threshold, and the graph's label says how many.
--odd-names does the same for names DOT must escape (quotes, backslashes, newlines,
'&lt;', templates, invalid UTF-8, 20000 bytes). --render checks the documented pipeline
`fnprof convert X --to dot | dot -Tsvg > g.svg`, `-o g.svg` (drawn by dot) and the error
when dot is not on PATH. The checker must reject mutated outputs.
Exit 77 (skip) without graphviz's dot. python3 standard library only.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "e2e"))
import fnptree  # noqa: E402
import viewlib  # noqa: E402

TIMES = "\u00d7"
MAX_NAME = 4096



def run(cmd, data=None, **kw):
    return subprocess.run(cmd, input=data, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)


# ---- graphviz's -Tplain output --------------------------------------------------------------

def plain_records(text):
    """Records (lists of fields) of -Tplain output: fields split by blanks, a record per
    line; a quoted field takes \\\\, \\" and \\n escapes and continues across
    backslash-newline."""
    records, fields, i, n = [], [], 0, len(text)
    while i < n:
        c = text[i]
        if c == "\n":
            if fields:
                records.append(fields)
            fields = []
            i += 1
        elif c in " \t\r":
            i += 1
        elif c == '"':
            i += 1
            buf = []
            while i < n and text[i] != '"':
                if text[i] == "\\" and i + 1 < n:
                    e = text[i + 1]
                    buf.append({"n": "\n", "\\": "\\", '"': '"', "\n": ""}.get(e, "\\" + e))
                    i += 2
                else:
                    buf.append(text[i])
                    i += 1
            fields.append("".join(buf))
            i += 1
        else:
            j = i
            while j < n and text[j] not in " \t\r\n":
                j += 1
            fields.append(text[i:j])
            i = j
    if fields:
        records.append(fields)
    return records


def plain_graph(dot_text):
    """(nodes {id: (label, fillcolor)}, edges [(tail, head, label, color)], problems)."""
    problems = []
    svg = run(["dot", "-Tsvg"], dot_text)
    if svg.returncode or b"<svg" not in svg.stdout:
        problems.append("dot -Tsvg: exit %d: %s" % (svg.returncode, svg.stderr.decode("utf-8", "replace")[:300]))
    plain = run(["dot", "-Tplain"], dot_text)
    if plain.returncode:
        problems.append("dot -Tplain: exit %d: %s" % (plain.returncode, plain.stderr.decode("utf-8", "replace")[:300]))
        return {}, [], problems
    if plain.stderr.strip():
        problems.append("dot -Tplain warns: %s" % plain.stderr.decode("utf-8", "replace")[:300])
    nodes, edges = {}, []
    for r in plain_records(plain.stdout.decode("utf-8")):
        if r[0] == "node":
            nodes[r[1]] = (r[6], r[10])
        elif r[0] == "edge":
            k = int(r[3])
            rest = r[4 + 2 * k:]
            edges.append((r[1], r[2], rest[0] if len(rest) == 5 else None, rest[-1]))
    return nodes, edges, problems


def graph_label(dot_text):
    m = re.search(rb'^\s*graph \[[^\n]*\blabel="((?:[^"\\]|\\.)*)"', dot_text, re.M)
    return m.group(1).decode("utf-8").replace("\\n", "\n") if m else None


# ---- what the graph must show -----------------------------------------------------------------

def shown(s):
    """A name or file as a label shows it: invalid UTF-8 and control characters replaced,
    long names cut, an empty one '???'."""
    b = s.encode("utf-8", "surrogatepass")
    cut = len(b) > MAX_NAME
    t = b[:MAX_NAME].decode("utf-8", "replace")
    t = "".join("\ufffd" if ord(c) < 0x20 or ord(c) == 0x7f else c for c in t)
    return (t + "\u2026" if cut else t) or "???"


def base_name(path):
    slash = path.rfind("/")
    return path[slash + 1:] if slash >= 0 and slash + 1 < len(path) else path


def place(key):
    """The file:line line of a key's label, or None (cProfile's built-ins: '~', 0)."""
    if key[0] == "~" and key[1] == 0:
        return None
    return "%s:%d" % (shown(base_name(key[0])) if key[0] else "???", key[1])


def theme_color(w):
    """gprof2dot's default theme: HSL from (2/3, 0.8, 0.25) to (0, 1, 0.5), linear in w."""
    w = min(max(w, 0.0), 1.0)
    h, s, l = 2 / 3 * (1 - w), 0.8 + 0.2 * w, 0.25 + 0.25 * w
    m2 = l * (s + 1) if l <= 0.5 else l + s - l * s
    m1 = 2 * l - m2

    def hue(h):
        h = h + 1 if h < 0 else h - 1 if h > 1 else h
        if h * 6 < 1:
            return m1 + (m2 - m1) * h * 6
        if h * 2 < 1:
            return m2
        if h * 3 < 2:
            return m1 + (m2 - m1) * (2 / 3 - h) * 6
        return m1
    return tuple(min(255, max(0, int(255 * v + 0.5))) for v in (hue(h + 1 / 3), hue(h), hue(h - 1 / 3)))


def color_close(text, w):
    m = re.match(r"^#([0-9a-fA-F]{2})([0-9a-fA-F]{2})([0-9a-fA-F]{2})$", text or "")
    return bool(m) and all(abs(int(x, 16) - y) <= 1 for x, y in zip(m.groups(), theme_color(w)))


def check_graph(dot_text, stats, node_thr, edge_thr):
    """Problems (strings) with one DOT output against the pstats dict."""
    nodes, edges, problems = plain_graph(dot_text)
    if problems and not nodes:
        return problems
    total = max(sum(v[2] for v in stats.values() if v[2] > 0),
                max([v[3] for v in stats.values()] + [0]))

    def share(x):
        return x / total if total > 0 and x > 0 else 0.0

    def near(x, thr):
        return abs(100 * x - thr) < 1e-6

    # Nodes to keys: by file:line, then by name.
    by_place = {}
    for key in stats:
        by_place.setdefault(place(key), []).append(key)
    node_key = {}
    for nid, (label, fill) in nodes.items():
        parts = label.split("\n")
        if len(parts) not in (3, 4):
            problems.append("node %s: label %r is not name, [file:line,] total%% (self%%), calls" % (nid, label[:80]))
            continue
        keys = [k for k in by_place.get(parts[1] if len(parts) == 4 else None, [])
                if shown(k[2]) == parts[0]]
        if len(keys) != 1:
            problems.append("node %s: label %r names %d functions" % (nid, label[:80], len(keys)))
            continue
        key = node_key[nid] = keys[0]
        v = stats[key]
        m = re.match(r"^(\d+\.\d\d)% \((\d+\.\d\d)%\)$", parts[-2])
        if not m or abs(float(m.group(1)) - 100 * share(v[3])) > 0.006 or \
                abs(float(m.group(2)) - 100 * share(v[2])) > 0.006:
            problems.append("node %s: %r, want %.2f%% (%.2f%%)" % (key[2][:40], parts[-2], 100 * share(v[3]), 100 * share(v[2])))
        if parts[-1] != "%d%s" % (v[1], TIMES):
            problems.append("node %s: calls %r, pstats ncalls %d" % (key[2][:40], parts[-1], v[1]))
        if not color_close(fill, share(v[3])):
            problems.append("node %s: colour %s, theme %s" % (key[2][:40], fill, "#%02x%02x%02x" % theme_color(share(v[3]))))
    kept = {k for k, v in stats.items() if 100 * share(v[3]) >= node_thr}
    drawn = set(node_key.values())
    for key in stats:
        if near(share(stats[key][3]), node_thr):
            continue
        if key in kept and key not in drawn:
            problems.append("function %r (%.4f%%) not drawn" % (key[2][:40], 100 * share(stats[key][3])))
        if key not in kept and key in drawn:
            problems.append("function %r (%.4f%%) drawn under the %g%% threshold" % (key[2][:40], 100 * share(stats[key][3]), node_thr))

    want = {}
    for callee, v in stats.items():
        for caller, ev in v[4].items():
            want[(caller, callee)] = ev
    got = {}
    for tail, head, label, color in edges:
        a, b = node_key.get(tail), node_key.get(head)
        if a is None or b is None:
            problems.append("edge %s -> %s: an unknown node" % (tail, head))
            continue
        name = "%s -> %s" % (a[2][:40], b[2][:40])
        if (a, b) in got:
            problems.append("edge %s drawn twice" % name)
        got[(a, b)] = label
        ev = want.get((a, b))
        if ev is None:
            problems.append("edge %s: drawn, not in the dict" % name)
            continue
        m = re.match(r"^(\d+\.\d\d)%\n(\d+)" + TIMES + "$", label or "")
        if not m:
            problems.append("edge %s: label %r is not 'share%%\\ncalls%s'" % (name, label, TIMES))
            continue
        if int(m.group(2)) != ev[0]:
            problems.append("edge %s: %s calls, pstats ncalls %d" % (name, m.group(2), ev[0]))
        if abs(float(m.group(1)) - 100 * share(ev[3])) > 0.006:
            problems.append("edge %s: %s%%, want %.2f%%" % (name, m.group(1), 100 * share(ev[3])))
        if not color_close(color, share(ev[3])):
            problems.append("edge %s: colour %s" % (name, color))
    for (a, b), ev in want.items():
        if a in drawn and b in drawn and (a, b) not in got and not near(share(ev[3]), edge_thr) \
                and 100 * share(ev[3]) >= edge_thr:
            problems.append("edge %s -> %s (%d calls, %.4f%%) not drawn" % (a[2][:40], b[2][:40], ev[0], 100 * share(ev[3])))
        if (a, b) in got and 100 * share(ev[3]) < edge_thr and not near(share(ev[3]), edge_thr):
            problems.append("edge %s -> %s drawn under the %g%% threshold" % (a[2][:40], b[2][:40], edge_thr))

    label = graph_label(dot_text)
    pruned = len(stats) - len(kept)
    pruned_edges = sum(1 for (a, b), ev in want.items()
                       if a in kept and b in kept and 100 * share(ev[3]) < edge_thr)
    if label is None:
        problems.append("no graph label")
    else:
        says = []
        if pruned:
            says.append("%d of %d functions under %g%% of the total" % (pruned, len(stats), node_thr))
        if pruned_edges:
            says.append("%d edges under %g%%" % (pruned_edges, edge_thr))
        if says and "not shown: " + ", ".join(says) not in label:
            problems.append("graph label %r does not say %r" % (label, "not shown: " + ", ".join(says)))
        if not says and "not shown" in label:
            problems.append("graph label %r claims pruning where nothing was pruned" % label)
    return problems


def convert(fnprof, prof, extra=()):
    # the keys' own names, which this reader checks; --short-names: check_short_names.py
    out = run([fnprof, "convert", prof, "--to", "dot", "--no-short-names"] + list(extra))
    if out.returncode or out.stderr:
        raise SystemExit("FAIL: fnprof convert %s: exit %d: %r" % (" ".join(extra), out.returncode, out.stderr))
    return out.stdout


def mutations(dot_text):
    """Wrong outputs the checker must reject: (what, text)."""
    nodes, _, _ = plain_graph(dot_text)
    lines = dot_text.split(b"\n")
    out = []

    def edit(what, fn):
        new = lines[:]
        fn(new)
        out.append((what, b"\n".join(new)))

    i = next(i for i, l in enumerate(lines) if b" -> " in l)
    edit("an edge's call count off by one", lambda new: new.__setitem__(i, re.sub(
        rb"\\n(\d+)\xc3\x97", lambda m: b"\\n%d\xc3\x97" % (int(m.group(1)) + 1), lines[i], 1)))
    ids = {label.split("\n")[0]: nid.encode() for nid, (label, _) in nodes.items()}
    # paths.c: d under b; other profiles: a first node calling itself (none recurses)
    a, b = (ids["b"], ids["d"]) if "b" in ids and "d" in ids else [min(ids.values())] * 2
    extra = b'\t%s -> %s [label="1.00%%\\n1\xc3\x97"];' % (a, b)
    edit("an edge the dict lacks (d under b)", lambda new: new.insert(len(new) - 2, extra))
    j = next(i for i, l in enumerate(lines) if re.match(rb"^\tf\d+ \[label=", l))
    edit("a node left out", lambda new: new.__delitem__(j))
    k = next((i for i, l in enumerate(lines) if re.match(rb'^\tf\d+ \[label="[^"]*\\"', l)), None)
    if k is not None:
        edit("quotes unescaped", lambda new: new.__setitem__(k, lines[k].replace(b'\\"', b'"')))
    return out


def check_profile(args, prof, name):
    stats, tree = fnptree.read(prof)
    problems = []
    runs = [(0.0, 0.0, ["--node-threshold", "0", "--edge-threshold", "0"]), (0.5, 0.1, []),
            (50.0, 0.1, ["--node-threshold", "50"])]
    outputs = {}
    for node_thr, edge_thr, extra in runs:
        text = convert(args.fnprof, prof, extra)
        outputs[node_thr] = text
        for p in check_graph(text, stats, node_thr, edge_thr):
            problems.append("--node-threshold %g --edge-threshold %g: %s" % (node_thr, edge_thr, p))
    full = outputs[0.0]
    nodes, edges, _ = plain_graph(full)
    if len(nodes) != len(stats):
        problems.append("%d nodes without thresholds, %d functions" % (len(nodes), len(stats)))
    if args.profile:
        callers = {}
        names = {nid: label.split("\n")[0] for nid, (label, _) in nodes.items()}
        for tail, head, _, _ in edges:
            callers.setdefault(names[head], set()).add(names[tail])
        if callers.get("d") != {"c"} or callers.get("c") != {"a", "b"}:
            problems.append("callers drawn: d %r, c %r (want c; a and b)" % (callers.get("d"), callers.get("c")))
        total = max(sum(v[2] for v in stats.values()), max(v[3] for v in stats.values()))
        small = [k[2] for k, v in stats.items() if v[3] < 0.5 * total]
        drawn50 = {label.split("\n")[0] for label, _ in plain_graph(outputs[50.0])[0].values()}
        if not small or set(small) & drawn50:
            problems.append("--node-threshold 50 drew %r" % sorted(drawn50))
    total_label = graph_label(full) or ""
    if tree is not None and tree.kind == fnptree.KIND_CALLS and "calls" not in total_label:
        problems.append("count-only graph label %r does not say calls" % total_label)
    for p in problems:
        print("FAIL: " + p)
    if problems:
        sys.stdout.write("--- DOT ---\n" + full.decode("utf-8", "replace")[:4000])
        return 1
    for what, bad in mutations(full):
        found = check_graph(bad, stats, 0.0, 0.0)
        if not found:
            print("FAIL: self-check: the checker accepts an output with %s" % what)
            return 1
        print("self-check: %s rejected (%s)" % (what, found[0][:100]))
    print("OK: %s: %d nodes, %d edges; thresholds 0.5 and 50 prune as they should" % (name, len(nodes), len(edges)))
    return 0


def check_render(args):
    prof = os.path.join(args.workdir, "paths.prof")
    work = os.path.join(args.workdir, "dot-render")
    os.makedirs(work, exist_ok=True)
    problems = []
    svg = os.path.join(work, "pipe.svg")
    pipe = subprocess.run("'%s' convert '%s' --to dot | dot -Tsvg > '%s'" % (args.fnprof, prof, svg),
                          shell=True, stderr=subprocess.PIPE)
    with open(svg, "rb") as f:
        data = f.read()
    if pipe.returncode or b"<svg" not in data or b">main<" not in data:
        problems.append("pipeline: exit %d, %d bytes, stderr %r" % (pipe.returncode, len(data), pipe.stderr))
    out = os.path.join(work, "g.svg")
    if os.path.exists(out):
        os.unlink(out)
    r = run([args.fnprof, "convert", prof, "--to", "dot", "-o", out])
    data = open(out, "rb").read() if os.path.exists(out) else b""
    if r.returncode or b"<svg" not in data or b">main<" not in data or b"digraph" in data:
        problems.append("-o g.svg: exit %d, stderr %r, not an SVG of the graph: %r" % (r.returncode, r.stderr, data[:200]))
    out_dot = os.path.join(work, "g.dot")
    r = run([args.fnprof, "convert", prof, "--to", "dot", "-o", out_dot])
    data = open(out_dot, "rb").read() if os.path.exists(out_dot) else b""
    if r.returncode or not data.startswith(b"digraph"):
        problems.append("-o g.dot: exit %d, not DOT: %r" % (r.returncode, data[:100]))
    # Without dot on PATH: a one-line error naming dot, and no file.
    empty = os.path.join(work, "bin-without-dot")
    os.makedirs(empty, exist_ok=True)
    out = os.path.join(work, "nodot.svg")
    if os.path.exists(out):
        os.unlink(out)
    r = run([os.path.abspath(args.fnprof), "convert", prof, "--to", "dot", "-o", out],
            env={"PATH": empty, "LC_ALL": "C"})
    err = r.stderr.decode("utf-8", "replace").splitlines()
    if r.returncode != 1 or len(err) != 1 or not err[0].startswith("fnprof: convert:") \
            or "dot" not in err[0][len("fnprof: convert:"):] or os.path.exists(out):
        problems.append("without dot on PATH: exit %d, stderr %r, file %s" % (
            r.returncode, err, "written" if os.path.exists(out) else "absent"))
    for p in problems:
        print("FAIL: " + p)
    if problems:
        return 1
    print("OK: pipeline, -o g.svg, -o g.dot, and the error without dot")
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fnprof", required=True)
    ap.add_argument("--workdir", required=True)
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--profile")
    g.add_argument("--odd-names", action="store_true")
    g.add_argument("--render", action="store_true")
    args = ap.parse_args()
    if not shutil.which("dot"):
        print("SKIP: graphviz's dot is not installed")
        return 77
    if args.render:
        return check_render(args)
    if args.odd_names:
        work = os.path.join(args.workdir, "dot-odd")
        os.makedirs(work, exist_ok=True)
        prof = os.path.join(work, "odd.prof")
        viewlib.odd_profile(prof)
        return check_profile(args, prof, "odd.prof")
    return check_profile(args, os.path.join(args.workdir, args.profile), args.profile)


if __name__ == "__main__":
    sys.exit(main())
# SPDX-License-Identifier: MIT
