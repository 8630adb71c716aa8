#!/usr/bin/env python3
"""Compares fnprof's pstats file for a C program with cProfile's stats for its Python mirror.

    compare.py --c-source progs/fib.c --py-source progs/fib.py --prof fib.prof

The mirror's main() is profiled in this process with cProfile. Functions are matched by
name; keys whose file is '~' (Python's builtins, fnprof's synthetic roots) are left out of
the match. Per function (calls, primitive calls) and per caller edge (calls, primitive
calls) must be equal, with nothing missing on either side. fnprof's keys must name the
absolute path of the .c file and the line of the function's name in it, and its file must
hold cProfile's invariants (see check_invariants). Exit 0 when all holds, 1 otherwise
(with a table of what differs), 2 on bad usage or a broken test setup.

python3 standard library only: it runs with whatever interpreter CMake found.
"""

import argparse
import contextlib
import cProfile
import importlib.util
import io
import math
import marshal
import os
import pstats
import re
import sys

import fnptree

BUILTIN_FILE = "~"


class SetupError(Exception):
    """The test itself is broken (a mirror, a source): not fnprof's fault."""


def profile_mirror(py_path):
    """Runs the mirror's main() once under cProfile; returns (stats dict, its stdout)."""
    name = "e2e_mirror_" + os.path.splitext(os.path.basename(py_path))[0]
    spec = importlib.util.spec_from_file_location(name, py_path)
    module = importlib.util.module_from_spec(spec)
    dont_write = sys.dont_write_bytecode
    sys.dont_write_bytecode = True  # no __pycache__ in the source tree
    try:
        spec.loader.exec_module(module)
    finally:
        sys.dont_write_bytecode = dont_write
    if not callable(getattr(module, "main", None)):
        raise SetupError("%s has no main()" % py_path)
    profiler = cProfile.Profile()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        # runcall profiles exactly the call of main(): enable, main(), disable.
        profiler.runcall(module.main)
    profiler.create_stats()
    return profiler.stats, out.getvalue()


def load_pstats(path):
    """The dict in a pstats file, read the way pstats.Stats reads it, type-checked.

    Returns (stats, problems): stats is None when the file does not load at all.
    """
    problems = []
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        return None, ["cannot read %s: %s" % (path, e)]
    stream = io.BytesIO(data)
    try:
        stats = marshal.load(stream)
    except (EOFError, ValueError, TypeError) as e:
        return None, ["%s is not a marshalled object: %s" % (path, e)]
    end = stream.tell()
    if not isinstance(stats, dict):
        return None, ["%s holds a %s, not a dict" % (path, type(stats).__name__)]
    if not stats:
        return None, ["%s holds an empty dict (pstats.Stats refuses it)" % path]
    try:
        pstats.Stats(path)  # the reader users have must accept the file too
    except Exception as e:  # pylint: disable=broad-except
        problems.append("pstats.Stats(%r) fails: %r" % (path, e))

    def is_key(k):
        return (isinstance(k, tuple) and len(k) == 3 and isinstance(k[0], str)
                and is_int(k[1]) and isinstance(k[2], str))

    # Shapes are checked before anything reads the numbers: a bad one makes the file unusable.
    malformed = []
    for key, value in stats.items():
        if not is_key(key):
            malformed.append("bad key %r" % (key,))
            continue
        if not (isinstance(value, tuple) and len(value) == 5 and is_int(value[0])
                and is_int(value[1]) and isinstance(value[2], float)
                and isinstance(value[3], float) and isinstance(value[4], dict)):
            malformed.append("%s: bad value %r (want (int, int, float, float, dict))"
                             % (fmt_key(key), value))
            continue
        for caller, edge in value[4].items():
            if not is_key(caller):
                malformed.append("%s: bad caller key %r" % (fmt_key(key), caller))
            elif not (isinstance(edge, tuple) and len(edge) == 4 and is_int(edge[0])
                      and is_int(edge[1]) and isinstance(edge[2], float)
                      and isinstance(edge[3], float)):
                malformed.append("%s <- %s: bad edge %r (want (int, int, float, float))"
                                 % (fmt_key(key), fmt_key(caller), edge))
    if malformed:
        return None, problems + malformed
    # After the dict, only fnprof's calling-context tree, whose own derivation of cProfile's
    # numbers must give the dict's (fnptree.py, a reader independent of fnprof's).
    if end != len(data):
        try:
            tree = fnptree.parse(stats, data[:end], data[end:])
        except fnptree.TreeError as e:
            problems.append("%s: %d bytes after the dict, not a calling-context tree: %s"
                            % (path, len(data) - end, e))
        else:
            problems += ["%s: the tree disagrees with the dict: %s" % (path, p)
                         for p in fnptree.check(stats, tree)[:20]]
    return stats, problems


