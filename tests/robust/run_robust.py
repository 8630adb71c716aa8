#!/usr/bin/env python3
"""Robustness tests: fnprof in programs that use threads, fork, exec, longjmp and C++
exceptions. Builds one program of progs/, runs it, checks its profiles and the host's
behaviour.

    run_robust.py --case fork --cc gcc --opt=-O2 --mode link \\
                  --lib-dir build/lib --source-root . --workdir /tmp/fork

Every case checks the host's behaviour: the program built with -finstrument-functions and
fnprof (linked, preloaded, or compiled in under a sanitizer) prints exactly what the plain
build prints, with PROF_OUTPUT unset and set, and exits with the same status; with
PROF_OUTPUT unset nothing is on stderr and no file is written; with it set, stderr holds
only "fnprof: wrote ..." lines (any other fnprof line, such as unmatched exits, fails),
one per profile. Then each profile loads (marshal and pstats, e2e/compare.py's shape and
invariant checks), names the functions by (absolute source, line of the name, name), and
has exactly the expected functions and caller edges with exactly the expected calls and
primitive calls. The expected numbers are derived in this file from the programs' loops.

--mode link: -lfnprof with an rpath; preload: LD_PRELOAD=libfnprof.so; tsan / asan: the
runtime's sources compiled with -fsanitize=thread / address (and without
-finstrument-functions) into the program (--runtime-objs, made by --build-runtime from
--sources, the list tests/robust.cmake takes from libfnprof.a's targets), with
TSAN_OPTIONS / ASAN_OPTIONS that turn any report into exit status 66. A sanitizer that
cannot run on this machine makes the test exit 77 (ctest: skipped) with the reason.

Exit 0 pass, 1 fail, 2 broken setup, 77 skipped. python3 standard library only.
"""

import argparse
import glob
import os
import re
import shlex
import resource
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "e2e"))
sys.dont_write_bytecode = True

import compare  # noqa: E402  (e2e: load_pstats, check_invariants, decl_lines)
from run_case import clean_env, show  # noqa: E402  (e2e: the same environment and echo)

PROGS = os.path.join(HERE, "progs")
ROOT_KEY = ("~", 0, "<process>")
ROOT = "<process>"
TIMEOUT = 240  # seconds, per command
SAN_STATUS = 66  # what a sanitizer report turns the exit status into
SKIP = 77

SAN_OPTIONS = {
    "tsan": {"TSAN_OPTIONS": "halt_on_error=1 exitcode=%d" % SAN_STATUS},
    "asan": {"ASAN_OPTIONS": "halt_on_error=1 exitcode=%d detect_leaks=1" % SAN_STATUS},
}
SAN_FLAG = {"tsan": "thread", "asan": "address"}


class Failure(Exception):
    """fnprof got something wrong: the message says what."""


class SetupError(Exception):
    """The test cannot be set up (compiler, program): not fnprof's fault."""


class Skip(Exception):
    """The test cannot run on this machine (a sanitizer that does not start)."""


class AtLeast:
    """An expected call count known only from below: n or more calls, all primitive."""

    def __init__(self, n):
        self.n = n

    def matches(self, got):
        return got is not None and got[0] >= self.n and got[0] == got[1]

    def __repr__(self):
        return ">=%d" % self.n


# ---- running commands ------------------------------------------------------------------

class Result:
    def __init__(self, status, out, err, pid, wall):
        self.status, self.out, self.err, self.pid, self.wall = status, out, err, pid, wall


def no_core_ignore(ignore):
    """For Popen's preexec_fn: no core files (a crash test would leave them in the cwd),
    and the signals in ignore ignored, as nohup does for SIGHUP."""
    def setup():
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        for sig in ignore:
            signal.signal(sig, signal.SIG_IGN)
    return setup


def run(cmd, cwd=None, env_extra=None, quiet=False, ignore=()):
    """Runs cmd with stdin closed; returns a Result (pid: the process started)."""
    if not quiet:
        show(cmd, env_extra, cwd)
    env = clean_env()
    env.update(env_extra or {})
    start = time.monotonic()
    p = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         preexec_fn=no_core_ignore(ignore))
    try:
        out, err = p.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        raise Failure("%s: still running after %d s" % (cmd[0], TIMEOUT))
    return Result(p.returncode, out.decode("utf-8", "replace"),
                  err.decode("utf-8", "replace"), p.pid, time.monotonic() - start)


def excerpt(text, limit=3000):
    return text if len(text) <= limit else text[:limit] + "\n... (%d more bytes)" % (
        len(text) - limit)


# ---- sanitizers --------------------------------------------------------------------------

