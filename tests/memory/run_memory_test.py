#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""End-to-end tests of PROF_MEMORY: programs with known allocations, built here with each
compiler found, run with libfnprof.so (preloaded and linked), their memory profiles read by
the independent reader (tests/e2e/fnptree.py) and checked function by function, exactly.

    run_memory_test.py CASE --lib libfnprof.so --fnprof fnprof --src tests/memory
                       [--static-prog PROG]

CASE: known (every allocator entry point, leaks, failures), threads (workers allocate, main
frees), cxx (new/delete, new[]/delete[], g++ and clang++), fork (the child's profile starts
at the fork), unset (no PROF_MEMORY: nothing written, the same output; PROF_OUTPUT with it:
the same calls), static (libfnprof.a says it cannot), own_malloc (a program with its own
malloc: one line, and the profile labelled incomplete). Exit 0 pass, 1 fail, 77 skipped.

python3 standard library only.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))
import fnptree  # noqa: E402
from run_case import clean_env  # noqa: E402

SKIP = 77
OUTSIDE = "<outside recorded calls>"


class Failure(Exception):
    pass


def compilers(cxx):
    names = ("g++", "clang++") if cxx else ("gcc", "clang")
    found = [c for c in names if shutil.which(c)]
    if not found:
        raise Failure("no %s compiler found" % ("C++" if cxx else "C"))
    return found


def build(cc, src, out, lib=None, extra=()):
    cmd = [cc, "-g", "-O0", "-finstrument-functions", "-w", src, "-o", out, "-pthread"] + list(extra)
    if lib:
        cmd += ["-L" + os.path.dirname(lib), "-Wl,-rpath," + os.path.dirname(lib), "-lfnprof"]
    subprocess.run(cmd, check=True)


def run(prog, env_add, cwd, args=(), preload=None):
    env = clean_env()
    env.update(env_add)
    if preload:
        env["LD_PRELOAD"] = preload
    return subprocess.run([prog] + list(args), cwd=cwd, env=env, capture_output=True, text=True)


def by_function(path):
    """{function name: dict of allocs, bytes, frees, freed, peak, cum, calls} from the
    memory profile at path, through fnptree (not fnprof's reader)."""
    stats, tree = fnptree.read(path)
    if tree is None:
        raise Failure("%s: no tree" % path)
    problems = fnptree.check(stats, tree)
    if problems:
        raise Failure("%s: the tree does not give the dict: %s" % (path, problems[:3]))
    meta = dict(fnptree.read_meta(path))
    if meta.get("profile") != "memory" or meta.get("unit") != "bytes":
        raise Failure("%s: metadata does not say memory/bytes: %r" % (path, meta))
    if tree.tick_seconds != 1:
        raise Failure("%s: tick %r, not 1 second = 1 byte" % (path, tree.tick_seconds))
    out = {}
    for n in tree.nodes:
        if n.mem is None:
            raise Failure("%s: node without memory columns" % path)
        name = re.sub(r"\(\)$", "", n.key[2])  # C++ names carry their "()"
        f = out.setdefault(name, dict(allocs=0, bytes=0, frees=0, freed=0, peak=0, cum=0,
                                      calls=0))
        allocs, frees, freed, peak = n.mem
        f["allocs"] += allocs
        f["bytes"] += tree.self_value(n)
        f["frees"] += frees
        f["freed"] += freed
        f["peak"] = max(f["peak"], peak)
    for key, (pcalls, ncalls, tottime, cumtime, _) in stats.items():
        f = out.get(re.sub(r"\(\)$", "", key[2]))
        if f:
            f["cum"] = cumtime
            f["calls"] = ncalls
            if tottime != f["bytes"]:
                raise Failure("%s: %s tottime %r, own bytes %d" % (path, key[2], tottime,
                                                                   f["bytes"]))
    return out


def expect(funcs, name, where, **want):
    got = funcs.get(name)
    if got is None:
        raise Failure("%s: no function %s (has %s)" % (where, name, sorted(funcs)))
    bad = {k: (got[k], v) for k, v in want.items() if got[k] != v}
    if bad:
        raise Failure("%s: %s: (got, expected) %r" % (where, name, bad))


def expect_ok(r, what, want="ok\n"):
    if r.returncode != 0 or r.stdout != want:
        raise Failure("%s: exit %d, stdout %r, stderr %s" % (what, r.returncode, r.stdout,
                                                             r.stderr))