def is_int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def fmt_key(key):
    return "%s:%s(%s)" % key


def check_invariants(stats):
    """cProfile's invariants on a whole file; returns a list of violations."""
    bad = []
    total_tottime = 0.0
    for key, (pcalls, ncalls, tottime, cumtime, callers) in stats.items():
        for what, t in (("tottime", tottime), ("cumtime", cumtime)):
            if not math.isfinite(t) or t < 0:
                bad.append("%s: %s is %r" % (fmt_key(key), what, t))
        if math.isfinite(tottime) and tottime > 0:
            total_tottime += tottime
    for key, (pcalls, ncalls, tottime, cumtime, callers) in stats.items():
        name = fmt_key(key)
        if ncalls < 1:
            bad.append("%s: %d calls (a key is written only for a called function)"
                       % (name, ncalls))
        if not 1 <= pcalls <= ncalls:
            bad.append("%s: %d primitive calls of %d (the outermost call is always primitive)"
                       % (name, pcalls, ncalls))
        if cumtime < tottime - tolerance(tottime):
            bad.append("%s: cumtime %r < tottime %r" % (name, cumtime, tottime))
        if cumtime > total_tottime + tolerance(total_tottime):
            bad.append("%s: cumtime %r > the whole profile's time %r"
                       % (name, cumtime, total_tottime))
        edge_calls = 0
        edge_tottime = 0.0
        for caller, (e_ncalls, e_pcalls, e_tottime, e_cumtime) in callers.items():
            edge = "%s -> %s" % (fmt_key(caller), name)
            if caller not in stats:
                bad.append("%s: the caller is not a top-level key" % edge)
            for what, t in (("tottime", e_tottime), ("cumtime", e_cumtime)):
                if not math.isfinite(t) or t < 0:
                    bad.append("%s: edge %s is %r" % (edge, what, t))
            if not 1 <= e_pcalls <= e_ncalls:
                bad.append("%s: edge has %d primitive calls of %d" % (edge, e_pcalls, e_ncalls))
            if e_cumtime < e_tottime - tolerance(e_tottime):
                bad.append("%s: edge cumtime %r < edge tottime %r" % (edge, e_cumtime, e_tottime))
            edge_calls += e_ncalls
            edge_tottime += e_tottime
        root_calls = ncalls - edge_calls
        if root_calls < 0:
            bad.append("%s: its edges hold %d calls, more than its %d" % (name, edge_calls, ncalls))
        elif root_calls == 0 and abs(edge_tottime - tottime) > tolerance(tottime, 1e-6):
            # Every call came through an edge: the edges split the function's tottime.
            bad.append("%s: edges' tottime sums to %r, the function's is %r"
                       % (name, edge_tottime, tottime))
        elif edge_tottime > tottime + tolerance(tottime, 1e-6):
            bad.append("%s: edges' tottime %r exceeds the function's %r"
                       % (name, edge_tottime, tottime))
    return bad