def sanitizer_prefix(cc, san, workdir):
    """[] or ["setarch", arch, "-R"]: what a program built with the sanitizer needs to
    start on this machine. Raises Skip when it cannot start at all (TSan needs a memory
    layout some kernels' mmap randomisation breaks: vm.mmap_rnd_bits > 28)."""
    src = os.path.join(workdir, "probe.c")
    exe = os.path.join(workdir, "probe-" + san)
    with open(src, "w") as f:
        f.write("#include <pthread.h>\nstatic void *w(void *a) { return a; }\n"
                "int main(void) { pthread_t t; pthread_create(&t, 0, w, 0); "
                "return pthread_join(t, 0); }\n")
    r = run([cc, "-fsanitize=" + SAN_FLAG[san], "-pthread", src, "-o", exe], quiet=True)
    if r.status != 0:
        raise Skip("%s cannot build a -fsanitize=%s program: %s"
                   % (cc, SAN_FLAG[san], r.err.strip()))
    env = SAN_OPTIONS[san]
    r = run([exe], env_extra=env, quiet=True)
    if r.status == 0 and not r.err:
        return []
    first = r.err.strip()
    arch = os.uname().machine
    r = run(["setarch", arch, "-R", exe], env_extra=env, quiet=True)
    if r.status == 0 and not r.err:
        print("run_robust: -fsanitize=%s programs need setarch %s -R here" % (SAN_FLAG[san],
                                                                             arch))
        return ["setarch", arch, "-R"]
    raise Skip("a -fsanitize=%s program does not run on this machine (kernel %s, "
               "vm.mmap_rnd_bits %s), even under setarch -R:\n%s\n%s"
               % (SAN_FLAG[san], os.uname().release, read_or("/proc/sys/vm/mmap_rnd_bits"),
                  first, r.err.strip()))


def read_or(path, default="?"):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return default


def runtime_flags(root, san, opt):
    return ["-g", opt, "-std=gnu11", "-fno-instrument-functions", "-fsanitize=" + SAN_FLAG[san],
            "-fno-omit-frame-pointer", "-fvisibility=hidden", "-D_GNU_SOURCE",
            "-DFNP_SYMBOLIZER_LINKED", '-DFNPROF_VERSION_STRING="robust"',
            "-I", os.path.join(root, "include"), "-I", os.path.join(root, "runtime"),
            "-I", os.path.join(root, "profile"), "-I", os.path.join(root, "symbolizer"),
            "-I", "/usr/include/libdwarf"]


def build_runtime(args):
    """Compiles the runtime's sources with the sanitizer into --workdir (the objects the
    sanitizer cases link), two at a time."""
    root = os.path.abspath(args.source_root)
    out = os.path.abspath(args.workdir)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    sanitizer_prefix(args.cc, args.mode, out)
    flags = runtime_flags(root, args.mode, args.opt)
    jobs = []
    for rel in args.sources:
        obj = os.path.join(out, rel.replace("/", "_")[:-2] + ".o")
        cmd = [args.cc, "-c"] + flags + [os.path.join(root, rel), "-o", obj]
        show(cmd)
        jobs.append(subprocess.Popen(cmd, stdin=subprocess.DEVNULL))
        if len(jobs) >= 2:
            if jobs.pop(0).wait():
                raise SetupError("compiling the runtime with -fsanitize failed")
    if any(j.wait() for j in jobs):
        raise SetupError("compiling the runtime with -fsanitize failed")
    print("run_robust: %d runtime objects in %s" % (len(args.sources), out))


# ---- building the test programs ----------------------------------------------------------

class Ctx:
    """What a case needs: how to build and run its programs, where to put files."""

    def __init__(self, args):
        self.args = args
        self.cc = shutil.which(args.cc)
        if self.cc is None:
            raise SetupError("compiler %r not found" % args.cc)
        self.mode = args.mode
        self.lib_dir = os.path.abspath(args.lib_dir)
        self.libfnprof = os.path.join(self.lib_dir, "libfnprof.so")
        if self.mode in ("link", "preload") and not os.path.isfile(self.libfnprof):
            raise Failure("no %s: build fnprof first" % self.libfnprof)
        self.workdir = os.path.abspath(args.workdir)
        shutil.rmtree(self.workdir, ignore_errors=True)
        os.makedirs(self.workdir)
        self.prefix = []
        self.objs = []
        if self.mode in SAN_OPTIONS:
            self.prefix = sanitizer_prefix(self.cc, self.mode, self.workdir)
            objs_dir = os.path.abspath(args.runtime_objs or "")
            self.objs = sorted(glob.glob(os.path.join(objs_dir, "*.o")))
            if len(self.objs) != len(args.sources):
                raise SetupError("%d runtime objects in %s, want %d: run --build-runtime "
                                 "(the ctest fixture) first"
                                 % (len(self.objs), objs_dir, len(args.sources)))
        self.cflags = shlex.split(args.cflags or "")
        self.runs = 0

    def build(self, prog, fnprof=True, extra=(), shared=False):
        """progs/PROG built plain (fnprof=False: no -finstrument-functions, no fnprof) or
        instrumented with fnprof as --mode says; compiled from progs/ by relative name.
        shared: a library for dlopen, which gets the hooks from the program.
        Returns the executable's path."""
        src = prog if "." in prog else prog + ".c"
        exe = os.path.join(self.workdir, os.path.splitext(src)[0] + ("" if fnprof else ".plain"))
        cmd = [self.cc, "-g", self.args.opt] + self.cflags + list(extra) + ["-pthread"]
        libs = []
        if self.mode in SAN_OPTIONS:
            # The plain build is sanitized too: a report then is the program's own fault.
            cmd += ["-fsanitize=" + SAN_FLAG[self.mode], "-fno-omit-frame-pointer"]
        if shared:
            cmd += ["-shared", "-fPIC"]
        if fnprof:
            cmd.append("-finstrument-functions")
            if shared:
                pass
            elif self.mode == "link":
                libs = ["-L", self.lib_dir, "-Wl,-rpath," + self.lib_dir, "-lfnprof"]
            elif self.mode in SAN_OPTIONS:
                libs = self.objs + ["-ldwarf", "-lelf", "-lz", "-lstdc++", "-ldl"]
        cmd += [src, "-o", exe] + libs
        r = run(cmd, cwd=PROGS)
        sys.stdout.write(r.out + r.err)
        if r.status != 0:
            raise SetupError("compiling %s failed (status %d)" % (src, r.status))
        if fnprof and self.mode == "link" and not shared:
            d = run(["readelf", "-d", exe], quiet=True)
            if "libfnprof.so" not in d.out:
                raise SetupError("%s does not need libfnprof.so: link mode tests nothing" % exe)
        return exe

    def loader_env(self):
        env = dict(SAN_OPTIONS.get(self.mode, {}))
        if self.mode == "preload":
            env["LD_PRELOAD"] = self.libfnprof
        return env

    def new_run_dirs(self):
        """(cwd, outdir): an empty directory to run in and one for the profiles."""
        self.runs += 1
        cwd = os.path.join(self.workdir, "run%d" % self.runs)
        outdir = os.path.join(self.workdir, "out%d" % self.runs)
        os.makedirs(cwd)
        os.makedirs(outdir)
        return cwd, outdir

    def exec_(self, cmd, cwd, env_extra=None, ignore=()):
        return run(self.prefix + cmd, cwd, env_extra, ignore=ignore)