def case_known(a, tmp):
    src = os.path.join(a.src, "known.c")
    for cc in compilers(False):
        prog = os.path.join(tmp, "known-" + cc)
        linked = prog + "-linked"
        build(cc, src, prog)
        build(cc, src, linked, lib=a.lib)
        for how, p, pre in (("preloaded", prog, a.lib), ("linked", linked, None)):
            where = "%s %s" % (cc, how)
            r = run(p, {"PROF_MEMORY": "mem.prof", "PROF_QUIET": "1"}, tmp, preload=pre)
            expect_ok(r, where)
            if r.stderr:
                raise Failure("%s: PROF_QUIET, yet stderr %r" % (where, r.stderr))
            f = by_function(os.path.join(tmp, "mem.prof"))
            expect(f, "leak_two", where, allocs=5, bytes=500, frees=3, freed=300, peak=500)
            expect(f, "zeroed", where, allocs=1, bytes=63, frees=1, freed=63, peak=63)
            expect(f, "grow_chain", where, allocs=5, bytes=200, frees=5, freed=200, peak=100)
            expect(f, "aligned_forms", where, allocs=5, bytes=5804, frees=5, freed=5804,
                   peak=5000)
            expect(f, "contract", where, allocs=1, bytes=24, frees=1, freed=24, peak=24)
            expect(f, "outer", where, allocs=0, bytes=0, cum=563, calls=1)
            expect(f, "main", where, allocs=0, bytes=0, cum=563 + 200 + 5804 + 24, calls=1)
            check_report(a, os.path.join(tmp, "mem.prof"), where)
            os.unlink(os.path.join(tmp, "mem.prof"))


def check_report(a, path, where):
    """fnprof report --memory --exact prints leak_two's row; convert takes the profile."""
    r = subprocess.run([a.fnprof, "report", "--memory", "--exact", "--no-meta", "--sort",
                        "leaked", path], capture_output=True, text=True)
    rows = [l.split() for l in r.stdout.splitlines() if l.endswith("(leak_two)")]
    if r.returncode != 0 or not rows:
        raise Failure("%s: report --memory: %d %s %s" % (where, r.returncode, r.stdout,
                                                         r.stderr))
    # allocs bytes cumbytes frees freed peak leaked name
    if rows[0][:7] != ["5", "500", "500", "3", "300", "500", "200"]:
        raise Failure("%s: report --memory row %r" % (where, rows[0]))
    first = [l for l in r.stdout.splitlines() if l.strip() and l.strip()[0].isdigit()]
    if not first or not first[1 if "allocations" in first[0] else 0].endswith("(leak_two)"):
        raise Failure("%s: --sort leaked does not put leak_two first:\n%s" % (where, r.stdout))
    r = subprocess.run([a.fnprof, "report", path], capture_output=True, text=True)
    if r.returncode != 0 or "(leak_two)" not in r.stdout:
        raise Failure("%s: plain report of a memory profile: %s" % (where, r.stderr))
    r = subprocess.run([a.fnprof, "convert", path, "--to", "collapsed"], capture_output=True,
                       text=True)
    if r.returncode != 0:
        raise Failure("%s: convert --to collapsed: %s" % (where, r.stderr))
    leak = [l for l in r.stdout.splitlines() if l.split(" ")[0].endswith("leak_two")]
    if not leak:
        raise Failure("%s: collapsed stacks have no leak_two line:\n%s" % (where, r.stdout))


def case_threads(a, tmp):
    src = os.path.join(a.src, "threads.c")
    for cc in compilers(False):
        prog = os.path.join(tmp, "threads-" + cc)
        build(cc, src, prog)
        where = cc
        r = run(prog, {"PROF_MEMORY": "mem.prof", "PROF_QUIET": "1"}, tmp, preload=a.lib)
        expect_ok(r, where)
        f = by_function(os.path.join(tmp, "mem.prof"))
        expect(f, "worker_alloc", where, allocs=4000, bytes=4000 * 48, frees=4000,
               freed=4000 * 48, calls=4)
        expect(f, "worker_keep", where, allocs=40, bytes=640, frees=0, freed=0, calls=4)
        expect(f, "main_free", where, allocs=0, bytes=0, frees=0)
        if f["worker_alloc"]["peak"] < 1000 * 48:
            raise Failure("%s: worker_alloc peak %d below one thread's blocks" % (
                where, f["worker_alloc"]["peak"]))


