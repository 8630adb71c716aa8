#!/usr/bin/env python3
"""fnprof convert --to pprof, read by go tool pprof and by a protobuf decoder of this file,
against the tree as tests/e2e/fnptree.py reads it.

What the writer promises (views/pprof.c): a gzipped profile.proto message with one sample
per calling context that has calls or own time; its locations the path, innermost first;
its values [calls, own wall ns] (count-only profiles: [calls]); a "thread" label on every
sample; string_table[0] == "" and every id nonzero. Checked here:
  - go tool pprof -raw: every tree path has one sample with its exact calls and own ns
    (within rounding), d only under a;c, every sample labelled with its thread;
  - go tool pprof -top: flat per function is its own time (tottime), and under
    -sample_index=calls its exact call count (the dict's ncalls);
  - the decoder below (written from proto/profile.proto): the same samples, and the rules
    pprof's format sets (string 0 empty, ids nonzero and unique, references resolve, one
    value per sample type, valid UTF-8 strings);
  - the count-only file and CPython's file (paths rebuilt from edges) load;
  - the checks reject a wrong output (self-check).
Skips (exit 77) when go or go tool pprof is missing. python3 standard library only.
"""
import gzip
import os
import re
import shutil
import subprocess
import sys

import viewlib

fnptree = viewlib.fnptree

# ---- a protobuf wire-format decoder (developers.google.com/protocol-buffers/docs/encoding)


def _varint(b, i):
    v = shift = 0
    while True:
        if i >= len(b) or shift > 63:
            raise ValueError("bad varint at %d" % i)
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return v, i


def _fields(b):
    """(field number, wire type, value) of a message: ints for varints, bytes otherwise."""
    i = 0
    while i < len(b):
        key, i = _varint(b, i)
        num, wt = key >> 3, key & 7
        if num == 0:
            raise ValueError("field number 0")
        if wt == 0:
            v, i = _varint(b, i)
        elif wt == 2:
            n, i = _varint(b, i)
            if i + n > len(b):
                raise ValueError("length past the end")
            v, i = b[i:i + n], i + n
        elif wt in (1, 5):
            n = 8 if wt == 1 else 4
            v, i = b[i:i + n], i + n
        else:
            raise ValueError("wire type %d" % wt)
        yield num, wt, v


def _ints(wt, v):
    """A repeated integer field's values, packed (wire type 2) or not."""
    if wt == 0:
        return [v]
    out, i = [], 0
    while i < len(v):
        x, i = _varint(v, i)
        out.append(x)
    return out


def _int64(v):
    return v - (1 << 64) if v >= 1 << 63 else v


def _message(b, ints=(), repeated=(), subs=None):
    """A message as a dict: repeated integer fields (ints) as lists, repeated messages (in
    subs: field -> decoder) as lists, other varints as int64, bytes as bytes."""
    subs = subs or {}
    m = {n: [] for n in set(ints) | set(repeated) | set(subs)}
    for num, wt, v in _fields(b):
        if num in ints:
            m[num] += [_int64(x) for x in _ints(wt, v)]
        elif num in subs:
            m[num].append(subs[num](v))
        elif num in repeated:
            m[num].append(v)
        else:
            m[num] = _int64(v) if wt == 0 else v
    return m


def decode(data):
    """profile.proto's Profile from gzipped bytes, as plain dicts of field numbers."""
    if data[:2] != b"\x1f\x8b":
        raise ValueError("not gzip")
    raw = gzip.decompress(data)
    value_type = lambda b: _message(b)  # type 1, unit 2
    label = lambda b: _message(b)  # key 1, str 2, num 3
    sample = lambda b: _message(b, ints=(1, 2), subs={3: label})
    mapping = lambda b: _message(b)
    line = lambda b: _message(b)  # function_id 1, line 2
    location = lambda b: _message(b, subs={4: line})
    function = lambda b: _message(b)  # id 1, name 2, system_name 3, filename 4, start 5
    return _message(raw, ints=(13,), repeated=(6,),
                    subs={1: value_type, 2: sample, 3: mapping, 4: location, 5: function,
                          11: value_type})