# ---- the host's behaviour ------------------------------------------------------------------

def reference(ctx, plain, argv, ignore=()):
    """The plain build's stdout and status: what fnprof must not change."""
    cwd, _ = ctx.new_run_dirs()
    r = ctx.exec_([plain] + argv, cwd, SAN_OPTIONS.get(ctx.mode), ignore)
    if r.err:
        raise SetupError("the plain build writes to stderr (exit %d):\n%s"
                         % (r.status, excerpt(r.err)))
    if r.status == SAN_STATUS and ctx.mode in SAN_OPTIONS:
        raise SetupError("the plain build fails under the sanitizer")
    return r


def same_as_plain(what, r, ref, mode):
    if r.status == SAN_STATUS and mode in SAN_OPTIONS:
        raise Failure("%s: the sanitizer reported an error (exit status %d):\n%s"
                      % (what, r.status, excerpt(r.err, 6000)))
    if r.status != ref.status:
        raise Failure("%s: exit status %d, the plain build's is %d\nstderr:\n%s"
                      % (what, r.status, ref.status, excerpt(r.err)))
    if r.out != ref.out:
        raise Failure("%s: stdout differs from the plain build's:\n--- plain\n%s\n--- got\n%s"
                      % (what, excerpt(ref.out), excerpt(r.out)))


def run_unset(ctx, exe, argv, ref, ignore=()):
    """fnprof loaded, PROF_OUTPUT unset: same stdout and status, silent, no file."""
    cwd, outdir = ctx.new_run_dirs()
    r = ctx.exec_([exe] + argv, cwd, ctx.loader_env(), ignore)
    same_as_plain("PROF_OUTPUT unset", r, ref, ctx.mode)
    if r.err:
        raise Failure("PROF_OUTPUT unset, yet stderr is not empty:\n%s" % excerpt(r.err))
    if os.listdir(cwd):
        raise Failure("PROF_OUTPUT unset, yet files were written: %s" % os.listdir(cwd))
    print("run_robust: PROF_OUTPUT unset: same stdout and status, silent, no file")
    return r


def run_profiled(ctx, exe, argv, ref, output="out.prof", relative=False, ignore=(),
                 rewritten=()):
    """PROF_OUTPUT=<outdir>/<output>: same stdout and status, stderr only "fnprof: wrote"
    lines, nothing in the cwd. relative: PROF_OUTPUT=<output>, run in outdir. Returns
    (Result, outdir, set of the files written, absolute)."""
    cwd, outdir = ctx.new_run_dirs()
    env = ctx.loader_env()
    env["PROF_OUTPUT"] = os.path.join(outdir, output)
    if relative:
        cwd, env["PROF_OUTPUT"] = outdir, output
    r = ctx.exec_([exe] + argv, cwd, env, ignore)
    sys.stdout.write(excerpt(r.err, 1500))
    same_as_plain("PROF_OUTPUT set", r, ref, ctx.mode)
    bad = [line for line in r.err.splitlines() if not line.startswith("fnprof:")]
    if bad:
        raise Failure("stderr has lines not from fnprof:\n%s" % excerpt("\n".join(bad)))
    wrote = {}
    for line in r.err.splitlines():
        m = re.match(r"fnprof: wrote (\S+) \(", line)
        if not m:
            raise Failure("fnprof reported a problem: %r" % line)
        wrote[m.group(1)] = wrote.get(m.group(1), 0) + 1
    if cwd != outdir and os.listdir(cwd):
        raise Failure("files written in the program's cwd: %s" % os.listdir(cwd))
    files = {os.path.join(outdir, f) for f in os.listdir(outdir)}
    if set(wrote) != files or any(n != (2 if os.path.basename(f) in rewritten else 1)
                                  for f, n in wrote.items()):
        raise Failure("the \"fnprof: wrote\" lines do not match the files written:\n"
                      "lines: %s\nfiles: %s" % (sorted(wrote.items()), sorted(files)))
    return r, outdir, files


# ---- profiles --------------------------------------------------------------------------