def case_cxx(a, tmp):
    src = os.path.join(a.src, "cxx.cc")
    for cc in compilers(True):
        prog = os.path.join(tmp, "cxx-" + cc)
        build(cc, src, prog)
        where = cc
        r = run(prog, {"PROF_MEMORY": "mem.prof", "PROF_QUIET": "1"}, tmp, preload=a.lib)
        expect_ok(r, where)
        f = by_function(os.path.join(tmp, "mem.prof"))
        expect(f, "new_scalar", where, allocs=1, bytes=24, frees=1, freed=24)
        expect(f, "new_array", where, allocs=1, bytes=400, frees=1, freed=400)
        expect(f, "new_cookie", where, allocs=1, bytes=168, frees=1, freed=168)
        expect(f, "keep_one", where, allocs=1, bytes=24, frees=0, freed=0, peak=24)


def case_fork(a, tmp):
    src = os.path.join(a.src, "forked.c")
    cc = compilers(False)[0]
    prog = os.path.join(tmp, "forked")
    build(cc, src, prog)
    r = run(prog, {"PROF_MEMORY": "mem.prof", "PROF_QUIET": "1"}, tmp, preload=a.lib)
    if r.returncode != 0 or sorted(r.stdout.splitlines()) != ["child ok", "ok"]:
        raise Failure("fork: exit %d, %r %s" % (r.returncode, r.stdout, r.stderr))
    files = sorted(f for f in os.listdir(tmp) if f.startswith("mem.prof"))
    if len(files) != 2 or files[0] != "mem.prof":
        raise Failure("fork: files %r, not the parent's and the child's" % files)
    parent = by_function(os.path.join(tmp, files[0]))
    child = by_function(os.path.join(tmp, files[1]))
    expect(parent, "parent_alloc", "parent", allocs=1, bytes=1000, frees=1, freed=1000)
    if "child_alloc" in parent:
        raise Failure("fork: the parent's profile has the child's calls")
    expect(child, "child_alloc", "child", allocs=3, bytes=192, frees=0)
    if child.get("parent_alloc", {}).get("allocs", 0):
        raise Failure("fork: the child's profile has the parent's allocations")
    freed = sum(v["frees"] for k, v in child.items() if k != OUTSIDE)
    if freed:
        raise Failure("fork: the child credited %d frees of the parent's blocks" % freed)


def case_unset(a, tmp):
    src = os.path.join(a.src, "known.c")
    prog = os.path.join(tmp, "known")
    build(compilers(False)[0], src, prog)
    plain = run(prog, {}, tmp)
    pre = run(prog, {}, tmp, preload=a.lib)
    expect_ok(plain, "without fnprof")
    expect_ok(pre, "preloaded, no PROF_MEMORY")
    if pre.stderr or os.listdir(tmp) != ["known"]:
        raise Failure("no PROF_MEMORY: stderr %r, files %r" % (pre.stderr, os.listdir(tmp)))
    timing = run(prog, {"PROF_OUTPUT": "t.prof", "PROF_QUIET": "1"}, tmp, preload=a.lib)
    both = run(prog, {"PROF_OUTPUT": "t2.prof", "PROF_MEMORY": "m.prof", "PROF_QUIET": "1"},
               tmp, preload=a.lib)
    expect_ok(timing, "PROF_OUTPUT")
    expect_ok(both, "PROF_OUTPUT and PROF_MEMORY")
    t1, _ = fnptree.read(os.path.join(tmp, "t.prof"))
    t2, _ = fnptree.read(os.path.join(tmp, "t2.prof"))
    m, _ = fnptree.read(os.path.join(tmp, "m.prof"))
    calls = lambda s: {k: v[:2] for k, v in s.items()}  # noqa: E731
    if calls(t1) != calls(t2):
        raise Failure("PROF_MEMORY changed the timing profile's calls")
    if {k: v for k, v in calls(m).items() if k[2] != OUTSIDE} != calls(t1):
        raise Failure("the memory profile's calls are not the timing profile's:\n%r\n%r" % (
            calls(m), calls(t1)))


