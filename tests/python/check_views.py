#!/usr/bin/env python3
"""Python and native frames in one stack, in every view: python3 -m fnprof profiles
tests/python/progs/mixed_main.py (Python -> the mixed extension, built with
-finstrument-functions -> a Python callback), and each view fnprof convert writes
(collapsed, speedscope, pprof, callgrind, the flame graph's SVG, HTML) must hold the stack

    main  ->  <built-in method mixed.native_loop>  ->  native_loop  ->  callback
    Python    the builtin cProfile also shows         native (DWARF)  Python again

in that order, read with the views tests' own readers (tests/views/). pstats reads the
file, and snakeviz's stats module (where importable: SNAKEVIZ_SRC names a source tree)
gives the same chain of callees. The `trace` case: PROF_TRACE's Chrome trace of the same
run nests the slices the same way.

usage: check_views.py views|trace BUILD_DIR
"""
import glob
import importlib.machinery
import json
import marshal
import os
import pstats
import shutil
import subprocess
import sys
import sysconfig
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PROGS = os.path.join(HERE, "progs")
sys.path.insert(0, os.path.join(HERE, "..", "views"))
import viewlib  # noqa: E402  pylint: disable=wrong-import-position
import check_callgrind  # noqa: E402  pylint: disable=wrong-import-position
import check_flamegraph  # noqa: E402  pylint: disable=wrong-import-position
import check_html  # noqa: E402  pylint: disable=wrong-import-position
import check_pprof  # noqa: E402  pylint: disable=wrong-import-position

BUILD = os.path.abspath(sys.argv[2])
FNPROF = os.path.join(BUILD, "bin", "fnprof")
ENV = dict(os.environ, PYTHONPATH=os.path.join(BUILD, "python"))
for v in list(ENV):
    if v.startswith("PROF_") or v == "LD_PRELOAD":
        del ENV[v]
CHAIN = ["main", "<built-in method mixed.native_loop>", "native_loop", "callback"]


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def profile(tmp, env=None):
    """Builds the extension with the flag alone, runs python3 -m fnprof -o out.prof."""
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    cc = [os.environ.get("CC", "cc"), "-O1", "-g", "-fPIC", "-shared",
          "-finstrument-functions", "-I" + sysconfig.get_paths()["include"],
          os.path.join(PROGS, "mixed.c"), "-o", os.path.join(tmp, "mixed" + suffix)]
    r = subprocess.run(cc, capture_output=True, text=True)
    if r.returncode:
        fail("cannot build the extension: %s\n%s" % (" ".join(cc), r.stderr))
    shutil.copy(os.path.join(PROGS, "mixed_main.py"), tmp)
    r = subprocess.run([sys.executable, "-m", "fnprof", "-o", "out.prof", "mixed_main.py"],
                       cwd=tmp, env=env or ENV, capture_output=True, text=True, timeout=300)
    if r.returncode:
        fail("python3 -m fnprof: exit %d\n%s" % (r.returncode, r.stderr))
    prof = os.path.join(tmp, "out.prof")
    with open(prof, "rb") as f:
        stats = marshal.load(f)
    keys = []
    for name in CHAIN:
        ks = [k for k in stats if k[2] == name]
        if len(ks) != 1:
            fail("%d functions named %r" % (len(ks), name))
        keys.append(ks[0])
    if keys[0][0] != "mixed_main.py" or keys[3][0] != "mixed_main.py" \
            or not keys[2][0].endswith("mixed.c"):
        fail("the chain's keys are not Python, builtin, native, Python: %s" % keys)
    return prof, stats, keys


def holds(stack, chain):
    """True when chain is a run of consecutive frames of stack (outermost first)."""
    n = len(chain)
    return any(list(stack[i:i + n]) == chain for i in range(len(stack) - n + 1))