def check_profile(path, spec, label, sources):
    """Raises Failure unless the pstats file at path has exactly the functions and caller
    edges of spec ({name: (calls, {caller name: calls})}, calls (ncalls, pcalls) or
    AtLeast; ROOT names ('~', 0, '<process>')); the keys of the program's functions name
    the absolute path of one of sources and the line of the name."""
    stats, problems = compare.load_pstats(path)
    if stats is None:
        raise Failure("%s: %s does not load:\n  %s" % (label, path, "\n  ".join(problems)))
    problems += compare.check_invariants(stats)
    names = {}
    for key in stats:
        if key[0] == "~":
            if key != ROOT_KEY:
                problems.append("unknown synthetic key %r" % (key,))
            name = ROOT
        else:
            name = key[2]
            base = name.split("(")[0]
            src = next((s for s in sources if base in compare.decl_lines(s)), None)
            if src is None:
                problems.append("%s: no function %s in %s" % (compare.fmt_key(key), base,
                                                               sources))
            elif key[0] not in (src, os.path.realpath(src)):
                problems.append("%s: file %r, want %r" % (name, key[0], src))
            elif key[1] != compare.decl_lines(src)[base]:
                problems.append("%s: line %d, want %d" % (name, key[1],
                                                          compare.decl_lines(src)[base]))
        if name in names:
            problems.append("two keys named %s: %r and %r" % (name, names[name], key))
        names[name] = key
    got_f, got_e = {}, {}
    for name, key in names.items():
        pcalls, ncalls, _, _, callers = stats[key]
        got_f[name] = (ncalls, pcalls)
        for caller, (e_n, e_p, _, _) in callers.items():
            cname = ROOT if caller[0] == "~" else caller[2]
            got_e[(cname, name)] = (e_n, e_p)
    want_f = {name: calls for name, (calls, _) in spec.items()}
    want_e = {(caller, name): calls for name, (_, callers) in spec.items()
              for caller, calls in callers.items()}
    rows = []
    for name in sorted(set(want_f) | set(got_f)):
        rows.append(("function", name, want_f.get(name), got_f.get(name)))
    for edge in sorted(set(want_e) | set(got_e), key=lambda e: (e[1], e[0])):
        rows.append(("edge", "%s -> %s" % edge, want_e.get(edge), got_e.get(edge)))

    def ok(want, got):
        return want.matches(got) if isinstance(want, AtLeast) else want == got

    differ = [r for r in rows if not ok(r[2], r[3])]
    if not differ and not problems:
        print("run_robust: %s: %s: %d functions and %d edges as expected"
              % (label, os.path.basename(path), len(want_f), len(want_e)))
        return stats

    def fmt(c):
        if c is None:
            return "-"
        return repr(c) if isinstance(c, AtLeast) else "%d/%d" % c

    lines = ["%s: %s differs from what the program did:" % (label, path)]
    width = max(len(r[1]) for r in rows)
    lines.append("  %-8s  %-*s  %10s  %10s" % ("what", width, "name", "expected", "fnprof"))
    for what, name, want, got in rows:
        lines.append("  %-8s  %-*s  %10s  %10s%s" % (what, width, name, fmt(want), fmt(got),
                                                   "" if ok(want, got) else "  <-- differs"))
    lines.append("  (calls/primitive calls; '-' is missing)")
    lines += ["  " + p for p in problems]
    raise Failure("\n".join(lines))


def src(name):
    return os.path.join(PROGS, name)


# ---- the cases ---------------------------------------------------------------------------

def case_threads(ctx):
    """N workers at once, each a known number of calls; main works meanwhile."""
    workers, rounds = 4, 1000  # progs/threads.c
    steps = sum((i + 1) * rounds for i in range(workers))
    helper_from_step = steps // 10  # j % 10 == 0, and every worker's count is a multiple of 10
    spec = {
        ROOT: ((1, 1), {}),
        "main": ((1, 1), {ROOT: (1, 1)}),
        "worker": ((workers, workers), {ROOT: (workers, workers)}),
        "other_worker": ((1, 1), {ROOT: (1, 1)}),
        "main_work": ((1, 1), {"main": (1, 1)}),
        "step": ((steps, steps), {"worker": (steps, steps)}),
        "helper": ((helper_from_step + rounds,) * 2,
                   {"step": (helper_from_step,) * 2, "other_worker": (rounds, rounds)}),
        "leaf": ((steps + 2 * (helper_from_step + rounds) + 500,) * 2,
                 {"step": (steps, steps), "helper": (2 * (helper_from_step + rounds),) * 2,
                  "main_work": (500, 500)}),
    }
    plain, exe = ctx.build("threads", False), ctx.build("threads")
    ref = reference(ctx, plain, [])
    run_unset(ctx, exe, [], ref)
    for i in range(3):  # the threads' timing varies from run to run
        _, outdir, _ = run_profiled(ctx, exe, [], ref)
        check_profile(os.path.join(outdir, "out.prof"), spec, "threads run %d" % (i + 1),
                      [src("threads.c")])


def peak_rss_kb(path):
    with open(path) as f:
        m = re.search(r"VmHWM:\s*(\d+) kB", f.read())
    if not m:
        raise SetupError("no VmHWM in %s" % path)
    return int(m.group(1))