def case_format(a, tmp):
    """The memory section read back: merged (rows add, peaks take the larger), written again
    by fnptree, refused when damaged; a memory and a timing profile do not merge into one."""
    prog = os.path.join(tmp, "known")
    build(compilers(False)[0], os.path.join(a.src, "known.c"), prog)
    expect_ok(run(prog, {"PROF_MEMORY": "m.prof", "PROF_OUTPUT": "t.prof", "PROF_QUIET": "1"},
                  tmp, preload=a.lib), "known")
    m = os.path.join(tmp, "m.prof")
    two = os.path.join(tmp, "two.prof")
    r = subprocess.run([a.fnprof, "merge", "-o", two, m, m], capture_output=True, text=True)
    if r.returncode:
        raise Failure("merge: %s" % r.stderr)
    expect(by_function(two), "leak_two", "merged", allocs=10, bytes=1000, frees=6, freed=600,
           peak=500)
    stats, tree = fnptree.read(m)
    again = os.path.join(tmp, "again.prof")
    with open(again, "wb") as f:
        f.write(fnptree.encode(stats, tree, version=3))

    def rows(path):
        r = subprocess.run([a.fnprof, "report", "--memory", "--exact", "--no-meta", "--limit",
                            "0", path], capture_output=True, text=True)
        return r.returncode, [l for l in r.stdout.splitlines() if l.endswith(")")]

    if rows(again) != rows(m) or not rows(m)[1]:
        raise Failure("fnprof reads fnptree's memory section otherwise:\n%r\n%r" % (
            rows(again), rows(m)))
    tree.nodes[0].mem = (1, 2, 0, 0)  # frees more blocks than allocated
    bad = os.path.join(tmp, "bad.prof")
    with open(bad, "wb") as f:
        f.write(fnptree.encode(stats, tree, version=3))
    r = subprocess.run([a.fnprof, "report", "--memory", bad], capture_output=True, text=True)
    if r.returncode != 1 or "frees 2 blocks of 1" not in r.stderr:
        raise Failure("a damaged memory row: exit %d, %r" % (r.returncode, r.stderr))
    # Bytes and seconds: merge and diff refuse to add or compare them, and write nothing.
    mixed = os.path.join(tmp, "mixed.prof")
    for argv in (["merge", "-o", mixed, m, os.path.join(tmp, "t.prof")],
                 ["diff", m, os.path.join(tmp, "t.prof")]):
        r = subprocess.run([a.fnprof] + argv, capture_output=True, text=True)
        if (r.returncode not in (1, 2) or "memory profile" not in r.stderr or r.stdout
                or os.path.exists(mixed)):
            raise Failure("fnprof %s of a memory and a timing profile: exit %d, %r" % (
                argv[0], r.returncode, r.stderr))
    # Merged sums that would pass 2^64 saturate: the reader still takes the file.
    big = os.path.join(tmp, "big.prof")
    tree.nodes[0].mem = (2**64 - 1, 0, 0, 0)
    with open(big, "wb") as f:
        f.write(fnptree.encode(stats, tree, version=3))
    small = os.path.join(tmp, "small.prof")
    tree.nodes[0].mem = (2, 2, 0, 0)
    with open(small, "wb") as f:
        f.write(fnptree.encode(stats, tree, version=3))
    summed = os.path.join(tmp, "summed.prof")
    subprocess.run([a.fnprof, "merge", "-o", summed, big, small], capture_output=True, check=True)
    r = subprocess.run([a.fnprof, "report", "--memory", summed], capture_output=True, text=True)
    if r.returncode != 0:
        raise Failure("a merge of near-2^64 counts is refused by its own reader: %r" % r.stderr)


def case_static(a, tmp):
    if not a.static_prog:
        raise Failure("static: --static-prog not given")
    r = run(a.static_prog, {"PROF_MEMORY": "mem.prof"}, tmp)
    expect_ok(r, "static")
    want = "fnprof: PROF_MEMORY needs libfnprof.so"
    if not r.stderr.startswith(want) or len(r.stderr.splitlines()) != 1:
        raise Failure("static: stderr %r, not one line starting %r" % (r.stderr, want))
    if os.listdir(tmp):
        raise Failure("static: files written: %r" % os.listdir(tmp))