def expect(view, stacks, chain):
    stacks = list(stacks)
    if not any(holds(s, chain) for s in stacks):
        near = [s for s in stacks if chain[-1] in s][:3]
        fail("%s: no stack holds %s; stacks with %s: %s" % (view, " -> ".join(chain),
                                                           chain[-1], near))
    print("%s: %s in one stack" % (view, " -> ".join(chain)))


def convert(prof, fmt, out):
    viewlib.convert(FNPROF, prof, fmt, out)
    with open(out, "rb") as f:
        return f.read()


def collapsed_stacks(data):
    for line in data.decode().splitlines():
        stack, _, _ = line.rpartition(" ")
        yield stack.split(";")


def speedscope_stacks(data):
    d = json.loads(data)
    names = [f["name"] for f in d["shared"]["frames"]]
    for p in d["profiles"]:
        for s in p["samples"]:
            yield [names[i] for i in s]


def pprof_stacks(data):
    problems, readable = check_pprof.validate(check_pprof.decode(data))
    if problems:
        fail("pprof: %s" % problems[:3])
    return [list(path) for _, path, _ in readable["samples"]]


def callgrind_stacks(data, keys):
    """callgrind has caller -> callee records, not stacks: the chain is a run of edges."""
    parsed = check_callgrind.parse(data.decode("latin-1"))
    if parsed.problems:
        fail("callgrind: %s" % parsed.problems[:3])
    edges = {(a[1], b[1]) for a, b in parsed.calls}
    names = [check_callgrind.label_candidates(k) for k in keys]
    chain = []
    for i in range(len(names) - 1):
        pair = [(a, b) for a in names[i] for b in names[i + 1] if (a, b) in edges]
        if not pair:
            fail("callgrind: no call from %s to %s" % (names[i], names[i + 1]))
        chain.append(pair[0])
    return [[chain[0][0]] + [b for _, b in chain]]


def flamegraph_stacks(data):
    _, frames, problems = check_flamegraph.parse(data.decode())
    if problems:
        fail("flamegraph: %s" % problems[:3])
    parents, _ = check_flamegraph.geometric_parents(frames)
    for f in frames:
        path, at = [], f
        while at is not None:
            path.append(at.lines[0].split(" (")[0] if at.lines else at.text)
            up = parents.get(id(at)) or []
            at = up[0] if up else None
        yield list(reversed(path))


def html_stacks(data):
    d = check_html.embedded(data.decode())
    names = {k: k[2] for k in check_html.data_keys(d)}
    for path in check_html.data_paths(d):
        yield [names[k] for k in path[1:]]


def case_views(tmp):
    prof, stats, keys = profile(tmp)
    labels = viewlib.labels(stats)
    chain = [labels[k] for k in keys]
    if chain != CHAIN:
        fail("labels %s" % chain)
    out = lambda ext: os.path.join(tmp, "out." + ext)  # noqa: E731
    expect("collapsed", collapsed_stacks(convert(prof, "collapsed", out("txt"))), chain)
    expect("speedscope", speedscope_stacks(convert(prof, "speedscope", out("json"))), chain)
    expect("pprof", pprof_stacks(convert(prof, "pprof", out("pb.gz"))), chain)
    cg = callgrind_stacks(convert(prof, "callgrind", out("callgrind")), keys)
    expect("callgrind", cg, cg[0])
    expect("flamegraph", flamegraph_stacks(convert(prof, "flamegraph", out("svg"))), chain)
    expect("html", html_stacks(convert(prof, "html", out("html"))), chain)

    # pstats: the same chain through the callers' edges, as snakeviz draws its icicle
    st = pstats.Stats(prof)
    st.calc_callees()
    for a, b in zip(keys, keys[1:]):
        if b not in st.all_callees.get(a, {}):
            fail("pstats: %s does not call %s" % (a, b))
    print("pstats: %s as callers' edges" % " -> ".join(chain))
    src = os.environ.get("SNAKEVIZ_SRC") or os.path.expanduser("~/.cache/snakeviz")
    sys.path.insert(0, src)
    try:
        from snakeviz import stats as svstats  # pylint: disable=import-outside-toplevel
    except ImportError as e:
        print("snakeviz: not checked (%s; SNAKEVIZ_SRC names a source tree)" % e)
        return
    js = svstats.json_stats(st)
    js = json.loads(js) if isinstance(js, str) else js
    name = lambda k: "{}:{}({})".format(*k)  # noqa: E731
    for a, b in zip(keys, keys[1:]):
        if name(b) not in js[name(a)]["children"]:
            fail("snakeviz: %s has no child %s" % (name(a), name(b)))
    print("snakeviz: json_stats nests %s" % " -> ".join(chain))