def check_time_bounds(stats, wall=None):
    """The bounds every profile's times keep, merged beyond PROF_MAX_NODES or not: the
    functions' tottimes sum to the outermost functions' cumtimes (every tick is someone's
    own); an edge's tottime and cumtime are at most its callee's, and its cumtime at most
    its caller's (its outermost calls run inside its caller's); with wall (seconds, the
    run's wall time seen from outside), no function or edge but the synthetic root of
    several threads takes longer. Returns violations."""
    bad = []
    slack = 1e-6
    total = sum(v[2] for v in stats.values())
    roots = sum(v[3] for v in stats.values() if not v[4])
    if abs(total - roots) > tolerance(max(total, roots), slack):
        bad.append("the functions' tottimes sum to %r, the outermost functions' cumtimes to %r"
                   % (total, roots))
    for key, (pcalls, ncalls, tottime, cumtime, callers) in stats.items():
        name = fmt_key(key)
        if wall is not None and key[0] != BUILTIN_FILE and cumtime > wall:
            bad.append("%s: cumtime %r above the run's wall time %r" % (name, cumtime, wall))
        for caller, (e_ncalls, e_pcalls, e_tottime, e_cumtime) in callers.items():
            edge = "%s -> %s" % (fmt_key(caller), name)
            if e_tottime > tottime + tolerance(tottime, slack):
                bad.append("%s: edge tottime %r above the callee's %r" % (edge, e_tottime, tottime))
            if e_cumtime > cumtime + tolerance(cumtime, slack):
                bad.append("%s: edge cumtime %r above the callee's %r" % (edge, e_cumtime, cumtime))
            c_cumtime = stats[caller][3] if caller in stats else None
            if c_cumtime is not None and e_cumtime > c_cumtime + tolerance(c_cumtime, slack):
                bad.append("%s: edge cumtime %r above the caller's %r"
                           % (edge, e_cumtime, c_cumtime))
            if wall is not None and caller[0] != BUILTIN_FILE and e_tottime > wall:
                bad.append("%s: edge tottime %r above the run's wall time %r"
                           % (edge, e_tottime, wall))
    return bad


def tolerance(t, rel=1e-9):
    """Rounding slack for sums of floats converted from integer ticks."""
    return abs(t) * rel + 1e-9