def validate(pb):
    """Problems with profile.proto's rules; returns (problems, readable profile)."""
    problems = []
    strings = []
    for s in pb[6]:
        try:
            strings.append(s.decode("utf-8"))
        except UnicodeDecodeError:
            problems.append("string %r is not UTF-8" % s)
            strings.append(s.decode("utf-8", "replace"))
    if not strings or strings[0] != "":
        problems.append("string_table[0] is %r, not ''" % (strings[:1],))

    def s(i):
        if not 0 <= i < len(strings):
            problems.append("string index %d out of range" % i)
            return "?"
        return strings[i]

    def ids(items, what):
        seen = {}
        for it in items:
            i = it.get(1, 0)
            if i <= 0:
                problems.append("%s with id %d" % (what, i))
            if i in seen:
                problems.append("%s id %d twice" % (what, i))
            seen[i] = it
        return seen

    maps = ids(pb[3], "mapping")
    funcs = ids(pb[5], "function")
    locs = ids(pb[4], "location")
    for loc in locs.values():
        lid = loc.get(1, 0)
        if loc.get(2, 0) and loc[2] not in maps:
            problems.append("location %d: no mapping %d" % (lid, loc[2]))
        if not loc[4]:
            problems.append("location %d has no line" % lid)
        for ln in loc[4]:
            if ln.get(1, 0) not in funcs:
                problems.append("location %d: no function %d" % (lid, ln.get(1, 0)))
    types = [(s(t.get(1, 0)), s(t.get(2, 0))) for t in pb[1]]
    samples = []
    for sm in pb[2]:
        if len(sm[2]) != len(types):
            problems.append("a sample with %d values for %d types" % (len(sm[2]), len(types)))
        path = []
        for lid in sm[1]:
            loc = locs.get(lid)
            if loc is None:
                problems.append("sample location %d missing" % lid)
                continue
            fn = funcs.get(loc[4][0].get(1, 0)) if loc[4] else None
            path.append(s(fn.get(2, 0)) if fn else "?")
        labels = {s(lb.get(1, 0)): s(lb.get(2, 0)) for lb in sm[3]}
        samples.append((labels.get("thread"), tuple(reversed(path)), tuple(sm[2])))
    period_type = pb[11][-1] if pb[11] else {}  # a message field: the last one counts
    readable = {
        "types": types,
        "default": s(pb.get(14, 0)),
        "period_type": (s(period_type.get(1, 0)), s(period_type.get(2, 0))),
        "period": pb.get(12, 0),
        "duration": pb.get(10, 0),
        "comments": [s(c) for c in pb[13]],
        "samples": samples,
        "functions": {s(f.get(2, 0)): (s(f.get(4, 0)), f.get(5, 0)) for f in funcs.values()},
    }
    return problems, readable


# ---- go tool pprof ------------------------------------------------------------------------


def go_env(workdir):
    home = os.path.join(os.path.abspath(workdir), "pprof-home")
    os.makedirs(home, exist_ok=True)
    env = dict(os.environ, HOME=home, GOCACHE=os.path.join(home, "cache"),
               GOPATH=os.path.join(home, "go"), GOTOOLCHAIN="local", GOPROXY="off",
               GOFLAGS="", PPROF_TMPDIR=home, PPROF_BINARY_PATH=home)
    return env


def pprof(env, *args, check=True):
    cmd = ["go", "tool", "pprof"] + list(args)
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    if check and r.returncode:
        raise SystemExit("FAIL: %s exited %d: %s" % (" ".join(cmd), r.returncode,
                                                    r.stderr.decode(errors="replace")))
    return r


SAMPLE = re.compile(r"^((?:\s+-?\d+)+): ((?:\d+ )*)$")
LABELS = re.compile(r"^\s{16}(\S.*)$")
LOCATION = re.compile(r"^\s*(\d+): 0x[0-9a-f]+ (?:M=\d+ )?(.*) (\S+):(-?\d+) s=(-?\d+)(?:\(.*\))?$")


def parse_raw(text):
    """go tool pprof -raw: (header lines, samples as (thread, names root first, values))."""
    lines = text.splitlines()
    head, raw_samples, locs = [], [], {}
    section = "head"
    for ln in lines:
        if ln == "Samples:":
            section = "samples"
            continue
        if ln == "Locations":
            section = "locations"
            continue
        if ln == "Mappings":
            section = "mappings"
            continue
        if section == "head":
            head.append(ln)
        elif section == "samples":
            m = SAMPLE.match(ln)
            if m:
                raw_samples.append([[int(x) for x in m.group(1).split()],
                                    [int(x) for x in m.group(2).split()], {}])
            elif LABELS.match(ln) and raw_samples:
                for key, value in re.findall(r"(\S+?):\[([^\]]*)\]", ln):
                    raw_samples[-1][2][key] = value
            else:
                head.append(ln)  # the sample types line
        elif section == "locations":
            m = LOCATION.match(ln)
            if not m:
                raise ValueError("location line %r" % ln)
            locs[int(m.group(1))] = m.group(2)
    samples = [(labels.get("thread"), tuple(locs.get(i, "?") for i in reversed(ids)),
                tuple(values)) for values, ids, labels in raw_samples]
    return head, samples