def case_threads_many(ctx):
    """Threads one after another: exact counts, and a peak RSS that does not grow with the
    number of threads (a finished thread's state is reused)."""
    many, few = ctx.args.threads, 1000
    limit_kb = 8 * 1024

    def spec(n):
        return {
            ROOT: ((1, 1), {}),
            "main": ((1, 1), {ROOT: (1, 1)}),
            "run_threads": ((1, 1), {"main": (1, 1)}),
            "write_peak_rss": ((1, 1), {"main": (1, 1)}),
            "tiny_worker": ((n, n), {ROOT: (n, n)}),
            "tiny": ((3 * n, 3 * n), {"tiny_worker": (3 * n, 3 * n)}),
        }

    plain, exe = ctx.build("threads_many", False), ctx.build("threads_many")
    rss = os.path.join(ctx.workdir, "rss.plain")
    ref = reference(ctx, plain, [str(many), rss])
    plain_kb = peak_rss_kb(rss)
    print("run_robust: %d threads, no fnprof: %.1f s, peak RSS %d kB" % (many, ref.wall,
                                                                         plain_kb))
    run_unset(ctx, exe, [str(many), os.path.join(ctx.workdir, "rss.unset")], ref)
    peaks = {}
    for n in (few, many):
        rss = os.path.join(ctx.workdir, "rss.%d" % n)
        ref_n = ref if n == many else reference(ctx, plain, [str(n), rss + ".plain"])
        r, outdir, _ = run_profiled(ctx, exe, [str(n), rss], ref_n)
        peaks[n] = peak_rss_kb(rss)
        print("run_robust: %d threads under fnprof: %.1f s, peak RSS %d kB"
              % (n, r.wall, peaks[n]))
        check_profile(os.path.join(outdir, "out.prof"), spec(n), "%d threads" % n,
                      [src("threads_many.c")])
    if ctx.mode in SAN_OPTIONS:
        print("run_robust: peak RSS not compared under a sanitizer (its own allocator)")
        return
    if peaks[many] - peaks[few] > limit_kb:
        raise Failure("peak RSS with %d threads, one after another, is %d kB, with %d threads "
                      "%d kB: %d kB more (limit %d kB): finished threads' states are not "
                      "reused" % (many, peaks[many], few, peaks[few], peaks[many] - peaks[few],
                                  limit_kb))
    print("run_robust: peak RSS grew %d kB from %d to %d threads (limit %d kB)"
          % (peaks[many] - peaks[few], few, many, limit_kb))


def case_threads_exit(ctx):
    """A thread spinning in instrumented calls when main calls exit()."""
    prepares, min_spins = 7, 10000  # progs/threads_exit.c
    spec = {
        ROOT: ((1, 1), {}),
        "main": ((1, 1), {ROOT: (1, 1)}),
        "prepare": ((prepares, prepares), {"main": (prepares, prepares)}),
        "leave": ((1, 1), {"main": (1, 1)}),
        "spinner": ((1, 1), {ROOT: (1, 1)}),
        "spin_step": (AtLeast(min_spins), {"spinner": AtLeast(min_spins)}),
    }
    plain, exe = ctx.build("threads_exit", False), ctx.build("threads_exit")
    ref = reference(ctx, plain, [])
    run_unset(ctx, exe, [], ref)
    for i in range(5):  # a race with the spinning thread shows only sometimes
        _, outdir, _ = run_profiled(ctx, exe, [], ref)
        check_profile(os.path.join(outdir, "out.prof"), spec, "threads_exit run %d" % (i + 1),
                      [src("threads_exit.c")])


def case_fork(ctx):
    """100 children at once, each with a profile of its own; the parent's without them."""
    children = 100  # progs/fork.c
    parent = {
        "main": ((1, 1), {}),
        "spawn": ((children, children), {"main": (children, children)}),
        "parent_work": ((children, children), {"main": (children, children)}),
        "wait_all": ((1, 1), {"main": (1, 1)}),
    }
    child = {
        # main and spawn were open at the fork: one call each in the child.
        "exit": {
            "main": ((1, 1), {}),
            "spawn": ((1, 1), {"main": (1, 1)}),
            "child_work": ((1, 1), {"spawn": (1, 1)}),
            "child_leaf": ((3, 3), {"child_work": (3, 3)}),
        },
        "return": {
            "main": ((1, 1), {}),
            "spawn": ((1, 1), {"main": (1, 1)}),
            "child_main": ((1, 1), {"main": (1, 1)}),
            "child_work": ((1, 1), {"child_main": (1, 1)}),
            "child_leaf": ((3, 3), {"child_work": (3, 3)}),
        },
    }
    sources = [src("fork.c")]
    plain, exe = ctx.build("fork", False), ctx.build("fork")
    for variant in ("exit", "return"):
        ref = reference(ctx, plain, [variant])
        run_unset(ctx, exe, [variant], ref)

        # Without %p: PROF_OUTPUT for the parent, PROF_OUTPUT.<pid> for each child.
        r, outdir, files = run_profiled(ctx, exe, [variant], ref)
        out = os.path.join(outdir, "out.prof")
        if out not in files:
            raise Failure("%s: no parent profile at PROF_OUTPUT" % variant)
        pids = set()
        for f in sorted(files - {out}):
            m = re.fullmatch(re.escape(out) + r"\.(\d+)", f)
            if not m:
                raise Failure("%s: unexpected file %s" % (variant, f))
            pids.add(int(m.group(1)))
        if len(pids) != children or r.pid in pids:
            raise Failure("%s: %d files PROF_OUTPUT.<pid> (parent pid %d %s), want one per "
                          "child, %d: %s" % (variant, len(pids), r.pid,
                                             "among them" if r.pid in pids else "not among them",
                                             children, sorted(files)))
        check_profile(out, parent, "fork %s: parent" % variant, sources)
        for pid in sorted(pids):
            check_profile("%s.%d" % (out, pid), child[variant],
                          "fork %s: child %d" % (variant, pid), sources)

        # With %p: every process's file named by its pid, the parent's too.
        r, outdir, files = run_profiled(ctx, exe, [variant], ref, output="out.%p.prof")
        names = {}
        for f in files:
            m = re.fullmatch(re.escape(outdir) + r"/out\.(\d+)\.prof", f)
            if not m:
                raise Failure("%s, %%p: unexpected file %s" % (variant, f))
            names[int(m.group(1))] = f
        if len(names) != children + 1 or r.pid not in names:
            raise Failure("%s, %%p: %d files, want %d, the parent's (pid %d) among them: %s"
                          % (variant, len(names), children + 1, r.pid, sorted(files)))
        check_profile(names.pop(r.pid), parent, "fork %s %%p: parent" % variant, sources)
        for pid, f in sorted(names.items()):
            check_profile(f, child[variant], "fork %s %%p: child %d" % (variant, pid), sources)