def case_own_malloc(a, tmp):
    """A program that defines malloc, free, calloc and realloc itself (as one linking
    jemalloc or mimalloc statically does): fnprof's wrappers never see its allocations, so
    PROF_MEMORY says so in one line at start and labels the profile incomplete."""
    src = os.path.join(a.src, "own_malloc.c")
    want = ("fnprof: PROF_MEMORY: incomplete memory profile: malloc, free, calloc, realloc are "
            "the program's own, not libc's")
    for cc in compilers(False):
        prog = os.path.join(tmp, "own-" + cc)
        linked = prog + "-linked"
        build(cc, src, prog)
        build(cc, src, linked, lib=a.lib)
        for how, p, pre in (("preloaded", prog, a.lib), ("linked", linked, None)):
            where = "%s %s" % (cc, how)
            mem = os.path.join(tmp, "mem.prof")
            r = run(p, {"PROF_MEMORY": "mem.prof", "PROF_QUIET": "1"}, tmp, preload=pre)
            expect_ok(r, where)
            lines = r.stderr.splitlines()
            if len(lines) != 1 or not lines[0].startswith(want):
                raise Failure("%s: stderr %r, not one line starting %r" % (where, r.stderr, want))
            meta = dict(fnptree.read_meta(mem))
            if not meta.get("incomplete", "").startswith("malloc, free, calloc, realloc are "
                                                         "the program's own"):
                raise Failure("%s: the profile is not labelled incomplete: %r" % (where, meta))
            r = subprocess.run([a.fnprof, "report", "--memory", mem], capture_output=True,
                               text=True)
            if r.returncode != 0 or "incomplete: malloc" not in r.stdout:
                raise Failure("%s: report --memory does not show the label: %r" % (where,
                                                                                   r.stdout))
            os.unlink(mem)
    # A program that keeps libc's allocator gets no label.
    prog = os.path.join(tmp, "known")
    build(compilers(False)[0], os.path.join(a.src, "known.c"), prog)
    r = run(prog, {"PROF_MEMORY": "mem.prof", "PROF_QUIET": "1"}, tmp, preload=a.lib)
    expect_ok(r, "libc's allocator")
    if r.stderr or "incomplete" in dict(fnptree.read_meta(os.path.join(tmp, "mem.prof"))):
        raise Failure("libc's allocator: stderr %r or an incomplete label" % r.stderr)
    # libfnprof.so opened with dlopen after libc (as `import fnprof` in a plain python3
    # does): libc's allocator comes first, and the line says that, not that libc's
    # functions are "libc.so.6's, not libc's".
    opener = os.path.join(tmp, "opener.c")
    with open(opener, "w") as f:
        f.write("#include <dlfcn.h>\n#include <stdlib.h>\n"
                "int main(int c, char **v) { (void)c; if (!dlopen(v[1], RTLD_NOW)) return 1;"
                " free(malloc(10)); return 0; }\n")
    prog = os.path.join(tmp, "opener")
    subprocess.run(["cc", opener, "-o", prog, "-ldl"], check=True)
    r = run(prog, {"PROF_MEMORY": "mem.prof", "PROF_QUIET": "1"}, tmp, args=[a.lib])
    expect_ok(r, "dlopen after libc", want="")
    want = ("fnprof: PROF_MEMORY: incomplete memory profile: libfnprof.so was loaded after "
            "libc (not preloaded or linked)")
    if not any(ln.startswith(want) for ln in r.stderr.splitlines()) or "not libc's" in r.stderr:
        raise Failure("dlopen after libc: stderr %r, wanted a line starting %r" % (r.stderr, want))


CASES = {"known": case_known, "threads": case_threads, "cxx": case_cxx, "fork": case_fork,
         "unset": case_unset, "format": case_format, "static": case_static,
         "own_malloc": case_own_malloc}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case", choices=sorted(CASES))
    ap.add_argument("--lib", required=True)
    ap.add_argument("--fnprof", required=True)
    ap.add_argument("--src", default=HERE)
    ap.add_argument("--static-prog")
    a = ap.parse_args()
    a.lib = os.path.abspath(a.lib)
    with tempfile.TemporaryDirectory(prefix="fnp-memory-") as tmp:
        try:
            CASES[a.case](a, tmp)
        except Failure as e:
            print("FAIL: %s: %s" % (a.case, e), file=sys.stderr)
            return 1
        except subprocess.CalledProcessError as e:
            print("FAIL: %s: build: %s" % (a.case, e), file=sys.stderr)
            return 1
    print("%s: ok" % a.case)
    return 0


if __name__ == "__main__":
    sys.exit(main())