TOP = re.compile(r"^\s*(-?[\d.]+)(\S*)\s+[\d.]+%\s+[\d.]+%\s+(-?[\d.]+)\S*\s+[\d.]+%\s+(.*)$")


def parse_top(text):
    """go tool pprof -top: {function name: flat value (in the unit asked for)}."""
    flat = {}
    for ln in text.splitlines():
        m = TOP.match(ln)
        if m and not ln.lstrip().startswith("flat"):
            flat[m.group(4)] = float(m.group(1))
    return flat


# ---- what the tree says ---------------------------------------------------------------------


def expected(prof):
    """{(thread, labels root first): values} for every context with calls or own time."""
    stats, tree = fnptree.read(prof)
    names = viewlib.labels(stats)
    count_only = tree.kind == fnptree.KIND_CALLS
    want = {}
    for node in tree.nodes:
        own = viewlib.ns(tree, tree.self_value(node))
        if not node.ncalls and not own:
            continue
        key = (tree.threads[node.thread], tuple(names[k] for k in tree.path(node)))
        want[key] = (node.ncalls,) if count_only else (node.ncalls, own)
    return stats, tree, names, want


def compare(v, what, samples, want, count_only):
    got = {}
    for thread, path, values in samples:
        if (thread, path) in got:
            v.check(False, "%s: two samples for %s %s" % (what, thread, ";".join(path)))
        got[(thread, path)] = values
    missing = sorted(set(want) - set(got), key=repr)
    extra = sorted(set(got) - set(want), key=repr)
    v.check(not missing and not extra, "%s: paths differ: missing %s, extra %s"
            % (what, missing[:4], extra[:4]))
    for key, values in want.items():
        if key not in got:
            continue
        g = got[key]
        ok = len(g) == len(values) and g[0] == values[0]
        if ok and not count_only:
            ok = abs(g[1] - values[1]) <= 1  # one rounding of ticks to ns, fnprof's
        v.check(ok, "%s: %s %s: values %s, the tree says %s"
                % (what, key[0], ";".join(key[1]), g, values))
    # The tree's shape, whatever the reader: d only under a;c, never under b;c.
    paths = [";".join(p) for _, p, _ in samples]
    v.check(any(p.endswith("a;c;d;burn") for p in paths), what + ": no a;c;d;burn")
    v.check(not any("b;c;d" in p for p in paths), what + ": d under b;c")