def case_exec(ctx):
    """An instrumented child started by system() and by fork + execv."""
    parent = {
        "main": ((1, 1), {}),
        "before": ((2, 2), {"main": (2, 2)}),
        "run_child": ((1, 1), {"main": (1, 1)}),
        "after": ((3, 3), {"main": (3, 3)}),
    }
    child = {
        "main": ((1, 1), {}),
        "child_a": ((4, 4), {"main": (4, 4)}),
        "child_b": ((4, 4), {"child_a": (4, 4)}),
    }
    plain, exe = ctx.build("exec_parent", False), ctx.build("exec_parent")
    plain_child, exe_child = ctx.build("exec_child", False), ctx.build("exec_child")
    for how, relative in (("system", False), ("execv", False), ("system", True)):
        # relative: PROF_OUTPUT=out.prof, which the child resolves again in the same cwd.
        label = how + (", relative PROF_OUTPUT" if relative else "")
        ref = reference(ctx, plain, [how, plain_child])
        if "child: sum" not in ref.out:
            raise SetupError("the plain child did not run: %r" % ref.out)
        if not relative:
            run_unset(ctx, exe, [how, exe_child], ref)
        r, outdir, files = run_profiled(ctx, exe, [how, exe_child], ref, relative=relative)
        out = os.path.join(outdir, "out.prof")
        others = sorted(files - {out})
        if out not in files or len(others) != 1:
            raise Failure("%s: want PROF_OUTPUT and one PROF_OUTPUT.<child pid>, got %s"
                          % (label, sorted(files)))
        m = re.fullmatch(re.escape(out) + r"\.(\d+)", others[0])
        if not m or int(m.group(1)) == r.pid:
            raise Failure("%s: the child's profile is %s (parent pid %d)" % (label, others[0],
                                                                              r.pid))
        check_profile(out, parent, "%s: parent" % label, [src("exec_parent.c")])
        check_profile(others[0], child, "%s: child" % label, [src("exec_child.c")])


def case_longjmp(ctx):
    """a -> b -> c, c jumps back to a (longjmp, or siglongjmp from a signal handler)."""
    k = 50  # progs/longjmp.c
    exe = ctx.build("longjmp")
    plain = ctx.build("longjmp", False)
    if "_FORTIFY_SOURCE" in " ".join(ctx.cflags):
        syms = run(["nm", "-u", exe], quiet=True).out
        if "__longjmp_chk" not in syms:
            raise SetupError("built with _FORTIFY_SOURCE, yet %s does not call __longjmp_chk"
                             % exe)
    for variant in ("longjmp", "siglongjmp"):
        spec = {
            "main": ((1, 1), {}),
            "a": ((k, k), {"main": (k, k)}),
            "b": ((k, k), {"a": (k, k)}),
            "c": ((k, k), {"b": (k, k)}),
            "d": ((k, k), {"a": (k, k)}),
        }
        if variant == "siglongjmp":
            spec["on_usr1"] = ((k, k), {"c": (k, k)})
        ref = reference(ctx, plain, [variant])
        run_unset(ctx, exe, [variant], ref)
        _, outdir, _ = run_profiled(ctx, exe, [variant], ref)
        check_profile(os.path.join(outdir, "out.prof"), spec, variant, [src("longjmp.c")])


def case_except(ctx):
    """f -> g -> h, h throws, f catches and calls k."""
    k = 50  # progs/except.cc
    spec = {
        "main": ((1, 1), {}),
        "f(int)": ((k, k), {"main": (k, k)}),
        "g(int)": ((k, k), {"f(int)": (k, k)}),
        "h(int)": ((k, k), {"g(int)": (k, k)}),
        "k(int)": ((k, k), {"f(int)": (k, k)}),
    }
    plain, exe = ctx.build("except.cc", False), ctx.build("except.cc")
    ref = reference(ctx, plain, [])
    run_unset(ctx, exe, [], ref)
    _, outdir, _ = run_profiled(ctx, exe, [], ref)
    check_profile(os.path.join(outdir, "out.prof"), spec, "except", [src("except.cc")])


