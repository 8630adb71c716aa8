#!/usr/bin/env python3
"""Checks `fnprof convert --to callgrind` with callgrind_annotate and a reader of the spec.

    check_callgrind.py --fnprof PATH --workdir DIR (--profile NAME | --odd-names)

--profile NAME converts WORKDIR/NAME (the views fixture's paths.prof, paths-count.prof or
paths-py.prof); --odd-names writes a pstats file of hostile names (quotes, newlines, an
empty name, a name that looks compressed, one name in two files, invalid UTF-8, 20000
bytes) and converts that. Then:
  - the file is read with a parser written from the callgrind format specification
    (valgrind.org/docs/manual/cl-format.html): header, name compression, every calls=
    line followed by its cost line; its calls= counts must equal the pstats edges' ncalls
    exactly, edge by edge, with no edge missing or added (so d is called from c only);
  - callgrind_annotate --inclusive=no must show each function's tottime (ns, or calls for
    a count-only profile) within 1 per function, and --inclusive=yes its cumtime for
    functions on no cycle whose calls all come through edges;
  - where pyprof2calltree is installed, its conversion of the same file (read by the same
    parser) must hold the same self costs, calls= counts and inclusive costs (within 1 ns:
    it truncates);
  - the checker must reject mutated outputs (a call count, a self cost, an inclusive
    cost, a cost line removed, a callee swapped).
Exit 77 (skip) without callgrind_annotate. python3 standard library only.
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

NAME_SPECS = {"ob": "ob", "cob": "ob", "fl": "fl", "fi": "fl", "fe": "fl", "cfl": "fl",
              "cfi": "fl", "fn": "fn", "cfn": "fn"}
NUM = r"(?:0x[0-9a-fA-F]+|\d+)"


def enc(s):
    """A dict string as the bytes fnprof writes (surrogates from invalid UTF-8 kept), read
    back as Latin-1 so that every byte is one character."""
    return s.encode("utf-8", "surrogatepass").decode("latin-1")



# ---- a reader of the format, from the specification -------------------------------------

class Parsed:
    def __init__(self):
        self.header = {}
        self.events = []
        self.blocks = {}  # (file, fn) -> [line, self cost]
        self.calls = {}   # ((file, fn), (cfile, cfn)) -> [calls, inclusive cost, callee line]
        self.problems = []


def parse(text):
    """Reads a callgrind file (str of Latin-1 characters). Positions: line only."""
    r = Parsed()
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if not lines or lines[0] != "# callgrind format":
        r.problems.append("line 1: not '# callgrind format'")
    names = {"ob": {}, "fl": {}, "fn": {}}
    i = 0
    while i < len(lines):  # header: "key: value" lines up to the first body line
        line = lines[i]
        if line.startswith("#") or not line.strip():
            i += 1
            continue
        m = re.match(r"^([A-Za-z][A-Za-z0-9]*):\s*(.*)$", line)
        if not m:
            break
        r.header.setdefault(m.group(1), []).append(m.group(2))
        i += 1
    if r.header.get("version") != ["1"]:
        r.problems.append("header: version %r, want ['1']" % r.header.get("version"))
    if r.header.get("positions", ["line"]) != ["line"]:
        r.problems.append("header: positions %r" % r.header.get("positions"))
    if "events" not in r.header:
        r.problems.append("header: no events line")
        return r
    r.events = r.header["events"][0].split()
    cur_fl = cur_fn = cur_cfl = cur_cfn = None
    pending = None  # (calls, target line) awaiting its cost line
    cost_re = re.compile(r"^(%s)((?:[ \t]+%s)*)[ \t]*$" % (NUM, NUM))
    for n in range(i, len(lines)):
        line, where = lines[n], "line %d" % (n + 1)
        if pending is not None:
            m = cost_re.match(line)
            if not m:
                r.problems.append("%s: calls= not followed by a cost line: %r" % (where, line[:80]))
                pending = None
                continue
            costs = [int(x, 0) for x in m.group(2).split()]
            if len(costs) > len(r.events):
                r.problems.append("%s: %d costs for %d events" % (where, len(costs), len(r.events)))
            key = ((cur_fl, cur_fn), (cur_cfl if cur_cfl is not None else cur_fl, cur_cfn))
            c = r.calls.setdefault(key, [0, 0, pending[1]])
            c[0] += pending[0]
            c[1] += costs[0] if costs else 0
            pending = None
            cur_cfl = cur_cfn = None  # a cfn= holds for one call
            continue
        if not line.strip() or line.startswith("#"):
            continue
        m = re.match(r"^(ob|fl|fi|fe|fn|cob|cfl|cfi|cfn)=(.*)$", line)
        if m:
            spec, value = m.group(1), m.group(2)
            ctx = names[NAME_SPECS[spec]]
            c = re.match(r"^\((\d+)\)(?:[ \t]+(.*))?$", value)
            if c:
                if c.group(2) is None or c.group(2) == "":
                    if c.group(1) not in ctx:
                        r.problems.append("%s: %s=(%s) used before it is defined" % (where, spec, c.group(1)))
                        continue
                    value = ctx[c.group(1)]
                else:
                    if c.group(1) in ctx and ctx[c.group(1)] != c.group(2):
                        r.problems.append("%s: (%s) defined twice" % (where, c.group(1)))
                    ctx[c.group(1)] = value = c.group(2)
            elif re.match(r"^\(\d", value):
                r.problems.append("%s: %r reads as a compressed name" % (where, value[:40]))
            if spec in ("fl", "fi", "fe"):
                cur_fl = value
            elif spec == "fn":
                if cur_fl is None:
                    r.problems.append("%s: fn= before any fl=" % where)
                cur_fn = value
                cur_cfl = cur_cfn = None
            elif spec in ("cfl", "cfi"):
                cur_cfl = value
            elif spec == "cfn":
                if cur_fn is None:
                    r.problems.append("%s: cfn= outside a function" % where)
                cur_cfn = value
            continue
        m = re.match(r"^calls=[ \t]*(%s)[ \t]+(%s)[ \t]*$" % (NUM, NUM), line)
        if m:
            if cur_cfn is None:
                r.problems.append("%s: calls= without a cfn=" % where)
            pending = (int(m.group(1), 0), int(m.group(2), 0))
            continue
        m = re.match(r"^(summary|totals):[ \t]*(.*)$", line)
        if m:
            r.header.setdefault(m.group(1), []).append(m.group(2))
            continue
        m = cost_re.match(line)
        if m:
            if cur_fn is None:
                r.problems.append("%s: cost line outside a function" % where)
                continue
            costs = [int(x, 0) for x in m.group(2).split()]
            b = r.blocks.setdefault((cur_fl, cur_fn), [int(m.group(1), 0), 0])
            b[1] += costs[0] if costs else 0
            continue
        r.problems.append("%s: not a callgrind line: %r" % (where, line[:80]))
    if pending is not None:
        r.problems.append("end: calls= not followed by a cost line")
    return r


# ---- callgrind_annotate ------------------------------------------------------------------

def annotate(path, inclusive):
    """{'file:function': cost} and the program total, from callgrind_annotate's listing."""
    out = subprocess.run(["callgrind_annotate", "--inclusive=" + inclusive, "--threshold=100",
                          "--auto=no", os.path.abspath(path)], cwd="/", stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    text = out.stdout.decode("latin-1")
    if out.returncode:
        raise RuntimeError("callgrind_annotate --inclusive=%s: exit %d: %s"
                           % (inclusive, out.returncode, out.stderr.decode("latin-1")[-500:]))
    funcs, total, state = {}, None, 0
    row = re.compile(r"^\s*([\d,]+|\.)(?:\s+\(\s*[\d.]+%\))?\s+(.*)$")  # '.': no cost
    for line in text.split("\n"):
        if state == 0 and "PROGRAM TOTALS" in line:
            total = int(row.match(line).group(1).replace(",", ""))
        elif state == 0 and line.rstrip().endswith("file:function"):
            state = 1
        elif state == 1 and line.startswith("-----"):
            state = 2
        elif state == 2:
            if not line.strip():
                break
            m = row.match(line)
            if not m:
                raise RuntimeError("callgrind_annotate: unexpected row %r" % line[:80])
            cost = 0 if m.group(1) == "." else int(m.group(1).replace(",", ""))
            funcs[m.group(2)] = funcs.get(m.group(2), 0) + cost
    if total is None or state != 2:
        raise RuntimeError("callgrind_annotate: no function listing in:\n" + text[:2000])
    return funcs, total


# ---- the comparison ------------------------------------------------------------------------

def label_candidates(key):
    """What fnprof may call a function: its name, or with [file:line] where it is shared;
    newlines replaced, an empty name or file written as valgrind's '???'."""
    name = enc(key[2]).replace("\n", "?").replace("\r", "?") or "???"
    base = enc(key[0]).rsplit("/", 1)[-1] or enc(key[0])
    return {name, "%s [%s:%d]" % (name, base, key[1])}


def on_cycles(stats):
    callees = {}
    for callee, v in stats.items():
        for caller in v[4]:
            callees.setdefault(caller, set()).add(callee)
    cyclic = set()
    for start in stats:
        seen, todo = set(), list(callees.get(start, ()))
        while todo:
            f = todo.pop()
            if f == start:
                cyclic.add(start)
                break
            if f not in seen:
                seen.add(f)
                todo.extend(callees.get(f, ()))
    return cyclic


def compare(path, stats, scale, event, nthreads, verbose=False, keyed=None):
    """Problems (strings) with the callgrind file at path against the pstats dict. keyed
    (a dict) gets the file's self costs and edges by dict key."""
    with open(path, "rb") as f:
        text = f.read().decode("latin-1")
    r = parse(text)
    problems = list(r.problems)
    if r.events != [event]:
        problems.append("events %r, want [%r]" % (r.events, event))
    if nthreads > 1 and not any(("Threads: %d" % nthreads) in d for d in r.header.get("desc", [])):
        problems.append("no desc line saying the %d threads are merged" % nthreads)

    # Function blocks to dict keys: same file, same line, one of the names fnprof gives.
    by_place = {}
    for key in stats:
        by_place.setdefault((enc(key[0]) or "???", key[1]), []).append(key)
    block_key = {}
    for (fl, fn), (line, _) in r.blocks.items():
        keys = [k for k in by_place.get((fl, line), []) if fn in label_candidates(k)]
        if len(keys) != 1:
            problems.append("function %r in %r at line %d: %d dict keys match" % (fn[:60], fl, line, len(keys)))
        else:
            block_key[(fl, fn)] = keys[0]
    if len(set(block_key.values())) != len(block_key):
        problems.append("two functions of the file name one dict key")
    for key in stats:
        if key not in block_key.values():
            problems.append("%r: in the dict, not in the file" % (key,))

    # Exact call counts per edge, the inclusive cost of each its cumtime.
    want_edges = {}
    for callee, v in stats.items():
        for caller, ev in v[4].items():
            if ev[0]:
                want_edges[(caller, callee)] = ev
    got_edges = {}
    for ((fl, fn), (cfl, cfn)), (ncalls, incl, cline) in r.calls.items():
        caller, callee = block_key.get((fl, fn)), block_key.get((cfl, cfn))
        if caller is None or callee is None:
            problems.append("call %r -> %r: unknown function" % (fn[:60], cfn[:60]))
            continue
        if cline != callee[1]:
            problems.append("call %s -> %s: target line %d, want %d" % (caller[2][:40], callee[2][:40], cline, callee[1]))
        got_edges[(caller, callee)] = (ncalls, incl)
    for edge, ev in sorted(want_edges.items()):
        got = got_edges.get(edge)
        name = "%s -> %s" % (edge[0][2][:40], edge[1][2][:40])
        if got is None:
            problems.append("edge %s: in the dict (%d calls), not in the file" % (name, ev[0]))
            continue
        if got[0] != ev[0]:
            problems.append("edge %s: calls=%d, pstats ncalls %d" % (name, got[0], ev[0]))
        if abs(got[1] - ev[3] * scale) > 1:
            problems.append("edge %s: inclusive %d, pstats cumtime %.1f" % (name, got[1], ev[3] * scale))
    for edge in got_edges:
        if edge not in want_edges:
            problems.append("edge %s -> %s: in the file, not in the dict" % (edge[0][2][:40], edge[1][2][:40]))

    if keyed is not None:
        keyed["self"] = {block_key[b]: c for b, (_, c) in r.blocks.items() if b in block_key}
        keyed["edges"] = got_edges

    # callgrind_annotate's reading: self = tottime, inclusive = cumtime off cycles.
    ann = {enc_fl + ":" + fn: key for (enc_fl, fn), key in block_key.items()}
    selfs, total = annotate(path, "no")
    incls, _ = annotate(path, "yes")
    want_total = sum(v[2] for v in stats.values()) * scale
    if abs(total - want_total) > len(stats):
        problems.append("callgrind_annotate PROGRAM TOTALS %d, pstats tottime sum %.1f" % (total, want_total))
    cyclic = on_cycles(stats)
    checked = 0
    for name, key in ann.items():
        v = stats[key]
        if name not in selfs or name not in incls:
            problems.append("callgrind_annotate does not list %r" % name[:80])
            continue
        if abs(selfs[name] - v[2] * scale) > 1:
            problems.append("%s: self %d, tottime %.1f" % (name[:80], selfs[name], v[2] * scale))
        through_edges = sum(ev[0] for ev in v[4].values())
        if key in cyclic or (v[4] and through_edges != v[1]):
            continue
        # Summed from rounded edge costs: one unit per edge.
        slack = 1 + len(v[4]) + sum(1 for e in want_edges if e[0] == key) + 1e-9 * v[3] * scale
        if abs(incls[name] - v[3] * scale) > slack:
            problems.append("%s: inclusive %d, cumtime %.1f" % (name[:80], incls[name], v[3] * scale))
        checked += 1
    if not checked:
        problems.append("no function's inclusive cost was checked")
    if verbose:
        print("%s: inclusive cost checked for %d of %d functions (the others are on a cycle or "
              "called from outside any edge)" % (os.path.basename(path), checked, len(ann)))
    return problems


def compare_pyprof2calltree(prof, work, keyed, scale):
    """Problems where pyprof2calltree (the converter the format's users know for pstats
    files) writes other numbers: its costs are nanoseconds, truncated."""
    out = os.path.join(work, "pyprof2calltree.out")
    run = subprocess.run(["pyprof2calltree", "-i", prof, "-o", out], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    if run.returncode:
        return ["pyprof2calltree: exit %d: %r" % (run.returncode, run.stderr[-300:])]
    with open(out, "rb") as f:
        theirs = parse(f.read().decode("latin-1"))
    # It writes neither the "# callgrind format" line nor "version:" (both optional).
    problems = ["pyprof2calltree's file, by this parser: " + p for p in theirs.problems
                if not p.startswith(("line 1:", "header: version"))]

    def key(fl, fn, line):
        return (fl.encode("latin-1").decode("utf-8", "surrogatepass"), line,
                fn.encode("latin-1").decode("utf-8", "surrogatepass"))
    lines = {(fl, fn): line for (fl, fn), (line, _) in theirs.blocks.items()}
    for (fl, fn), (line, cost) in theirs.blocks.items():
        k = key(fl, fn, line)
        mine = keyed["self"].get(k)
        if mine is None or abs(mine - cost * scale / 1e9) > 1:
            problems.append("%s: self %s here, %d ns in pyprof2calltree" % (fn[:60], mine, cost))
    for ((fl, fn), (cfl, cfn)), (calls, incl, cline) in theirs.calls.items():
        a, b = key(fl, fn, lines[(fl, fn)]), key(cfl, cfn, cline)
        mine = keyed["edges"].get((a, b))
        if mine is None or mine[0] != calls or abs(mine[1] - incl * scale / 1e9) > 1:
            problems.append("%s -> %s: %r here, calls=%d and %d ns in pyprof2calltree" % (
                fn[:40], cfn[:40], mine, calls, incl))
    if len(theirs.calls) != len(keyed["edges"]):
        problems.append("%d edges here, %d in pyprof2calltree" % (len(keyed["edges"]), len(theirs.calls)))
    return problems


def mutations(text):
    """Wrong outputs the checker must reject: (what, text)."""
    lines = text.split("\n")
    out = []
    first_call = next(i for i, l in enumerate(lines) if l.startswith("calls="))
    m = lines[:]
    count, rest = m[first_call][6:].split(" ", 1)
    m[first_call] = "calls=%d %s" % (int(count) + 1, rest)
    out.append(("a call count off by one", m))
    m = lines[:]
    i = next(i for i, l in enumerate(lines) if l.startswith("fn=")) + 1
    pos, cost = m[i].split(" ")
    m[i] = "%s %d" % (pos, int(cost) + 1000)
    out.append(("a self cost off by 1000", m))
    m = lines[:]
    pos, cost = m[first_call + 1].split(" ")
    m[first_call + 1] = "%s %d" % (pos, int(cost) + 1000)
    out.append(("an inclusive cost off by 1000", m))
    m = lines[:]
    del m[first_call + 1]
    out.append(("the cost line after calls= removed", m))
    # A callee replaced by another function (defined by then, so the file stays valid).
    # A callee named by reference, replaced by another function defined by then: the file
    # stays valid, the edge is wrong.
    defined = []
    for i, line in enumerate(lines):
        c = re.match(r"^c?fn=\((\d+)\)( .*)?$", line)
        if not c:
            continue
        if c.group(2):
            defined.append(c.group(1))
        elif line.startswith("cfn="):
            other = next((x for x in defined if x != c.group(1)), None)
            if other is not None:
                m = lines[:]
                m[i] = "cfn=(%s)" % other
                out.append(("a callee swapped for another function", m))
                break
    return [(what, "\n".join(m)) for what, m in out]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fnprof", required=True)
    ap.add_argument("--workdir", required=True)
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--profile")
    g.add_argument("--odd-names", action="store_true")
    args = ap.parse_args()
    if not shutil.which("callgrind_annotate"):
        print("SKIP: callgrind_annotate (valgrind) is not installed")
        return 77
    if args.odd_names:
        work = os.path.join(args.workdir, "callgrind-odd")
        os.makedirs(work, exist_ok=True)
        prof = os.path.join(work, "odd.prof")
        viewlib.odd_profile(prof)
    else:
        work = os.path.join(args.workdir, "callgrind-" + os.path.splitext(args.profile)[0])
        os.makedirs(work, exist_ok=True)
        prof = os.path.join(args.workdir, args.profile)
    stats, tree = fnptree.read(prof)
    calls = tree is not None and tree.kind == fnptree.KIND_CALLS
    scale, event = (1, "Calls") if calls else (1e9, "Time_ns")
    nthreads = len(tree.threads) if tree is not None else 1
    out = os.path.join(work, "out.callgrind")
    # the keys' own names, which this reader checks; --short-names: check_short_names.py
    run = subprocess.run([args.fnprof, "convert", prof, "--to", "callgrind", "--no-short-names",
                          "-o", out],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if run.returncode or run.stderr:
        print("FAIL: fnprof convert: exit %d, stderr %r" % (run.returncode, run.stderr))
        return 1
    keyed = {}
    problems = compare(out, stats, scale, event, nthreads, verbose=True, keyed=keyed)
    if args.odd_names:
        pass  # names with newlines: pyprof2calltree does not escape them
    elif not shutil.which("pyprof2calltree"):
        print("note: pyprof2calltree not installed, not compared with it")
    elif "self" in keyed:
        p2c = compare_pyprof2calltree(prof, work, keyed, scale)
        problems += p2c
        if not p2c:
            print("same self costs, calls and inclusive costs as pyprof2calltree's file")
    if not args.odd_names:
        # The paths program: d is called from c only, c from a and b (exact per edge above).
        callers = {k[2]: sorted(c[2] for c in v[4]) for k, v in stats.items()}
        if callers.get("d") != ["c"] or callers.get("c") != ["a", "b"]:
            problems.append("the fixture's callers: d %r, c %r" % (callers.get("d"), callers.get("c")))
    for p in problems:
        print("FAIL: " + p)
    if problems:
        print("--- %s ---" % out)
        with open(out, "rb") as f:
            sys.stdout.write(f.read().decode("latin-1")[:4000])
        return 1
    # The checker must be able to fail.
    with open(out, "rb") as f:
        text = f.read().decode("latin-1")
    bad = os.path.join(work, "mutated.callgrind")
    for what, mutated in mutations(text):
        with open(bad, "wb") as f:
            f.write(mutated.encode("latin-1"))
        try:
            found = compare(bad, stats, scale, event, nthreads)
        except RuntimeError as e:
            found = [str(e)]
        if not found:
            print("FAIL: self-check: the checker accepts an output with %s" % what)
            return 1
        print("self-check: %s rejected (%s)" % (what, found[0][:100]))
    print("OK: %s: %d functions, %d edges, event %s" % (
        os.path.basename(prof), len(stats), sum(len(v[4]) for v in stats.values()), event))
    return 0


if __name__ == "__main__":
    sys.exit(main())
# SPDX-License-Identifier: MIT