def check_file(v, a, env, name):
    prof = os.path.join(a.workdir, name)
    out = os.path.join(a.workdir, name.replace(".prof", ".pb.gz"))
    viewlib.convert(a.fnprof, prof, "pprof", out=out)
    stats, tree, names, want = expected(prof)
    count_only = tree.kind == fnptree.KIND_CALLS
    with open(out, "rb") as f:
        data = f.read()

    # Our decoder: the format's rules, then the same samples.
    problems, pb = validate(decode(data))
    for p in problems:
        v.check(False, "%s: %s" % (name, p))
    types = [("calls", "count")] if count_only else [("calls", "count"),
                                                     ("wall", "nanoseconds")]
    v.check(pb["types"] == types, "%s: sample types %s" % (name, pb["types"]))
    v.check(pb["default"] == types[-1][0], "%s: default type %r" % (name, pb["default"]))
    v.check(pb["period_type"] == types[-1] and pb["period"] == 1,
            "%s: period %s x %d" % (name, pb["period_type"], pb["period"]))
    v.check(any("calling-context tree" in c for c in pb["comments"]),
            "%s: no comment on the tree: %s" % (name, pb["comments"]))
    for key in {n.key for n in tree.nodes}:
        fn = pb["functions"].get(names[key])
        v.check(fn == (key[0], key[1]), "%s: function %s: %s" % (name, names[key], fn))
    compare(v, name + " (decoder)", pb["samples"], want, count_only)
    v.check(all(t in tree.threads for t, _, _ in pb["samples"]), name + ": a sample's thread")
    v.check({t for t, _, _ in pb["samples"]} == set(tree.threads),
            "%s: threads %s" % (name, sorted({t for t, _, _ in pb["samples"]}, key=str)))

    # go tool pprof -raw: its reading of every sample.
    head, samples = parse_raw(pprof(env, "-raw", out).stdout.decode())
    compare(v, name + " (pprof -raw)", samples, want, count_only)
    v.check(all(t is not None for t, _, _ in samples), name + ": a sample without thread")
    v.check({t for t, _, _ in samples} == set(tree.threads), name + ": threads in pprof")
    header = " ".join("%s/%s%s" % (t, u, "[dflt]" if t == types[-1][0] else "")
                      for t, u in types)
    v.check(header in head, "%s: pprof's sample types %s, expected %r" % (name, head, header))

    # go tool pprof -top: flat per function. Own time per function (ns) and calls.
    # (pprof lists functions with no flat value too, for their cum: left out of both.)
    flat_ns = {}
    for node in tree.nodes:
        label = names[node.key]
        flat_ns[label] = flat_ns.get(label, 0) + viewlib.ns(tree, tree.self_value(node))
    in_tree = {n.key for n in tree.nodes}  # not the dict's synthetic '<process>'
    want_calls = {names[k]: st[1] for k, st in stats.items() if k in in_tree and st[1]}
    top = ["-top", "-nodefraction=0", "-edgefraction=0", "-nodecount=1000000"]
    got = parse_top(pprof(env, *top, "-sample_index=calls", out).stdout.decode())
    got = {k: x for k, x in got.items() if x}
    v.check(got == want_calls, "%s: pprof -top calls %s, the dict's ncalls %s"
            % (name, got, want_calls))
    if not count_only:
        got = parse_top(pprof(env, *top, "-sample_index=wall", "-unit=ns", out).stdout.decode())
        got = {k: x for k, x in got.items() if x}
        want_ns = {k: x for k, x in flat_ns.items() if x}
        v.check(set(got) == set(want_ns) and all(abs(got[k] - want_ns[k]) <= 1 for k in got),
                "%s: pprof -top flat ns %s, the tree's own time %s" % (name, got, want_ns))

    # The checks catch a wrong file: a value off, d moved under b, broken ids and strings.
    bad = list(samples)
    t, p, vals = bad[-1]
    bad[-1] = (t, p, (vals[0] + 1,) + vals[1:])
    probe = viewlib.Verdict("self-check")
    compare(probe, "mutated", bad, want, count_only)
    v.check(probe.problems, "the checker accepts a wrong call count")
    bad = [(t, tuple(";".join(p).replace("a;c;d", "b;c;d").split(";")), x) for t, p, x in samples]
    probe = viewlib.Verdict("self-check")
    compare(probe, "mutated", bad, want, count_only)
    v.check(probe.problems, "the checker accepts d under b")
    broken = decode(data)
    broken[6][0] = b"x"
    broken[4][0][1] = 0
    problems, _ = validate(broken)
    v.check(any("string_table[0]" in p for p in problems) and
            any("location with id 0" in p for p in problems),
            "the validator accepts string 0 'x' and a location id 0: %s" % problems)
    r = pprof(env, "-raw", write(a.workdir, "cut.pb.gz", data[:len(data) // 2]), check=False)
    v.check(r.returncode != 0, "go tool pprof reads a file cut in half")
    return data


def write(workdir, name, data):
    path = os.path.join(workdir, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


def main():
    a = viewlib.args()
    if not shutil.which("go"):
        print("SKIP: go is not installed (go tool pprof reads the output)")
        return viewlib.SKIP
    env = go_env(a.workdir)
    if subprocess.run(["go", "tool", "-n", "pprof"], stdout=subprocess.DEVNULL,
                      stderr=subprocess.DEVNULL, env=env).returncode:
        print("SKIP: go has no pprof tool")
        return viewlib.SKIP
    v = viewlib.Verdict("pprof")
    data = check_file(v, a, env, "paths.prof")
    check_file(v, a, env, "paths-count.prof")

    # CPython's file has no tree: paths rebuilt from edges, said on stderr and in a comment.
    out = os.path.join(a.workdir, "paths-py.pb.gz")
    r = viewlib.convert(a.fnprof, os.path.join(a.workdir, "paths-py.prof"), "pprof", out=out)
    err = r.stderr.decode()
    v.check(err.count("rebuilt from caller edges") == 1 and err.startswith("fnprof: convert: "),
            "no single note on the rebuilt paths: %r" % err)
    with open(out, "rb") as f:
        problems, pb = validate(decode(f.read()))
    for p in problems:
        v.check(False, "paths-py: %s" % p)
    v.check(any("rebuilt from caller edges" in c for c in pb["comments"]),
            "paths-py: no comment on rebuilt paths: %s" % pb["comments"])
    head, samples = parse_raw(pprof(env, "-raw", out).stdout.decode())
    v.check(any(";".join(p).endswith("main;a;c;d") for _, p, _ in samples),
            "paths-py: no main;a;c;d in %s" % [p for _, p, _ in samples])
    v.check(any("<module>" in p for _, p, _ in samples), "paths-py: '<module>' renamed by pprof")
    pprof(env, "-top", out)

    # Standard output carries the same bytes as -o.
    r = viewlib.convert(a.fnprof, os.path.join(a.workdir, "paths.prof"), "pprof")
    v.check(r.stdout == data, "standard output differs from -o")
    return v.done()


if __name__ == "__main__":
    sys.exit(main())
# SPDX-License-Identifier: MIT