def case_dlopen(ctx):
    """Two plugins loaded, called and unloaded in turn, the second usually where the first
    was: each call named from the plugin that made it."""
    spec = {
        "main": ((1, 1), {}),
        "run_plugin": ((3, 3), {"main": (3, 3)}),
        "a_work": ((5, 5), {"run_plugin": (5, 5)}),
        "a_leaf": ((10, 10), {"a_work": (10, 10)}),
        "b_work": ((5, 5), {"run_plugin": (5, 5)}),
        "b_leaf": ((15, 15), {"b_work": (15, 15)}),
    }
    sources = [src(f) for f in ("dlopen_main.c", "plugin_a.c", "plugin_b.c")]
    plain, exe = ctx.build("dlopen_main", False), ctx.build("dlopen_main")
    for plugin in ("plugin_a", "plugin_b"):
        ctx.build(plugin, shared=True)
    ref = reference(ctx, plain, [ctx.workdir])
    run_unset(ctx, exe, [ctx.workdir], ref)
    reused = 0
    for i in range(3):  # the load addresses change from run to run; the keys may not
        where = os.path.join(ctx.workdir, "where%d" % i)
        _, outdir, _ = run_profiled(ctx, exe, [ctx.workdir, where], ref)
        reused += read_or(where) == "reused"
        check_profile(os.path.join(outdir, "out.prof"), spec, "dlopen run %d" % (i + 1), sources)
    if not reused:
        raise SetupError("plugin_b was never loaded where plugin_a had been: address reuse "
                         "after dlclose is not tested")
    print("run_robust: plugin_b took plugin_a's addresses in %d of 3 runs" % reused)


def case_signals(ctx):
    """Killed by a signal with its default action: the profile is written, then the
    process dies by the same signal. A handler of the program's own, or an ignored signal,
    is left alone."""
    died = {"term": -signal.SIGTERM, "int": -signal.SIGINT, "alarm": -signal.SIGALRM,
            "segv": -signal.SIGSEGV, "abort": -signal.SIGABRT, "own": 0, "ignored": 0}
    plain, exe = ctx.build("signals", False), ctx.build("signals")
    for how, status in died.items():
        ignore = (signal.SIGTERM,) if how == "ignored" else ()
        ref = reference(ctx, plain, [how], ignore)
        if ref.status != status:
            raise SetupError("%s: the plain build exits %d, want %d" % (how, ref.status, status))
        run_unset(ctx, exe, [how], ref, ignore)
        _, outdir, files = run_profiled(ctx, exe, [how], ref, ignore=ignore)
        out = os.path.join(outdir, "out.prof")
        if files != {out}:
            raise Failure("%s: want the profile alone (no raw snapshot left), got %s"
                          % (how, sorted(files)))
        leaves = AtLeast(1000) if how == "alarm" else (10, 10)
        spec = {
            "main": ((1, 1), {}),
            "work": ((1, 1), {"main": (1, 1)}),
            "leaf": (leaves, {"work": leaves}),
        }
        if how == "own":  # the program's handler ran, on top of work
            spec["on_term"] = ((1, 1), {"work": (1, 1)})
        stats = check_profile(out, spec, "signals " + how, [src("signals.c")])
        if how == "alarm":
            # Killed about 1 s in: the open frames were closed at the signal, with their time.
            main = next(v for k, v in stats.items() if k[2] == "main")
            if not 0.5 < main[3] < 30:
                raise Failure("alarm: main's cumtime is %.3f s, want about 1 s" % main[3])
    if ctx.mode == "preload":
        raw_left_behind(ctx, exe, plain)


def raw_left_behind(ctx, exe, plain):
    """Without the fnprof command beside the library, the handler leaves the raw snapshot
    and says how to convert it; `fnprof symbolize` then makes the same profile."""
    lonely = os.path.join(ctx.workdir, "lonely", "lib")
    os.makedirs(lonely)
    for lib in ("libfnprof.so", "libfnprof-symbolizer.so"):
        shutil.copy(os.path.join(ctx.lib_dir, lib), lonely)
    ref = reference(ctx, plain, ["term"])
    cwd, outdir = ctx.new_run_dirs()
    out = os.path.join(outdir, "out.prof")
    r = ctx.exec_([exe, "term"], cwd, {"LD_PRELOAD": os.path.join(lonely, "libfnprof.so"),
                                       "PROF_OUTPUT": out})
    same_as_plain("no fnprof command", r, ref, ctx.mode)
    want = "fnprof: SIGTERM: raw snapshot in %s.raw; `fnprof symbolize` on it makes the " \
           "profile\n" % out
    if r.err != want or sorted(os.listdir(outdir)) != ["out.prof.raw"]:
        raise Failure("no fnprof command: want the raw snapshot alone and the line %r; got "
                      "files %s, stderr %r" % (want, os.listdir(outdir), r.err))
    tool = os.path.join(os.path.dirname(ctx.lib_dir), "bin", "fnprof")
    s = run([tool, "symbolize", out + ".raw"])
    if s.status != 0 or not s.err.startswith("fnprof: wrote %s (3 functions, 12 calls" % out):
        raise Failure("fnprof symbolize: status %d, stderr %r" % (s.status, s.err))
    check_profile(out, {"main": ((1, 1), {}), "work": ((1, 1), {"main": (1, 1)}),
                        "leaf": ((10, 10), {"work": (10, 10)})}, "symbolized later",
                  [src("signals.c")])