def case_trace_nesting(tmp):
    env = dict(ENV, PROF_TRACE=os.path.join(tmp, "trace.json"))
    _, _, keys = profile(tmp, env)
    with open(os.path.join(tmp, "trace.json")) as f:
        d = json.load(f)
    events = d["traceEvents"] if isinstance(d, dict) else d
    slices = [e for e in events if e.get("ph") == "X"]

    def of(key):
        return [e for e in slices if e["name"] == key[2]
                and e.get("args", {}).get("file") == key[0]]

    def inside(inner, outer):
        return inner["tid"] == outer["tid"] and outer["ts"] <= inner["ts"] \
            and inner["ts"] + inner["dur"] <= outer["ts"] + outer["dur"]

    found = 0
    for cb in of(keys[3]):
        path = [cb]
        for k in reversed(keys[:3]):
            up = [e for e in of(k) if inside(path[-1], e)]
            if len(up) != 1:
                break
            path.append(up[0])
        found += len(path) == 4
    if found != 15:  # 3 native_loop calls of 5 callbacks each (mixed_main.py)
        fail("trace: %d callback slices nest in native_loop, the builtin and main; want 15"
             % found)
    cats = {e["name"]: e.get("cat") for e in slices if e["name"] in CHAIN}
    print("trace: 15 callbacks nest in %s (categories %s)" % (" -> ".join(CHAIN[:3]), cats))



def case_example(tmp):
    """examples/python/, built and run as its README says: the icicle of the README's
    picture (Python -> builtin -> C -> C -> Python), no header inline in it."""
    src = os.path.join(HERE, "..", "..", "examples", "python")
    for f in ("shapes.c", "area.py"):
        shutil.copy(os.path.join(src, f), tmp)
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    cc = [os.environ.get("CC", "cc"), "-O2", "-g", "-fPIC", "-shared",
          "-finstrument-functions", "-finstrument-functions-exclude-file-list=include/python3",
          "-I" + sysconfig.get_paths()["include"], "shapes.c", "-o", "shapes" + suffix]
    r = subprocess.run(cc, cwd=tmp, capture_output=True, text=True)
    if r.returncode:
        fail("cannot build the example: %s\n%s" % (" ".join(cc), r.stderr))
    r = subprocess.run([sys.executable, "-m", "fnprof", "-o", "out.prof", "area.py"],
                       cwd=tmp, env=ENV, capture_output=True, text=True, timeout=300)
    if r.returncode or "16000 2.666667" not in r.stdout:
        fail("python3 -m fnprof area.py: exit %d\n%s%s" % (r.returncode, r.stdout, r.stderr))
    stacks = list(collapsed_stacks(convert(os.path.join(tmp, "out.prof"), "collapsed",
                                           os.path.join(tmp, "out.txt"))))
    for curve in ("wave", "bump", "parabola"):
        expect("example", stacks, ["table", "areas", "<listcomp> [area.py:21]",
                                   "<built-in method shapes.integrate>", "integrate", "sample",
                                   curve])
    if any("Py_DECREF" in s or "Py_INCREF" in s for st in stacks for s in st):
        fail("example: Python's header inlines are in the profile")


def main():
    tmp = tempfile.mkdtemp(prefix="fnprof-pyviews-")
    try:
        globals()["case_" + sys.argv[1]](tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
# SPDX-License-Identifier: MIT