def decl_lines(c_path):
    """{name: line} for the functions defined in a C source written in house style: the line
    with the function's name starts at column 0 and does not end in ';'. Named regions
    (FNPROF_REGION("name"), fnprof_region_begin("name")) count as functions of that name at
    the macro's line, which is their key's."""
    with open(c_path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    pattern = re.compile(r"^[A-Za-z_][^;=]*?\b([A-Za-z_]\w*)\s*\(")
    region = re.compile(r"\b(?:FNPROF_REGION|fnprof_region_begin)\(\"([^\"]*)\"\)")
    attribute = re.compile(r"__attribute__\s*\(\(.*?\)\)\s*")
    found = {}
    for number, line in enumerate(lines, 1):
        m = region.search(line) or pattern.match(attribute.sub("", line))
        if not m or (line.rstrip().endswith(";") and not region.search(line)):
            continue
        name = m.group(1)
        if name in found:
            raise SetupError("%s: %s defined twice (lines %d and %d)"
                             % (c_path, name, found[name], number))
        found[name] = number
    return found


def check_c_keys(c_names, c_source, lines):
    """The key's file is the absolute .c path (as given, or with symlinks resolved) and its
    line is the line of the function's name; returns a list of violations."""
    bad = []
    good_files = {c_source, os.path.realpath(c_source)}
    for name, key in sorted(c_names.items()):
        if key[0] not in good_files:
            bad.append("%s: file %r, want %r" % (name, key[0], c_source))
        if name not in lines:
            bad.append("%s: no function %s in %s" % (fmt_key(key), name, c_source))
        elif key[1] != lines[name]:
            bad.append("%s: line %d, want %d (the line of its name)" % (name, key[1], lines[name]))
    return bad


def plain_name(name):
    """A C++ function's name without its parameter list: leaf(int) -> leaf."""
    m = re.match(r"^([A-Za-z_]\w*)\(.*\)$", name)
    return m.group(1) if m else name


def by_name(stats, which):
    """{name: key} for the keys not in '~' (C++ names without their parameters); two keys
    with one name is an error."""
    names = {}
    dups = []
    for key in stats:
        if key[0] == BUILTIN_FILE:
            continue
        name = plain_name(key[2])
        if name in names:
            dups.append("%s: two keys named %s: %s and %s"
                        % (which, name, fmt_key(names[name]), fmt_key(key)))
        names[name] = key
    return names, dups


def counts(stats, names):
    """{name: (ncalls, pcalls)} and {(caller, callee): (ncalls, pcalls)}, '~' left out."""
    funcs = {}
    edges = {}
    for name, key in names.items():
        pcalls, ncalls, _, _, callers = stats[key]
        funcs[name] = (ncalls, pcalls)
        for caller, (e_ncalls, e_pcalls, _, _) in callers.items():
            if caller[0] == BUILTIN_FILE:
                continue
            edges[(plain_name(caller[2]), name)] = (e_ncalls, e_pcalls)
    return funcs, edges


def fmt_counts(c):
    return "-" if c is None else "%d/%d" % c


def check_count_only(stats):
    """Count-only mode (PROF_TIMER=none) weighs every call as one second: a function's and an
    edge's tottime are its call counts, cumtime the calls under it. Returns violations."""
    bad = []
    total = sum(v[1] for v in stats.values())
    callees = {}
    # pstats order: a function is (primitive, calls, ...), an edge (calls, primitive, ...).
    for key, (pc, nc, tt, ct, callers) in stats.items():
        if tt != float(nc):
            bad.append("%s: tottime %r, want its %d calls" % (fmt_key(key), tt, nc))
        if not callers and ct != float(total):
            bad.append("%s (outermost): cumtime %r, want all %d calls" % (fmt_key(key), ct, total))
        for caller, (enc, epc, ett, ect) in callers.items():
            if ett != float(enc):
                bad.append("%s -> %s: tottime %r, want its %d calls"
                           % (fmt_key(caller), fmt_key(key), ett, enc))
            callees.setdefault(caller, []).append((enc, epc, ect))
    for key, (pc, nc, tt, ct, _) in stats.items():
        out = callees.get(key, [])
        # Without recursion, a function's calls under it are its own plus its callees'.
        if nc == pc and all(enc == epc for enc, epc, _ in out):
            want = tt + sum(ect for _, _, ect in out)
            if ct != want:
                bad.append("%s: cumtime %r, want own + callees' = %r" % (fmt_key(key), ct, want))
    return bad


def compare(c_source, py_source, prof, out=sys.stdout, count_only=False, times=True):
    """True when fnprof's file `prof` for c_source agrees with cProfile on py_source."""
    c_source = os.path.abspath(c_source)
    label = os.path.splitext(os.path.basename(c_source))[0]
    py_stats, _ = profile_mirror(py_source)
    py_names, py_dups = by_name(py_stats, "cProfile")
    if py_dups:
        raise SetupError("; ".join(py_dups))
    lines = decl_lines(c_source)

    c_stats, problems = load_pstats(prof)
    if c_stats is None:
        print("compare: %s: fnprof's file does not load:" % label, file=out)
        for p in problems:
            print("  " + p, file=out)
        return False
    problems += check_invariants(c_stats)
    if not times:
        # Beyond PROF_MAX_NODES the calling contexts are merged: the counts are held to
        # cProfile's, and the times to the bounds every profile keeps.
        problems += check_time_bounds(c_stats)
    if count_only:
        problems += check_count_only(c_stats)
    c_names, c_dups = by_name(c_stats, "fnprof")
    problems += c_dups

    problems += check_c_keys(c_names, c_source, lines)

    py_funcs, py_edges = counts(py_stats, py_names)
    c_funcs, c_edges = counts(c_stats, c_names)
    rows = []
    for name in sorted(set(py_funcs) | set(c_funcs)):
        rows.append(("function", name, py_funcs.get(name), c_funcs.get(name)))
    for edge in sorted(set(py_edges) | set(c_edges), key=lambda e: (e[1], e[0])):
        rows.append(("edge", "%s -> %s" % edge, py_edges.get(edge), c_edges.get(edge)))
    differ = [r for r in rows if r[2] != r[3]]

    if not differ and not problems:
        print("compare: %s: fnprof equals cProfile: %d functions, %d edges, calls/primitive each"
              % (label, len(py_funcs), len(py_edges)), file=out)
        return True

    print("compare: %s: fnprof (%s) differs from cProfile (%s)" % (label, prof, py_source),
          file=out)
    if differ:
        width = max(len(r[1]) for r in rows)
        print("  %-8s  %-*s  %14s  %14s" % ("what", width, "name", "cProfile", "fnprof"),
              file=out)
        for what, name, py, c in rows:
            print("  %-8s  %-*s  %14s  %14s%s" % (what, width, name, fmt_counts(py),
                                                 fmt_counts(c),
                                                 "" if py == c else "  <-- differs"), file=out)
        print("  (counts are calls/primitive calls; '-' is missing)", file=out)
    for p in problems:
        print("  " + p, file=out)
    return False


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--c-source", required=True, help="the C program fnprof profiled")
    parser.add_argument("--py-source", required=True, help="its Python mirror (defines main())")
    parser.add_argument("--prof", required=True, help="fnprof's pstats file")
    args = parser.parse_args(argv)
    try:
        return 0 if compare(args.c_source, args.py_source, args.prof) else 1
    except SetupError as e:
        print("compare: test setup: %s" % e, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
# SPDX-License-Identifier: MIT