def case_reexec(ctx):
    """The profiled process execs itself: each image keeps its profile; a failed exec
    loses nothing and counts nothing twice."""
    sources = [src("reexec.c")]
    plain, exe = ctx.build("reexec", False), ctx.build("reexec")
    for how in ("ok", "fail"):
        ref = reference(ctx, plain, [how])
        run_unset(ctx, exe, [how], ref)
        rewritten = ("out.prof",) if how == "fail" else ()
        _, outdir, files = run_profiled(ctx, exe, [how], ref, rewritten=rewritten)
        out = os.path.join(outdir, "out.prof")
        first = {"main": ((1, 1), {}), "work": ((5, 5), {"main": (5, 5)}),
                 "do_exec": ((1, 1), {"main": (1, 1)})}
        if how == "ok":
            if files != {out, out + ".exec1"}:
                raise Failure("exec: want PROF_OUTPUT and PROF_OUTPUT.exec1, got %s"
                              % sorted(files))
            check_profile(out, first, "first image", sources)
            check_profile(out + ".exec1", {"main": ((1, 1), {}),
                                           "work": ((3, 3), {"main": (3, 3)})},
                          "second image", sources)
        else:
            first["work"] = ((7, 7), {"main": (7, 7)})
            check_profile(out, first, "failed exec", sources)


def case_deep(ctx):
    """Recursion a million deep: exact counts, and memory that does not grow with depth."""
    n = 1000000
    spec = {
        ROOT: ((1, 1), {}),
        "main": ((1, 1), {ROOT: (1, 1)}),
        "write_peak_rss": ((1, 1), {"main": (1, 1)}),
        "run": ((1, 1), {ROOT: (1, 1)}),
        "rec": ((n + 1, 1), {"run": (1, 1), "rec": (n, 1)}),
        "leaf": ((1, 1), {"rec": (1, 1)}),
        "ping": ((n // 2 + 1, 1), {"run": (1, 1), "pong": (n // 2, 1)}),
        "pong": ((n // 2, 1), {"ping": (n // 2, 1)}),
    }
    plain, exe = ctx.build("deep", False), ctx.build("deep")
    rss = os.path.join(ctx.workdir, "rss.plain")
    ref = reference(ctx, plain, [str(n), rss])
    plain_kb = peak_rss_kb(rss)
    # The instrumented build's own frames are bigger: its run without fnprof is the base.
    rss = os.path.join(ctx.workdir, "rss.unset")
    run_unset(ctx, exe, [str(n), rss], ref)
    unset_kb = peak_rss_kb(rss)
    rss = os.path.join(ctx.workdir, "rss.fnprof")
    r, outdir, _ = run_profiled(ctx, exe, [str(n), rss], ref)
    fnprof_kb = peak_rss_kb(rss)
    print("run_robust: recursion %d deep: peak RSS %d kB plain, %d kB instrumented, %d kB "
          "under fnprof (%.1f s, %.1f s)" % (n, plain_kb, unset_kb, fnprof_kb, ref.wall, r.wall))
    check_profile(os.path.join(outdir, "out.prof"), spec, "deep", [src("deep.c")])
    # The shadow stack holds 24 bytes a frame: 24 MB, 36 MB while it last grows; the tree
    # a handful of nodes (unfolded, it would be 64 MB more).
    if ctx.mode not in SAN_OPTIONS and fnprof_kb - unset_kb > 40 * 1024:
        raise Failure("peak RSS %d kB under fnprof, %d kB without: %d kB more than the "
                      "shadow stack needs" % (fnprof_kb, unset_kb, fnprof_kb - unset_kb))


CASES = {
    "deep": case_deep,
    "reexec": case_reexec,
    "signals": case_signals,
    "dlopen": case_dlopen,
    "threads": case_threads,
    "threads_many": case_threads_many,
    "threads_exit": case_threads_exit,
    "fork": case_fork,
    "exec": case_exec,
    "longjmp": case_longjmp,
    "except": case_except,
}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--case", choices=sorted(CASES), help="the program and its checks")
    p.add_argument("--build-runtime", action="store_true",
                   help="compile the runtime with --mode's sanitizer into --workdir")
    p.add_argument("--cc", required=True, help="compiler (gcc, clang, g++, clang++)")
    p.add_argument("--opt", default="-O2", help="optimisation flag")
    p.add_argument("--cflags", default="", help="more compiler flags, e.g. -D_FORTIFY_SOURCE=2")
    p.add_argument("--mode", required=True, choices=("link", "preload", "tsan", "asan"))
    p.add_argument("--lib-dir", default="", help="directory of libfnprof.so (link, preload)")
    p.add_argument("--source-root", default=os.path.dirname(os.path.dirname(HERE)),
                   help="fnprof's source tree (for --build-runtime)")
    p.add_argument("--runtime-objs", help="objects made by --build-runtime (tsan, asan)")
    p.add_argument("--sources", type=lambda v: [x for x in v.split(",") if x], default=[],
                   help="the runtime's C sources, comma-separated, relative to --source-root "
                        "(tests/robust.cmake takes them from libfnprof.a's targets)")
    p.add_argument("--threads", type=int, default=100000,
                   help="threads_many: threads one after another (compared with 1000)")
    p.add_argument("--workdir", required=True, help="scratch directory, emptied first")
    args = p.parse_args(argv)
    if not args.build_runtime and not args.case:
        p.error("--case or --build-runtime")
    start = time.monotonic()
    try:
        if args.build_runtime:
            if args.mode not in SAN_OPTIONS:
                p.error("--build-runtime needs --mode tsan or asan")
            build_runtime(args)
        else:
            CASES[args.case](Ctx(args))
    except Skip as e:
        print("run_robust: SKIPPED, cannot run here: %s" % e, flush=True)
        return SKIP
    except SetupError as e:
        print("run_robust: test setup: %s" % e, flush=True)
        return 2
    except Failure as e:
        print("run_robust: FAIL: %s" % e, flush=True)
        return 1
    print("run_robust: passed in %.1f s" % (time.monotonic() - start))
    return 0


if __name__ == "__main__":
    sys.exit(main())
