#!/usr/bin/env python3
"""End-to-end tests of PROF_LIBCALLS (docs/libcalls.md): programs whose library calls are
known by construction, built here with each compiler found, run with libfnprof.so, their
profiles read by the independent reader (tests/e2e/fnptree.py) and checked edge by edge.

    run_libcalls_test.py CASE --lib libfnprof.so --fnprof fnprof [--static-prog PROG]
                         [--known libknown.so]

Cases:
  calls      calls.c built PIE (lazy binding), -z now -z relro, non-PIE, -fno-plt, linked
             with -lfnprof: every library call under
             its caller with its exact count, libknown.so's and libc's, a callback nested
             under the library call that made it, a library dlopen'd by its bare name
             through the program's RUNPATH (twice, closed between); arguments passed on the
             stack (30 variadic longs, a struct by value, long double, AVX vectors) give the
             same output as without fnprof; (--static-prog) linked with libfnprof.a: one
             line says library calls need libfnprof.so, nothing else changes
  unset      without PROF_LIBCALLS: no library call in the profile, and the program's GOT
             entry of lk_add still leads to libknown.so (with it: to a trampoline)
  patterns   "libknown.so:lk_add", "getpid", "libc.so.6:*" and a filter file each record
             those calls and no other; a pattern with nothing in it says so in one line
  longjmp    sortjump.c: comparisons under qsort as the program counts them, a longjmp out
             of a callback, a thread ended by pthread_exit inside one; no exit unmatched;
             backtrace() in a callback walks out through the trampolines
  exception  throw.cc (g++ and clang++): an exception thrown by a qsort callback through
             qsort, caught by its caller; the counts and the caller of the calls made after
             the catch exact
  waits      pool.c: pthread_cond_wait's calls as the program counts them, under worker; the
             workers' time is pthread_cond_wait's, and fnprof report --no-waits takes it
             out of worker's cumtime; a profile without waits reports the same with it
  memory     mem.c with PROF_MEMORY and PROF_LIBCALLS=1: malloc and free stay fnprof's
             wrappers (no library call of that name), their blocks charged to the functions
             that made them; strdup's block to the strdup call under its caller
  refused    mprotect refused (a preloaded shim): one line naming the program, no library
             call recorded, the same output
  fork       forkscan.c: a fork while another thread hooks a new library's calls (its
             scan held in __cxa_demangle); the child's dlopen'd library gets its library
             calls recorded (the child did not inherit the scan's lock held)
  html       fnprof convert --to html of the pool's profile in headless Chromium
             (tests/views/html/cdp.py): the switch "without waits" is there, worker's
             cumtime falls below a tenth with it, the waits are marked; a profile without
             waits has no switch
Exit 0 pass, 1 fail, 77 skipped. python3 standard library only.
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


class Failure(Exception):
    pass


def compilers(cxx=False):
    names = ("g++", "clang++") if cxx else ("gcc", "clang")
    found = [c for c in names if shutil.which(c)]
    if not found:
        raise Failure("no %s compiler found" % ("C++" if cxx else "C"))
    return found


def sh(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        raise Failure("%s: exit %d\n%s" % (" ".join(cmd), r.returncode, r.stderr))
    return r


def run(prog, env_add, cwd, args=(), preload=None):
    env = clean_env()
    env.update(env_add)
    if preload:
        env["LD_PRELOAD"] = preload
    return subprocess.run([prog] + list(args), cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120)


def is_libcall(key):
    """A library call's key: (the library's file name, 0, name)."""
    f, line, _ = key
    return line == 0 and "/" not in f and f != "~" and ".so" in f


def edges(path):
    """{(caller name, callee name): ncalls} and {name: key} from the profile at path,
    through fnptree (not fnprof's reader), after checking that its tree gives its dict."""
    stats, tree = fnptree.read(path)
    if tree is None:
        raise Failure("%s: no tree" % path)
    problems = fnptree.check(stats, tree)
    if problems:
        raise Failure("%s: the tree does not give the dict: %s" % (path, problems[:3]))
    out, keys = {}, {}
    for key, (_pc, nc, _tt, _ct, callers) in stats.items():
        keys[key[2]] = key
        for c, v in callers.items():
            out[(c[2], key[2])] = v[0]
    return out, keys, stats


def expect_edges(got, want, where):
    bad = {e: (got.get(e), n) for e, n in want.items() if got.get(e) != n}
    if bad:
        raise Failure("%s: (got, expected) %r" % (where, bad))


def expect_clean(r, where, base_out=None):
    if r.returncode != 0:
        raise Failure("%s: exit %d\nstdout %s\nstderr %s" % (where, r.returncode, r.stdout,
                                                             r.stderr))
    if base_out is not None and r.stdout != base_out:
        raise Failure("%s: output changed:\n%s\nwithout fnprof:\n%s" % (where, r.stdout,
                                                                        base_out))
    for line in r.stderr.splitlines():
        if "unmatched" in line or "no matching" in line or "not recorded" in line:
            raise Failure("%s: %s" % (where, line))


# ---- calls ------------------------------------------------------------------------------

CALLS_WANT = {
    ("main", "one"): 2, ("one", "lk_add"): 6, ("main", "two"): 1, ("two", "lk_add"): 5,
    ("two", "getpid"): 2, ("main", "lk_each"): 1, ("lk_each", "cb"): 4, ("cb", "lk_add"): 4,
    ("main", "stack_args"): 1, ("stack_args", "lk_many"): 1, ("stack_args", "lk_sumv"): 1,
    ("stack_args", "lk_big_sum"): 1, ("stack_args", "lk_ld"): 1, ("stack_args", "printf"): 4,
    ("main", "vectors"): 1, ("vectors", "lk_vadd"): 1, ("vectors", "printf"): 1,
    ("main", "printf"): 1,
}
PLUGIN_WANT = {("main", "plugin_run"): 2, ("plugin_run", "lk_add"): 14,
               ("plugin_run", "getpid"): 2}


def build_known(tmp):
    libdir = os.path.join(tmp, "lib")
    os.makedirs(libdir, exist_ok=True)
    known = os.path.join(libdir, "libknown.so")
    sh(["gcc", "-O2", "-shared", "-fPIC", os.path.join(HERE, "known.c"), "-o", known])
    return libdir


def build_calls(cc, tmp, libdir, flags, name, extra_link=()):
    prog = os.path.join(tmp, name)
    sh([cc, "-g", "-O0", "-fno-builtin", "-finstrument-functions", "-w"] + flags +
       [os.path.join(HERE, "calls.c"), "-o", prog, "-L" + libdir, "-lknown", "-ldl",
        "-Wl,--enable-new-dtags,-rpath," + libdir] + list(extra_link))
    return prog


def check_calls(prog, where, tmp, a, plugin, preload=True, env_extra=None):
    mode = ["plugin"] if plugin else []
    base = run(prog, {}, tmp, mode)
    if base.returncode != 0:
        raise Failure("%s: without fnprof: exit %d %s" % (where, base.returncode, base.stderr))
    env = {"PROF_OUTPUT": "calls.prof", "PROF_LIBCALLS": "1", "PROF_QUIET": "1"}
    env.update(env_extra or {})
    r = run(prog, env, tmp, mode, preload=a.lib if preload else None)
    expect_clean(r, where, base.stdout)
    got, keys, _ = edges(os.path.join(tmp, "calls.prof"))
    want = dict(CALLS_WANT)
    if plugin:
        want.update(PLUGIN_WANT)
    expect_edges(got, want, where)
    for name, lib in (("lk_add", "libknown.so"), ("getpid", "libc.so.6"),
                      ("lk_each", "libknown.so")):
        if keys.get(name) != (lib, 0, name):
            raise Failure("%s: %s keyed %r, expected %r" % (where, name, keys.get(name),
                                                             (lib, 0, name)))
    # nothing of fnprof's own or of the loader's is a library call
    for name, key in keys.items():
        if is_libcall(key) and (name.startswith(("dl", "malloc", "free", "__cyg")) or
                                key[0].startswith("libfnprof")):
            raise Failure("%s: %r recorded as a library call" % (where, key))
    os.unlink(os.path.join(tmp, "calls.prof"))


def check_static(prog, tmp):
    """libfnprof.a: fnprof's own calls into libc share the program's GOT, so library calls
    are not recorded there: one line says so, and the program runs as without it."""
    base = run(prog, {}, tmp)
    r = run(prog, {"PROF_OUTPUT": "s.prof", "PROF_QUIET": "1", "PROF_LIBCALLS": "1"}, tmp)
    if r.returncode != 0 or r.stdout != base.stdout:
        raise Failure("libfnprof.a: exit %d, output %r" % (r.returncode, r.stdout))
    lines = [l for l in r.stderr.splitlines() if "PROF_LIBCALLS" in l]
    if len(lines) != 1 or "libfnprof.a" not in lines[0]:
        raise Failure("libfnprof.a: stderr %r" % r.stderr)
    got, keys, _ = edges(os.path.join(tmp, "s.prof"))
    if [k for k in keys.values() if is_libcall(k)] or got.get(("main", "two")) != 1:
        raise Failure("libfnprof.a: %r" % sorted(keys))


def case_calls(a, tmp):
    libdir = build_known(tmp)
    sh(["gcc", "-g", "-O0", "-finstrument-functions", "-fPIC", "-shared",
        os.path.join(HERE, "plugin.c"), "-o", os.path.join(libdir, "libplugin.so"),
        "-L" + libdir, "-lknown"])
    variants = [("pie", []), ("now", ["-Wl,-z,now,-z,relro"]), ("nopie", ["-no-pie"]),
                ("noplt", ["-fno-plt"])]
    for cc in compilers():
        for name, flags in variants:
            prog = build_calls(cc, tmp, libdir, flags, "calls-%s-%s" % (cc, name))
            check_calls(prog, "%s %s" % (cc, name), tmp, a, plugin=True)
        lib_dir = os.path.dirname(os.path.realpath(a.lib))
        prog = build_calls(cc, tmp, libdir, [], "calls-%s-linked" % cc,
                           ["-L" + lib_dir, "-Wl,-rpath," + lib_dir, "-lfnprof"])
        check_calls(prog, "%s linked -lfnprof" % cc, tmp, a, plugin=True, preload=False)
    if a.static_prog:
        check_static(a.static_prog, tmp)


def case_unset(a, tmp):
    libdir = build_known(tmp)
    prog = build_calls("gcc", tmp, libdir, [], "calls")
    r = run(prog, {"PROF_OUTPUT": "u.prof", "PROF_QUIET": "1"}, tmp, ["got"], preload=a.lib)
    expect_clean(r, "unset")
    if "lk_add's slot leads to libknown.so" not in r.stdout:
        raise Failure("unset: the GOT was written: %s" % r.stdout)
    got, keys, _ = edges(os.path.join(tmp, "u.prof"))
    calls = [k for k in keys.values() if is_libcall(k)]
    if calls:
        raise Failure("unset: library calls recorded without PROF_LIBCALLS: %s" % calls)
    if got.get(("main", "two")) != 1:
        raise Failure("unset: the program's own calls are not there: %r" % got)
    # the check above can fail: with PROF_LIBCALLS the entry leads elsewhere
    r = run(prog, {"PROF_OUTPUT": "u.prof", "PROF_QUIET": "1", "PROF_LIBCALLS": "1"}, tmp,
            ["got"], preload=a.lib)
    if "lk_add's slot leads to libknown.so" in r.stdout:
        raise Failure("unset: with PROF_LIBCALLS=1 the GOT still leads to libknown.so")


def recorded_calls(tmp, prog, a, spec, where):
    r = run(prog, {"PROF_OUTPUT": "p.prof", "PROF_QUIET": "1", "PROF_LIBCALLS": spec}, tmp,
            preload=a.lib)
    if r.returncode != 0:
        raise Failure("%s: exit %d %s" % (where, r.returncode, r.stderr))
    _, keys, _ = edges(os.path.join(tmp, "p.prof"))
    return {k[2] for k in keys.values() if is_libcall(k)}, r


def case_patterns(a, tmp):
    libdir = build_known(tmp)
    prog = build_calls("gcc", tmp, libdir, [], "calls")
    flt = os.path.join(tmp, "libcalls.filter")
    with open(flt, "w") as f:
        f.write("SCOREP_REGION_NAMES_BEGIN\n  EXCLUDE lk_*\n  INCLUDE lk_each\n"
                "SCOREP_REGION_NAMES_END\n")
    lk = {"lk_add", "lk_many", "lk_sumv", "lk_big_sum", "lk_ld", "lk_vadd", "lk_each"}
    cases = [
        ("libknown.so:lk_add", {"lk_add"}),
        ("getpid", {"getpid"}),
        ("libknown.so:lk_a*,lk_e*;getpid", {"lk_add", "lk_each", "getpid"}),
        ("libc.so.6:*", {"getpid", "printf"}),
        (flt, {"getpid", "printf", "lk_each"}),
        ("1", lk | {"getpid", "printf"}),
    ]
    for spec, want in cases:
        got, _ = recorded_calls(tmp, prog, a, spec, "PROF_LIBCALLS=%s" % spec)
        got.discard("strcmp")  # main's own, from libc
        if spec in ("libc.so.6:*", flt, "1"):
            want = want | {"strcmp"}
            got.add("strcmp")
        if got != want:
            raise Failure("PROF_LIBCALLS=%s: recorded %s, expected %s" % (spec, sorted(got),
                                                                          sorted(want)))
    r = run(prog, {"PROF_OUTPUT": "p.prof", "PROF_QUIET": "1", "PROF_LIBCALLS": ";,"}, tmp,
            preload=a.lib)
    lines = [l for l in r.stderr.splitlines() if "PROF_LIBCALLS" in l]
    if r.returncode != 0 or len(lines) != 1 or not lines[0].startswith("fnprof: "):
        raise Failure("PROF_LIBCALLS=';,': exit %d, stderr %r" % (r.returncode, r.stderr))


# ---- longjmp, exception -------------------------------------------------------------------

def compared(r, where):
    """(rounds, comparisons) as the program printed them."""
    m = re.search(r"rounds (\d+) compared (\d+)", r.stdout)
    if not m:
        raise Failure("%s: output %r" % (where, r.stdout))
    return int(m.group(1)), int(m.group(2))


def case_longjmp(a, tmp):
    for cc in compilers():
        prog = os.path.join(tmp, "sortjump-" + cc)
        sh([cc, "-g", "-O0", "-finstrument-functions", "-w", os.path.join(HERE, "sortjump.c"),
            "-o", prog, "-pthread"])
        for spec in ("1", "qsort,getpid,pthread_exit,pthread_create,pthread_join,printf"):
            where = "%s PROF_LIBCALLS=%s" % (cc, spec)
            r = run(prog, {"PROF_OUTPUT": "j.prof", "PROF_LIBCALLS": spec}, tmp, preload=a.lib)
            expect_clean(r, where)
            k, n = compared(r, where)
            if "unwound 1" not in r.stdout:
                raise Failure("%s: backtrace() in a qsort callback did not get back to the "
                              "caller of qsort: %s" % (where, r.stdout))
            got, _, _ = edges(os.path.join(tmp, "j.prof"))
            expect_edges(got, {
                ("sort_all", "qsort"): k, ("qsort", "by_value"): n,
                ("sort_and_leave", "qsort"): k, ("qsort", "jumping"): 5 * k,
                ("sort_and_leave", "getpid"): k, ("sort_and_end", "qsort"): 1,
                ("qsort", "exiting"): 3, ("exiting", "pthread_exit"): 1,
                ("main", "pthread_create"): 1, ("main", "pthread_join"): 1,
                ("main", "sort_all"): k, ("main", "sort_and_leave"): k,
            }, where)
            stray = [e for e in got if e[1] == "getpid" and e[0] != "sort_and_leave"]
            if stray:
                raise Failure("%s: getpid after the jump under %s" % (where, stray))


def case_exception(a, tmp):
    for cxx in compilers(cxx=True):
        prog = os.path.join(tmp, "throw-" + cxx)
        sh([cxx, "-g", "-O0", "-finstrument-functions", "-w", os.path.join(HERE, "throw.cc"),
            "-o", prog])
        base = run(prog, {}, tmp)
        r = run(prog, {"PROF_OUTPUT": "t.prof", "PROF_LIBCALLS": "1"}, tmp, preload=a.lib)
        expect_clean(r, cxx, base.stdout)
        k, n = compared(r, cxx)
        got, _, _ = edges(os.path.join(tmp, "t.prof"))
        expect_edges(got, {
            ("main", "sort_catch()"): k, ("sort_catch()", "qsort"): k, ("qsort", "throwing"): n,
            ("throwing", "__cxa_throw"): k, ("sort_catch()", "getpid"): k,
            ("main", "printf"): 1,
        }, cxx)
        stray = [e for e in got if e[1] == "getpid" and e[0] != "sort_catch()"]
        if stray:
            raise Failure("%s: getpid after the catch under %s" % (cxx, stray))


# ---- waits --------------------------------------------------------------------------------

def report_row(a, path, name, *opts):
    """(tottime, cumtime) of name in fnprof report's table (all rows, seconds)."""
    r = sh([a.fnprof, "report", "--no-meta", "--limit", "0", "--unit", "us"] + list(opts) +
           [path])
    for line in r.stdout.splitlines():
        if line.endswith("(%s)" % name):
            f = line.split()
            return float(f[1]), float(f[3])
    raise Failure("fnprof report %s: no row for %s:\n%s" % (" ".join(opts), name, r.stdout))


def case_waits(a, tmp):
    prog = os.path.join(tmp, "pool")
    sh(["gcc", "-g", "-O2", "-finstrument-functions", os.path.join(HERE, "pool.c"), "-o", prog,
        "-pthread"])
    r = run(prog, {"PROF_OUTPUT": "w.prof", "PROF_LIBCALLS": "1"}, tmp, preload=a.lib)
    expect_clean(r, "pool")
    m = re.search(r"waits (\d+)", r.stdout)
    if not m:
        raise Failure("pool: output %r" % r.stdout)
    path = os.path.join(tmp, "w.prof")
    got, _, stats = edges(path)
    expect_edges(got, {("worker", "pthread_cond_wait"): int(m.group(1)),
                       ("main", "pthread_join"): 3, ("main", "usleep"): 13,
                       ("main", "submit"): 12, ("submit", "pthread_cond_signal"): 12,
                       ("main", "pthread_create"): 3, ("worker", "task"): 12}, "pool")
    # Where the workers' time is: not their own. The tasks take microseconds, the waits
    # a quarter of a second: a factor of 10 is no timing bound, it is which function is
    # charged.
    tt, ct = report_row(a, path, "worker")
    wt, wc = report_row(a, path, "pthread_cond_wait")
    if not (ct > 0 and tt < ct / 10 and wt > ct / 2):
        raise Failure("pool: worker tottime %.0f us cumtime %.0f us, pthread_cond_wait "
                      "tottime %.0f us: the wait is not charged to the wait" % (tt, ct, wt))
    ntt, nct = report_row(a, path, "worker", "--no-waits")
    nwt, nwc = report_row(a, path, "pthread_cond_wait", "--no-waits")
    if not (nct < ct / 10 and nwt == 0 and nwc == 0 and abs(ntt - tt) <= 1):
        raise Failure("pool: --no-waits: worker %.0f/%.0f us (with waits %.0f/%.0f), "
                      "pthread_cond_wait %.0f/%.0f us" % (ntt, nct, tt, ct, nwt, nwc))
    mt, mc = report_row(a, path, "main", "--no-waits")
    if mc > report_row(a, path, "main")[1] / 10:
        raise Failure("pool: --no-waits: main's usleep and pthread_join stay in its "
                      "cumtime (%.0f us)" % mc)
    # With no wait in it (several threads: the {process} root too), the same report.
    r = run(prog, {"PROF_OUTPUT": "n.prof", "PROF_LIBCALLS": "getpid", "PROF_QUIET": "1"}, tmp,
            preload=a.lib)
    expect_clean(r, "pool without waits")
    path = os.path.join(tmp, "n.prof")
    plain, without = [sh([a.fnprof, "report", "--no-meta", "--limit", "0", "--callers",
                          "--callees"] + extra + [path]).stdout for extra in ([], ["--no-waits"])]
    if plain != without:
        raise Failure("pool: --no-waits changed a profile without waits:\n%s\n%s" % (plain,
                                                                                   without))


# ---- memory -------------------------------------------------------------------------------

def mem_rows(path):
    stats, tree = fnptree.read(path)
    if tree is None:
        raise Failure("%s: no tree" % path)
    out = {}
    for n in tree.nodes:
        allocs, frees, freed, _peak = n.mem
        parent = n.parent.key[2] if n.parent is not None else None
        row = out.setdefault((parent, n.key[2]), [0, 0, 0])
        row[0] += allocs
        row[1] += tree.self_value(n)
        row[2] += frees
    return out, {k[2]: k for k in stats}


def case_memory(a, tmp):
    prog = os.path.join(tmp, "mem")
    sh(["gcc", "-g", "-O0", "-fno-builtin", "-finstrument-functions",
        os.path.join(HERE, "mem.c"), "-o", prog])
    for spec in ("1", None):
        env = {"PROF_MEMORY": "m.prof", "PROF_QUIET": "1"}
        if spec:
            env["PROF_LIBCALLS"] = spec
        r = run(prog, env, tmp, preload=a.lib)
        expect_clean(r, "memory")
        rows, keys = mem_rows(os.path.join(tmp, "m.prof"))
        where = "PROF_MEMORY, PROF_LIBCALLS=%s" % spec
        if rows.get(("main", "f_alloc")) != [2, 300, 1]:
            raise Failure("%s: f_alloc %r" % (where, rows.get(("main", "f_alloc"))))
        for name in ("malloc", "free"):
            if name in keys:
                raise Failure("%s: %r in the profile" % (where, keys[name]))
        want_dup = [0, 0, 0] if spec else [1, 6, 0]
        if rows.get(("main", "f_dup")) != want_dup:
            raise Failure("%s: f_dup %r, expected %r" % (where, rows.get(("main", "f_dup")),
                                                         want_dup))
        if spec and rows.get(("f_dup", "strdup")) != [1, 6, 0]:
            raise Failure("%s: strdup under f_dup %r" % (where, rows.get(("f_dup", "strdup"))))


# ---- refused ------------------------------------------------------------------------------

def case_refused(a, tmp):
    libdir = build_known(tmp)
    shim = os.path.join(tmp, "noprotect.so")
    sh(["gcc", "-O2", "-shared", "-fPIC", os.path.join(HERE, "noprotect.c"), "-o", shim])
    prog = build_calls("gcc", tmp, libdir, ["-Wl,-z,now,-z,relro"], "calls-now")
    base = run(prog, {}, tmp)
    r = run(prog, {"PROF_OUTPUT": "r.prof", "PROF_QUIET": "1", "PROF_LIBCALLS": "1"}, tmp,
            preload=a.lib + ":" + shim)
    if r.returncode != 0 or r.stdout != base.stdout:
        raise Failure("refused: exit %d, output %r" % (r.returncode, r.stdout))
    lines = [l for l in r.stderr.splitlines() if "not instrumented, so" not in l]
    if len(lines) != 1 or not re.match(r"fnprof: PROF_LIBCALLS: .*calls-now: .*read-only.*"
                                       r"not recorded", lines[0]):
        raise Failure("refused: stderr %r" % r.stderr)
    _, keys, _ = edges(os.path.join(tmp, "r.prof"))
    calls = [k for k in keys.values() if is_libcall(k)]
    if calls:
        raise Failure("refused: library calls recorded: %s" % calls)


# ---- html ---------------------------------------------------------------------------------

def case_fork(a, tmp):
    libdir = build_known(tmp)
    src = os.path.join(HERE, "forkscan_lib.c")
    sh(["gcc", "-O2", "-shared", "-fPIC", "-DSIDE", src, "-o", os.path.join(libdir, "libside.so")])
    sh(["gcc", "-g", "-O0", "-finstrument-functions", "-fPIC", "-shared", src, "-o",
        os.path.join(libdir, "libscanned.so"), "-L" + libdir, "-lside",
        "-Wl,-rpath," + libdir])
    sh(["gcc", "-g", "-O0", "-finstrument-functions", "-fPIC", "-shared",
        os.path.join(HERE, "plugin.c"), "-o", os.path.join(libdir, "libplugin.so"),
        "-L" + libdir, "-lknown", "-Wl,-rpath," + libdir])
    prog = os.path.join(tmp, "forkscan")
    sh(["gcc", "-g", "-O0", "-finstrument-functions", "-w", "-rdynamic",
        os.path.join(HERE, "forkscan.c"), "-o", prog, "-pthread", "-ldl",
        "-Wl,--enable-new-dtags,-rpath," + libdir])
    try:
        r = run(prog, {"PROF_OUTPUT": "fork.%p.prof", "PROF_LIBCALLS": "1", "PROF_QUIET": "1"},
                tmp, preload=a.lib)
    except subprocess.TimeoutExpired:
        raise Failure("forkscan: hung (a lock held at the fork by the scanning thread, in "
                      "the child or in the fork's own handlers)")
    expect_clean(r, "forkscan")
    if "scanned 42" not in r.stdout or "child 0" not in r.stdout:
        raise Failure("forkscan: output %r" % r.stdout)
    profs = [f for f in os.listdir(tmp) if f.startswith("fork.") and f.endswith(".prof")]
    if len(profs) != 2:
        raise Failure("forkscan: profiles %r" % profs)
    child = None
    for f in profs:
        got, _, _ = edges(os.path.join(tmp, f))
        if ("main", "loader") not in got and ("main", "child") in got:
            child = got
    if child is None:
        raise Failure("forkscan: no child's profile among %r" % profs)
    expect_edges(child, {("child", "plugin_run"): 1, ("plugin_run", "lk_add"): 7,
                         ("plugin_run", "getpid"): 1}, "forkscan's child")


def case_html(a, tmp):
    sys.path.insert(0, os.path.join(HERE, "..", "views", "html"))
    import cdp  # noqa: E402  pylint: disable=import-outside-toplevel
    exe = cdp.Browser.find()
    if not exe:
        raise Skip("no chromium: the page is not drawn here (install chromium)")
    prog = os.path.join(tmp, "pool")
    sh(["gcc", "-g", "-O2", "-finstrument-functions", os.path.join(HERE, "pool.c"), "-o", prog,
        "-pthread"])
    pages = {}
    for spec in ("1", "getpid"):
        r = run(prog, {"PROF_OUTPUT": "h.prof", "PROF_QUIET": "1", "PROF_LIBCALLS": spec}, tmp,
                preload=a.lib)
        expect_clean(r, "html")
        page = os.path.join(tmp, "pool-%s.html" % spec)
        sh([a.fnprof, "convert", os.path.join(tmp, "h.prof"), "--to", "html", "-o", page])
        pages[spec] = page
    cell = """(() => {
        for (const tr of document.querySelectorAll('#table tbody tr'))
            if (tr.querySelector('.fn').title.endsWith('(%s)'))
                return +tr.children[3].textContent;
        return null; })()"""
    with cdp.Browser(exe) as b:
        p = b.page()
        p.navigate("file://" + pages["1"])
        if p.problems():
            raise Failure("html: %s" % p.problems())
        if p.eval("document.getElementById('waitsw').hidden"):
            raise Failure("html: no switch for the waits")
        before = p.eval(cell % "worker")
        tags = p.eval("[...document.querySelectorAll('#table .tag')].map((t) => "
                      "t.closest('td').title)")
        if not any(t.endswith("(pthread_cond_wait)") for t in tags):
            raise Failure("html: pthread_cond_wait not marked as a wait: %r" % tags)
        p.eval("document.getElementById('nowait').click()")
        after = p.eval(cell % "worker")
        if before is None or after is None or not (before > 0 and after < before / 10):
            raise Failure("html: worker's cumtime %r, without waits %r" % (before, after))
        if p.problems():
            raise Failure("html: after the switch: %s" % p.problems())
        p.navigate("file://" + pages["getpid"])
        if not p.eval("document.getElementById('waitsw').hidden"):
            raise Failure("html: a switch for waits in a profile that has none")


class Skip(Exception):
    pass


CASES = {"calls": case_calls, "unset": case_unset, "patterns": case_patterns,
         "longjmp": case_longjmp, "exception": case_exception, "waits": case_waits,
         "memory": case_memory, "refused": case_refused, "html": case_html,
         "fork": case_fork}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case", choices=sorted(CASES))
    ap.add_argument("--lib", required=True)
    ap.add_argument("--fnprof", required=True)
    ap.add_argument("--static-prog")
    a = ap.parse_args()
    a.lib = os.path.abspath(a.lib)
    libc = os.confstr("CS_GNU_LIBC_VERSION") if "CS_GNU_LIBC_VERSION" in os.confstr_names else ""
    if os.uname().machine != "x86_64" or not libc.startswith("glibc"):
        print("SKIPPED: library calls are recorded on x86_64 glibc only")
        return SKIP
    tmp = tempfile.mkdtemp(prefix="fnp-libcalls-")
    try:
        CASES[a.case](a, tmp)
    except Skip as e:
        shutil.rmtree(tmp)
        print("SKIPPED: %s" % e)
        return SKIP
    except Failure as e:
        print("FAIL: %s" % e)
        print("(files kept in %s)" % tmp)
        return 1
    shutil.rmtree(tmp)
    print("ok: %s" % a.case)
    return 0


if __name__ == "__main__":
    sys.exit(main())
# SPDX-License-Identifier: MIT
