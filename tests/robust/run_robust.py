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

The controls' cases (pause, pause_threads, schedule, reset, dumpsig, trace, meta) build
programs that call fnprof.h: -I <source-root>/include, and -DFNPROF_DISABLE for the plain
build; they run in link, tsan and asan modes only.

Exit 0 pass, 1 fail, 2 broken setup, 77 skipped. python3 standard library only.
"""

import argparse
import calendar
import glob
import json
import os
import re
import shlex
import resource
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "e2e"))
sys.dont_write_bytecode = True

import compare  # noqa: E402  (e2e: load_pstats, check_invariants, decl_lines)
import fnptree  # noqa: E402  (e2e: the profile's trailer, read_meta)
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


class Between:
    """An expected call count known within bounds: lo to hi calls, all primitive."""

    def __init__(self, lo, hi):
        self.lo, self.hi = lo, hi

    def matches(self, got):
        return got is not None and self.lo <= got[0] <= self.hi and got[0] == got[1]

    def __repr__(self):
        return "%d..%d" % (self.lo, self.hi)


# ---- running commands ------------------------------------------------------------------

class Result:
    def __init__(self, status, out, err, pid, wall, peak_kb=None):
        self.status, self.out, self.err, self.pid, self.wall = status, out, err, pid, wall
        self.peak_kb = peak_kb  # run(peak=True): the process's peak RSS, its exit included


def no_core_ignore(ignore):
    """For Popen's preexec_fn: no core files (a crash test would leave them in the cwd),
    and the signals in ignore ignored, as nohup does for SIGHUP."""
    def setup():
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        for sig in ignore:
            signal.signal(sig, signal.SIG_IGN)
    return setup


def run(cmd, cwd=None, env_extra=None, quiet=False, ignore=(), timeout=TIMEOUT, peak=False):
    """Runs cmd with stdin closed; returns a Result (pid: the process started). A run
    longer than timeout seconds fails (a hang). peak: also the process's peak RSS from
    wait4, which sees the whole run, exit handlers included (VmHWM read by the program
    itself cannot see what runs after main)."""
    if not quiet:
        show(cmd, env_extra, cwd)
    env = clean_env()
    env.update(env_extra or {})
    start = time.monotonic()
    p = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         preexec_fn=no_core_ignore(ignore))
    if peak:
        return run_wait4(p, cmd, start, timeout)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        raise Failure("%s: still running after %d s" % (cmd[0], timeout))
    return Result(p.returncode, out.decode("utf-8", "replace"),
                  err.decode("utf-8", "replace"), p.pid, time.monotonic() - start)


def run_wait4(p, cmd, start, timeout):
    """run()'s end for peak=True: the pipes drained by two threads, the process reaped
    by wait4 (Popen.communicate would reap it and lose its rusage)."""
    got = {}

    def drain(name, f):
        got[name] = f.read()
        f.close()

    readers = [threading.Thread(target=drain, args=(name, f))
               for name, f in (("out", p.stdout), ("err", p.stderr))]
    for r in readers:
        r.start()
    for r in readers:
        r.join(max(0.0, start + timeout - time.monotonic()))
    if any(r.is_alive() for r in readers):
        p.kill()
        for r in readers:
            r.join()
        os.wait4(p.pid, 0)
        p.returncode = -signal.SIGKILL
        raise Failure("%s: still running after %d s" % (cmd[0], timeout))
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    return Result(p.returncode, got["out"].decode("utf-8", "replace"),
                  got["err"].decode("utf-8", "replace"), p.pid, time.monotonic() - start,
                  usage.ru_maxrss)


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


# Per-file options runtime/CMakeLists.txt gives (set_source_files_properties): the patched
# sites' trampolines and the library calls' fast path may touch no vector register, and
# gcc refuses to compile them otherwise.
SOURCE_FLAGS = {
    "runtime/patch_hooks.c": ["-mgeneral-regs-only", "-mno-red-zone"],
    "runtime/plt_fast.c": ["-mgeneral-regs-only"],
}


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
        cmd = ([args.cc, "-c"] + flags + SOURCE_FLAGS.get(rel, []) +
               [os.path.join(root, rel), "-o", obj])
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
        self.timeout = TIMEOUT  # seconds a program may run (a case may ask for less)
        self.peak = False  # Result.peak_kb wanted

    def build(self, prog, fnprof=True, extra=(), shared=False):
        """progs/PROG built plain (fnprof=False: no -finstrument-functions, no fnprof, and
        fnprof.h's calls compiled away by FNPROF_DISABLE) or instrumented with fnprof as
        --mode says; compiled from progs/ by relative name. shared: a library for dlopen,
        which gets the hooks from the program. Returns the executable's path."""
        src = prog if "." in prog else prog + ".c"
        exe = os.path.join(self.workdir, os.path.splitext(src)[0] + ("" if fnprof else ".plain"))
        cmd = [self.cc, "-g", self.args.opt] + self.cflags + list(extra) + ["-pthread"]
        cmd += ["-I", os.path.join(os.path.abspath(self.args.source_root), "include")]
        if not fnprof:
            cmd.append("-DFNPROF_DISABLE")
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
        return run(self.prefix + cmd, cwd, env_extra, ignore=ignore, timeout=self.timeout,
                   peak=self.peak)


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


def run_unset(ctx, exe, argv, ref, ignore=(), env_extra=None):
    """fnprof loaded, PROF_OUTPUT unset (env_extra: other variables, set): same stdout and
    status, silent, no file."""
    cwd, outdir = ctx.new_run_dirs()
    env = ctx.loader_env()
    env.update(env_extra or {})
    r = ctx.exec_([exe] + argv, cwd, env, ignore)
    same_as_plain("PROF_OUTPUT unset", r, ref, ctx.mode)
    if r.err:
        raise Failure("PROF_OUTPUT unset, yet stderr is not empty:\n%s" % excerpt(r.err))
    if os.listdir(cwd):
        raise Failure("PROF_OUTPUT unset, yet files were written: %s" % os.listdir(cwd))
    print("run_robust: PROF_OUTPUT unset: same stdout and status, silent, no file")
    return r


def run_profiled(ctx, exe, argv, ref, output="out.prof", relative=False, ignore=(),
                 rewritten=(), env_extra=None, expect=()):
    """PROF_OUTPUT=<outdir>/<output>: same stdout and status, stderr only "fnprof: wrote"
    lines, nothing in the cwd. relative: PROF_OUTPUT=<output>, run in outdir. rewritten:
    the names of files written twice, or {name: times written}. env_extra: more variables,
    "{outdir}" in a value replaced by outdir. expect: regular expressions, each of which
    must match exactly one other line of stderr (a warning the test provokes); a group
    named "wrote" in one names a file the line reports written, as "fnprof: wrote" lines
    do. Returns (Result, outdir, set of the files written, absolute)."""
    cwd, outdir = ctx.new_run_dirs()
    env = ctx.loader_env()
    env["PROF_OUTPUT"] = os.path.join(outdir, output)
    if relative:
        cwd, env["PROF_OUTPUT"] = outdir, output
    for name, value in (env_extra or {}).items():
        env[name] = value.replace("{outdir}", outdir)
    r = ctx.exec_([exe] + argv, cwd, env, ignore)
    sys.stdout.write(excerpt(r.err, 1500))
    same_as_plain("PROF_OUTPUT set", r, ref, ctx.mode)
    bad = [line for line in r.err.splitlines() if not line.startswith("fnprof:")]
    if bad:
        raise Failure("stderr has lines not from fnprof:\n%s" % excerpt("\n".join(bad)))
    lines = r.err.splitlines()
    wrote = {}
    for pattern in expect:
        hits = [line for line in lines if re.fullmatch(pattern, line)]
        if len(hits) != 1:
            raise Failure("want one line of stderr matching %r, got %d:\n%s"
                          % (pattern, len(hits), excerpt(r.err)))
        lines.remove(hits[0])
        path = re.fullmatch(pattern, hits[0]).groupdict().get("wrote")
        if path:
            wrote[path] = wrote.get(path, 0) + 1
    for line in lines:
        m = re.match(r"fnprof: wrote (\S+) \(", line)
        if not m:
            raise Failure("fnprof reported a problem: %r" % line)
        wrote[m.group(1)] = wrote.get(m.group(1), 0) + 1
    if cwd != outdir and os.listdir(cwd):
        raise Failure("files written in the program's cwd: %s" % os.listdir(cwd))
    files = {os.path.join(outdir, f) for f in os.listdir(outdir)}
    times = rewritten if isinstance(rewritten, dict) else {name: 2 for name in rewritten}
    if set(wrote) != files or any(n != times.get(os.path.basename(f), 1)
                                  for f, n in wrote.items()):
        raise Failure("the \"fnprof: wrote\" lines do not match the files written:\n"
                      "lines: %s\nfiles: %s" % (sorted(wrote.items()), sorted(files)))
    return r, outdir, files


# ---- profiles --------------------------------------------------------------------------

def check_profile(path, spec, label, sources, merged=False, wall=None):
    """Raises Failure unless the pstats file at path has exactly the functions and caller
    edges of spec ({name: (calls, {caller name: calls})}, calls (ncalls, pcalls), AtLeast
    or Between; ROOT names ('~', 0, '<process>')); the keys of the program's functions name
    the absolute path of one of sources and the line of the name. merged: calls were merged
    beyond PROF_MAX_NODES, which the profile's label function says (not in spec); the times
    must then keep the bounds of every profile (compare.check_time_bounds; with wall, the
    run's wall time in seconds, none above it)."""
    stats, problems = compare.load_pstats(path)
    if stats is None:
        raise Failure("%s: %s does not load:\n  %s" % (label, path, "\n  ".join(problems)))
    problems += compare.check_invariants(stats)
    if merged:
        problems += compare.check_time_bounds(stats, wall)
        stats = {k: v for k, v in stats.items() if not k[2].startswith("<fnprof: ")}
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
        return want.matches(got) if isinstance(want, (AtLeast, Between)) else want == got

    differ = [r for r in rows if not ok(r[2], r[3])]
    if not differ and not problems:
        print("run_robust: %s: %s: %d functions and %d edges as expected"
              % (label, os.path.basename(path), len(want_f), len(want_e)))
        return stats

    def fmt(c):
        if c is None:
            return "-"
        return repr(c) if isinstance(c, (AtLeast, Between)) else "%d/%d" % c

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


def case_trace_churn(ctx):
    """PROF_TRACE with 40,000 short detached threads (fewer under a sanitizer) and
    PROF_TRACE_EVENTS=100: an ended thread's calls move off its state, which the next
    thread reuses. Each thread mapped a state of its own before, and searched the list
    of them for a free one: 20 s to minutes and 670 MB. Exact counts, the trace's
    "more were not traced" line, check_trace.py, and the run (its exit and the trace
    written included) within 60 s and within 16 MB of the peak RSS without fnprof (both
    from wait4, so both include what the runner's fork left before exec)."""
    n = min(ctx.args.threads, 40000)
    limit, limit_kb = 100, 16 * 1024
    spec = {
        ROOT: ((1, 1), {}),
        "main": ((1, 1), {ROOT: (1, 1)}),
        "start_threads": ((1, 1), {"main": (1, 1)}),
        "brief_worker": ((n, n), {ROOT: (n, n)}),
        "tiny": ((3 * n, 3 * n), {"brief_worker": (3 * n, 3 * n)}),
    }
    plain, exe = ctx.build("threads_detached", False), ctx.build("threads_detached")
    ctx.timeout = 60
    ctx.peak = True
    argv = [str(n)]
    ref = reference(ctx, plain, argv)
    unset = run_unset(ctx, exe, argv, ref, env_extra={"PROF_TRACE": "trace.json"})
    env = {"PROF_TRACE": "{outdir}/trace.json", "PROF_TRACE_EVENTS": str(limit)}
    expect = [r"fnprof: (?P<wrote>\S+): the trace holds (?P<kept>\d+) calls; (?P<dropped>\d+) "
              r"more were not traced \(PROF_TRACE_EVENTS=%d\); the profile has them all" % limit]
    r, outdir, _ = run_profiled(ctx, exe, argv, ref, env_extra=env, expect=expect)
    print("run_robust: %d detached threads, PROF_TRACE_EVENTS=%d: %.1f s (%.1f s without "
          "fnprof), peak RSS %d kB (%d kB without)" % (n, limit, r.wall, unset.wall,
                                                       r.peak_kb, unset.peak_kb))
    out, trace = os.path.join(outdir, "out.prof"), os.path.join(outdir, "trace.json")
    check_profile(out, spec, "%d detached threads traced" % n, [src("threads_detached.c")])
    m = re.search(expect[0], r.err, re.M)
    calls = sum(c[0][0] for name, c in spec.items() if name != ROOT)
    if int(m.group("kept")) + int(m.group("dropped")) != calls:
        raise Failure("%r: want %d calls kept or dropped" % (m.group(0), calls))
    checker = os.path.join(os.path.dirname(HERE), "trace", "check_trace.py")
    c = run([sys.executable, "-B", checker, trace, out])
    sys.stdout.write(c.out + c.err)
    if c.status != 0 or not c.out.startswith("check_trace: ok"):
        raise Failure("check_trace.py rejects the trace (status %d):\n%s"
                      % (c.status, excerpt(c.out + c.err)))
    if ctx.mode not in SAN_OPTIONS and r.peak_kb - unset.peak_kb > limit_kb:
        raise Failure("peak RSS %d kB under fnprof with PROF_TRACE, %d kB without: %d kB more "
                      "(limit %d kB): ended threads' states are not reused"
                      % (r.peak_kb, unset.peak_kb, r.peak_kb - unset.peak_kb, limit_kb))


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


def chain_spec(depth, loops):
    """progs/deep_chain.c's calls: level 1 runs a, level k + 1 runs b when k has an odd
    number of bits set, else a; every recursive call and edge after the first is not
    primitive."""
    def fn(k):
        return "b" if k > 1 and bin(k - 1).count("1") % 2 else "a"

    calls = {"a": 0, "b": 0}
    edges = {}
    for k in range(1, depth + 1):
        calls[fn(k)] += 1
        if k > 1:
            edges[(fn(k - 1), fn(k))] = edges.get((fn(k - 1), fn(k)), 0) + 1
    spec = {
        ROOT: ((1, 1), {}),
        "main": ((1, 1), {ROOT: (1, 1)}),
        "write_peak_rss": ((1, 1), {"main": (1, 1)}),
        "run": ((1, 1), {ROOT: (1, 1)}),
        "bottom": ((1, 1), {fn(depth): (1, 1)}),
    }
    for f in ("a", "b"):
        if calls[f]:
            callers = {g: (n, 1) for (g, h), n in edges.items() if h == f}
            if f == "a":
                callers["run"] = (1, 1)
            spec[f] = ((calls[f], 1), callers)
    if loops:
        spec["leaf"] = ((loops, loops), {"bottom": (loops, loops)})
    return spec


def case_deep_chain(ctx):
    """A recursion that never repeats: past the node cap (and past the depth a tree path
    holds, PROF_MAX_NODES / 64) its calls are merged, each in constant time, and the
    profile keeps every count exact. Three runs: 2,000,000 deep under PROF_MAX_NODES=1000
    (it ran for more than 300 s when each merged call scanned the stack: here it must end
    within 60 s, a hang test, not a timing); 1,000,000 deep under the default cap, whose
    peak RSS, exit included, must stay within 64 MB of the run without fnprof (it took
    350 MB, a node a level and the exit's copies of them); a loop of 1,000,000 calls 300
    levels deep under PROF_MAX_NODES=100."""
    # Merged for the depth a tree path holds (PROF_MAX_NODES / 64, at least 64 levels): the
    # node cap is never reached, and the message must not blame it.
    merged = (r"fnprof: \d+ calls in calling contexts deeper than %d levels "
              r"\(PROF_MAX_NODES=%d / 64, at least 64\) were merged .*")
    plain, exe = ctx.build("deep_chain", False), ctx.build("deep_chain")
    ctx.timeout = 60
    ctx.peak = True
    limit_kb = 64 * 1024
    for depth, loops, cap in ((2000000, 0, 1000), (1000000, 0, None), (300, 1000000, 100)):
        label = "%d deep, %d loops, PROF_MAX_NODES=%s" % (depth, loops, cap or "default")
        rss = os.path.join(ctx.workdir, "rss.%d.%d" % (depth, loops))
        argv = [str(depth), str(loops), rss]
        ref = reference(ctx, plain, argv)
        unset = run_unset(ctx, exe, argv, ref)
        env = {"PROF_MAX_NODES": str(cap)} if cap else {}
        r, outdir, _ = run_profiled(ctx, exe, argv, ref, env_extra=env,
                                    expect=[merged % (max((cap or 1 << 20) // 64, 64),
                                                      cap or 1 << 20)])
        print("run_robust: %s: %.1f s (%.1f s without fnprof), peak RSS %d kB (%d kB "
              "without)" % (label, r.wall, unset.wall, r.peak_kb, unset.peak_kb))
        check_profile(os.path.join(outdir, "out.prof"), chain_spec(depth, loops), label,
                      [src("deep_chain.c")], merged=True, wall=r.wall)
        if cap is None and ctx.mode not in SAN_OPTIONS and r.peak_kb - unset.peak_kb > limit_kb:
            raise Failure("%s: peak RSS %d kB under fnprof, %d kB without: %d kB more (limit "
                          "%d kB)" % (label, r.peak_kb, unset.peak_kb,
                                      r.peak_kb - unset.peak_kb, limit_kb))


# ---- issue 13's controls: pause, schedule, reset, dumps on a signal, trace, metadata --------
# The programs call fnprof.h, so they link with fnprof: link, tsan and asan modes only.

def api_case(ctx):
    if ctx.mode == "preload":
        raise SetupError("the controls' programs call fnprof.h: they cannot run preloaded")


def case_pause(ctx):
    """fnprof_pause/fnprof_resume on one thread: around calls, resumed inside a call
    entered while paused, in the middle of a recursion; PROF_START=paused."""
    api_case(ctx)
    variants = {
        # main -> a 3 times, paused 5 times, resumed 2 times; a -> leaf twice each.
        "around": {
            "main": ((1, 1), {}),
            "a": ((5, 5), {"main": (5, 5)}),
            "leaf": ((10, 10), {"a": (10, 10)}),
        },
        # outer and mid entered while paused; mid resumes: its 3 inner() and outer's
        # inner() hang from main, the nearest recorded call; the leaf calls before the
        # resume are gone.
        "inside": {
            "main": ((1, 1), {}),
            "inner": ((4, 4), {"main": (4, 4)}),
            "leaf": ((4, 4), {"inner": (4, 4)}),
            "after": ((1, 1), {"main": (1, 1)}),
        },
        # rec(6), rec(5), rec(4) recorded; rec(4) pauses before its leaf; rec(3), rec(2)
        # not recorded; rec(2) resumes after its leaf: rec(1), rec(0) recorded under rec(4),
        # recursive calls; leaf from rec(6), rec(5), rec(1), rec(0); tail from all 7 levels,
        # rec(3)'s and rec(2)'s under rec(4).
        "recursion": {
            "main": ((1, 1), {}),
            "rec": ((5, 1), {"main": (1, 1), "rec": (4, 1)}),
            "leaf": ((4, 4), {"rec": (4, 4)}),
            "tail": ((7, 7), {"rec": (7, 7)}),
            "after": ((1, 1), {"main": (1, 1)}),
        },
        # PROF_START=paused: main and before() entered while paused; after the resume,
        # work() and after() are outermost calls.
        "started": {
            ROOT: ((1, 1), {}),
            "work": ((3, 3), {ROOT: (3, 3)}),
            "leaf": ((6, 6), {"work": (6, 6)}),
            "after": ((1, 1), {ROOT: (1, 1)}),
        },
    }
    plain, exe = ctx.build("controls_pause", False), ctx.build("controls_pause")
    for how, spec in variants.items():
        env = {"PROF_START": "paused"} if how == "started" else {}
        ref = reference(ctx, plain, [how])
        run_unset(ctx, exe, [how], ref, env_extra=env)
        _, outdir, _ = run_profiled(ctx, exe, [how], ref, env_extra=env)
        check_profile(os.path.join(outdir, "out.prof"), spec, "pause " + how,
                      [src("controls_pause.c")])


def case_pause_threads(ctx):
    """Main pauses and resumes while workers make calls, barriers ordering every call
    against the pause; a thread started while paused."""
    api_case(ctx)
    workers, rounds, late_rounds = 3, 100, 40  # progs/controls_pause_threads.c
    works = workers * 2 * rounds + 1  # before the pause and after the resume; main's 1
    spec = {
        ROOT: ((1, 1), {}),
        "main": ((1, 1), {ROOT: (1, 1)}),
        "worker": ((workers, workers), {ROOT: (workers, workers)}),
        "work": ((works, works), {"worker": (works - 1, works - 1), "main": (1, 1)}),
        # late_thread() entered while paused: late_work() is outermost on its thread.
        "late_work": ((late_rounds, late_rounds), {ROOT: (late_rounds, late_rounds)}),
        "leaf": ((works + late_rounds,) * 2, {"work": (works, works),
                                              "late_work": (late_rounds, late_rounds)}),
    }
    plain, exe = ctx.build("controls_pause_threads", False), ctx.build("controls_pause_threads")
    ref = reference(ctx, plain, [])
    run_unset(ctx, exe, [], ref)
    for i in range(3):
        _, outdir, _ = run_profiled(ctx, exe, [], ref)
        check_profile(os.path.join(outdir, "out.prof"), spec, "pause_threads run %d" % (i + 1),
                      [src("controls_pause_threads.c")])


NONE, WARMUP, RECORD, RECORD_AND_SAVE = "NONE", "WARMUP", "RECORD", "RECORD_AND_SAVE"


def torch_action(step, skip_first=0, wait=0, warmup=0, active=1, repeat=0):
    """torch.profiler.schedule's schedule_fn, line for line, for step (counted from 0):
    (action, the cycle's number counted from 1, or 0 for a NONE step)."""
    if step < skip_first:
        return NONE, 0
    step -= skip_first
    num_steps = wait + warmup + active
    if repeat > 0 and step / num_steps >= repeat:
        return NONE, 0
    mod_step = step % num_steps
    cycle = step // num_steps + 1
    if mod_step < wait:
        return NONE, 0
    if mod_step < wait + warmup:
        return WARMUP, cycle
    return (RECORD if mod_step < num_steps - 1 else RECORD_AND_SAVE), cycle


def parse_schedule(text):
    return {k.strip(): int(v) for k, v in (item.split("=") for item in text.split(","))}


def schedule_expected(params, steps):
    """{cycle: spec} for progs/controls_steps.c run for steps steps under params: step s <
    steps calls work(s) (s + 1 leaf calls), step `steps` calls finish(). A cycle is written
    when its RECORD_AND_SAVE step ends, or at exit when the last step is one of its active
    steps, and holds exactly the calls of its active steps. main is recorded when step 0
    is not NONE; open at every later cycle's start, it counts 1 call there too."""
    actions = [torch_action(s, **params) for s in range(steps + 1)]
    written = {c for s, (a, c) in enumerate(actions[:steps]) if a == RECORD_AND_SAVE}
    if actions[steps][0] in (RECORD, RECORD_AND_SAVE):
        written.add(actions[steps][1])
    main_recorded = actions[0][0] != NONE
    top = "main" if main_recorded else ROOT
    specs = {}
    for cycle in sorted(written):
        active = [s for s, (a, c) in enumerate(actions)
                  if c == cycle and a in (RECORD, RECORD_AND_SAVE)]
        works = [s for s in active if s < steps]
        leaves = sum(s + 1 for s in works)
        spec = {}
        if works:
            spec["work"] = ((len(works),) * 2, {top: (len(works),) * 2})
            spec["leaf"] = ((leaves, leaves), {"work": (leaves, leaves)})
        if steps in active:
            spec["finish"] = ((1, 1), {top: (1, 1)})
        outermost = [f for f in ("work", "finish") if f in spec]
        if main_recorded:
            spec["main"] = ((1, 1), {})
        elif len(outermost) > 1:
            spec[ROOT] = ((1, 1), {})
        else:  # one outermost function, on one thread: no synthetic root
            spec[outermost[0]] = (spec[outermost[0]][0], {})
        specs[cycle] = spec
    return actions, specs


def case_schedule(ctx):
    """PROF_SCHEDULE and fnprof_step(): one profile per active cycle, with exactly its
    active steps' calls, named with %n or .cycle<n>; a cycle cut short by the exit;
    an exit before any active step."""
    api_case(ctx)
    # The issue's own table for its parameters: the rule above must give it.
    issue = parse_schedule("skip_first=3,wait=2,warmup=1,active=4,repeat=2")
    want = ([NONE] * 5 + [WARMUP] + [RECORD] * 3 + [RECORD_AND_SAVE] + [NONE] * 2 + [WARMUP]
            + [RECORD] * 3 + [RECORD_AND_SAVE] + [NONE] * 8)
    if [torch_action(s, **issue)[0] for s in range(len(want))] != want:
        raise SetupError("torch_action does not give the issue's table")
    runs = [
        # (PROF_SCHEDULE, steps, PROF_OUTPUT); cycles 1 and 2: steps 6-9 and 13-16.
        ("skip_first=3,wait=2,warmup=1,active=4,repeat=2", 20, "out.%n.prof"),
        ("skip_first=3,wait=2,warmup=1,active=4,repeat=2", 20, "out.prof"),
        # cycle 1 steps 3-7; cycle 2 in steps 10-12 when the program exits.
        ("skip_first=1,wait=1,warmup=1,active=5", 12, "out.%n.prof"),
        # main recorded from step 0, open at cycle 2's start; steps 6-8 NONE.
        ("skip_first=0,wait=0,warmup=0,active=3,repeat=2", 8, "out.prof"),
        # exits in a NONE step, then in a WARMUP step, before any active step.
        ("skip_first=5,active=2", 3, "out.prof"),
        ("wait=1,warmup=5,active=1", 3, "out.prof"),
    ]
    plain, exe = ctx.build("controls_steps", False), ctx.build("controls_steps")
    sources = [src("controls_steps.c")]
    for i, (schedule, steps, output) in enumerate(runs):
        label = "schedule %s, %d steps, %s" % (schedule, steps, output)
        print("run_robust: %s" % label)
        actions, specs = schedule_expected(parse_schedule(schedule), steps)
        print("run_robust: steps 0-%d: %s" % (steps, " ".join(a[0] for a in actions)))
        env = {"PROF_SCHEDULE": schedule}
        ref = reference(ctx, plain, [str(steps)])
        if i == 0:
            run_unset(ctx, exe, [str(steps)], ref, env_extra=env)
        expect = []
        if not specs:
            expect = [r"fnprof: PROF_SCHEDULE: the program ended at step %d \(%s\) before any "
                      r"active step: no profile written" % (steps, actions[steps][0])]
        _, outdir, files = run_profiled(ctx, exe, [str(steps)], ref, output=output,
                                        env_extra=env, expect=expect)
        if "%n" in output:
            names = {c: output.replace("%n", str(c)) for c in specs}
        else:
            names = {c: "%s.cycle%d" % (output, c) for c in specs}
        want_files = {os.path.join(outdir, n) for n in names.values()}
        if files != want_files:
            raise Failure("%s: files %s, want %s" % (label, sorted(files), sorted(want_files)))
        for cycle, spec in sorted(specs.items()):
            path = os.path.join(outdir, names[cycle])
            check_profile(path, spec, "%s: cycle %d" % (label, cycle), sources)
            meta = dict(fnptree.read_meta(path))
            if meta.get("cycle") != str(cycle):
                raise Failure("%s: %s: metadata cycle %r, want %r"
                              % (label, names[cycle], meta.get("cycle"), str(cycle)))


def case_reset(ctx):
    """fnprof_reset() in the middle: only what follows it, calls open at it once each."""
    api_case(ctx)
    spec = {
        ROOT: ((1, 1), {}),
        "main": ((1, 1), {ROOT: (1, 1)}),
        "phase": ((1, 1), {"main": (1, 1)}),
        "stays": ((1, 1), {ROOT: (1, 1)}),
        "after": ((2, 2), {"main": (2, 2)}),
        "leaf": ((11, 11), {"phase": (4, 4), "stays": (5, 5), "after": (2, 2)}),
    }
    plain, exe = ctx.build("controls_reset", False), ctx.build("controls_reset")
    ref = reference(ctx, plain, [])
    run_unset(ctx, exe, [], ref)
    _, outdir, _ = run_profiled(ctx, exe, [], ref)
    check_profile(os.path.join(outdir, "out.prof"), spec, "reset", [src("controls_reset.c")])


def case_dumpsig(ctx):
    """PROF_DUMP_SIGNAL=USR2: dumps while threads run, each whole and within the calls
    made so far; the program goes on unchanged; bad signal names refused with one line."""
    api_case(ctx)
    workers, phases, rounds = 2, 4, 20000  # progs/controls_dumpsig.c
    dumps = 3
    sources = [src("controls_dumpsig.c")]

    def spec(k, requests):
        """Dump k of a run (None: the exit profile), after requests calls of
        request_dump()."""
        works = workers * phases * rounds
        works = Between(workers * k * rounds, workers * (k + 1) * rounds) if k else (works,) * 2
        want = {
            ROOT: ((1, 1), {}),
            "main": ((1, 1), {ROOT: (1, 1)}),
            "worker": ((workers, workers), {ROOT: (workers, workers)}),
            "work": (works, {"worker": works}),
            "leaf": (works, {"work": works}),
        }
        if requests:
            want["request_dump"] = ((requests, requests), {"main": (requests, requests)})
        return want

    plain, exe = ctx.build("controls_dumpsig", False), ctx.build("controls_dumpsig")
    ref = reference(ctx, plain, ["0"])
    run_unset(ctx, exe, ["0"], ref, env_extra={"PROF_DUMP_SIGNAL": "USR2"})
    for i, name in enumerate(("USR2", "SIGUSR2")):
        copies = os.path.join(ctx.workdir, "dumps%d" % i)
        os.makedirs(copies)
        _, outdir, _ = run_profiled(ctx, exe, [str(dumps), copies], ref,
                                    env_extra={"PROF_DUMP_SIGNAL": name},
                                    rewritten={"out.prof": dumps + 1})
        got = sorted(os.listdir(copies))
        want = ["dump%d.prof" % k for k in range(1, dumps + 1)]
        if got != want:
            raise Failure("PROF_DUMP_SIGNAL=%s: dumps %s, want %s" % (name, got, want))
        for k in range(1, dumps + 1):
            check_profile(os.path.join(copies, "dump%d.prof" % k), spec(k, k),
                          "PROF_DUMP_SIGNAL=%s: dump %d" % (name, k), sources)
        check_profile(os.path.join(outdir, "out.prof"), spec(None, dumps),
                      "PROF_DUMP_SIGNAL=%s: at exit" % name, sources)
    for bad in ("KILL", "NOPE"):
        _, outdir, _ = run_profiled(
            ctx, exe, ["0"], ref, env_extra={"PROF_DUMP_SIGNAL": bad},
            expect=[r"fnprof: PROF_DUMP_SIGNAL=%s: .*" % bad])
        check_profile(os.path.join(outdir, "out.prof"), spec(None, 0),
                      "PROF_DUMP_SIGNAL=%s" % bad, sources)


def case_trace(ctx):
    """PROF_TRACE with threads and regions: the trace's line, check_trace.py against the
    profile, thread names, regions' category, metadata; PROF_TRACE_EVENTS=50; 300 short
    threads one after another under the default limit."""
    api_case(ctx)
    workers, rounds = 3, 200  # progs/controls_trace.c
    steps = workers * rounds

    def spec(shorts):
        leaves = 2 * steps + 2 + 10 * shorts
        calls = {
            ROOT: ((1, 1), {}),
            "main": ((1, 1), {ROOT: (1, 1)}),
            "setup": ((1, 1), {"main": (1, 1)}),
            "prepare": ((2, 2), {"setup": (2, 2)}),
            "worker": ((workers, workers), {ROOT: (workers, workers)}),
            "step": ((steps, steps), {"worker": (steps, steps)}),
            "step body": ((steps, steps), {"step": (steps, steps)}),
            "leaf": ((leaves, leaves), {"prepare": (2, 2), "step body": (2 * steps,) * 2}),
        }
        if shorts:
            calls["brief"] = ((shorts, shorts), {ROOT: (shorts, shorts)})
            calls["leaf"][1]["brief"] = (10 * shorts,) * 2
        return calls

    regions = {"setup", "step body"}
    sources = [src("controls_trace.c")]
    checker = os.path.join(os.path.dirname(HERE), "trace", "check_trace.py")
    plain, exe = ctx.build("controls_trace", False), ctx.build("controls_trace")
    ref = reference(ctx, plain, [])
    run_unset(ctx, exe, [], ref, env_extra={"PROF_TRACE": "trace.json"})
    # (short threads, PROF_TRACE_EVENTS): the limit is 1,000,000 calls by default.
    for shorts, limit in ((0, None), (0, 50), (300, None)):
        argv = [str(shorts)] if shorts else []
        want = spec(shorts)
        calls = sum(c[0][0] for n, c in want.items() if n != ROOT)
        threads = workers + 1 + shorts
        env = {"PROF_TRACE": "{outdir}/trace.json"}
        label = "PROF_TRACE, %d threads" % threads
        expect = []
        if limit:
            env["PROF_TRACE_EVENTS"] = str(limit)
            label += ", PROF_TRACE_EVENTS=%d" % limit
            # This line, not "fnprof: wrote", reports the trace written.
            expect = [r"fnprof: (?P<wrote>\S+): the trace holds (?P<kept>\d+) calls; "
                      r"(?P<dropped>\d+) more were not traced \(PROF_TRACE_EVENTS=%d\); the "
                      r"profile has them all" % limit]
        r, outdir, files = run_profiled(ctx, exe, argv, ref if not shorts else
                                        reference(ctx, plain, argv), env_extra=env,
                                        expect=expect)
        trace, out = os.path.join(outdir, "trace.json"), os.path.join(outdir, "out.prof")
        if files != {trace, out}:
            raise Failure("%s: files %s, want the profile and the trace" % (label, sorted(files)))
        check_profile(out, want, label, sources)
        if limit:
            m = re.search(expect[0], r.err, re.M)
            kept, dropped = int(m.group("kept")), int(m.group("dropped"))
            # docs/trace.md: the trace keeps roughly the first PROF_TRACE_EVENTS calls to
            # return (more when a thread fills the buffer it holds), and says how many
            # more there were.
            if dropped == 0 or kept + dropped != calls or kept < limit // 2:
                raise Failure("%s: %r: want about %d calls kept (at least %d) and the rest of "
                              "%d dropped" % (label, m.group(0), limit, limit // 2, calls))
        else:
            m = re.search(r"^fnprof: wrote %s \((\d+) calls, (\d+) threads\)$"
                          % re.escape(trace), r.err, re.M)
            if not m:
                raise Failure("%s: no line \"fnprof: wrote %s (N calls, T threads)\"; stderr:\n%s"
                              % (label, trace, excerpt(r.err)))
            if (int(m.group(1)), int(m.group(2))) != (calls, threads):
                raise Failure("%s: %r: want %d calls, %d threads" % (label, m.group(0), calls,
                                                                   threads))
        c = run([sys.executable, "-B", checker, trace, out])
        sys.stdout.write(c.out + c.err)
        if c.status != 0 or not c.out.startswith("check_trace: ok"):
            raise Failure("%s: check_trace.py rejects the trace (status %d):\n%s"
                          % (label, c.status, excerpt(c.out + c.err)))
        check_trace_content(label, trace, r.pid, workers, shorts, regions, limit)


def check_trace_content(label, path, pid, workers, shorts, regions, limit):
    """What check_trace.py does not know: the threads' names (the workers name themselves,
    the others keep the program's), the regions' category and the program's metadata in
    otherData."""
    with open(path) as f:
        doc = json.load(f)
    problems = []
    names = {e["tid"]: e["args"]["name"] for e in doc["traceEvents"]
             if e.get("ph") == "M" and e.get("name") == "thread_name"}
    want = ["ctl-worker-%d" % i for i in range(workers)] + ["controls_trace"] * (1 + shorts)
    if sorted(names.values()) != sorted(want):
        problems.append("thread names %s, want %s" % (sorted(names.values()), sorted(want)))
    if names.get(pid) != "controls_trace":
        problems.append("main thread (tid %d) named %r" % (pid, names.get(pid)))
    cats = {}
    for e in doc["traceEvents"]:
        if e.get("ph") == "X":
            cats.setdefault(e["name"], set()).add(e.get("cat"))
    for name, got in sorted(cats.items()):
        want_cat = "region" if name in regions else "function"
        if got != {want_cat}:
            problems.append("events %r have cat %s, want %r" % (name, sorted(got), want_cat))
    if not limit and not regions <= set(cats):
        problems.append("no events for the regions %s" % sorted(regions - set(cats)))
    other = doc.get("otherData", {})
    for key in ("program", "pid", "start", "host", "fnprof", "clock"):
        if not other.get(key):
            problems.append("otherData has no %r" % key)
    if other.get("model") != "resnet" or other.get("pid") != str(pid):
        problems.append("otherData model %r, pid %r: want 'resnet', %r"
                        % (other.get("model"), other.get("pid"), str(pid)))
    if other.get("fnprof_events_limit") != (limit or 1000000):
        problems.append("otherData fnprof_events_limit %r, want %r"
                        % (other.get("fnprof_events_limit"), limit or 1000000))
    if problems:
        raise Failure("%s: %s:\n  %s" % (label, path, "\n  ".join(problems)))
    print("run_robust: %s: thread names, categories and otherData as expected" % label)


def case_meta(ctx):
    """fnprof_add_metadata: the trailer holds fnprof's keys and the program's pairs, the
    last value of a key given twice; fnprof report shows them."""
    api_case(ctx)
    spec = {
        "main": ((1, 1), {}),
        "work": ((4, 4), {"main": (4, 4)}),
        "leaf": ((8, 8), {"work": (8, 8)}),
    }
    plain, exe = ctx.build("controls_meta", False), ctx.build("controls_meta")
    ref = reference(ctx, plain, [])
    run_unset(ctx, exe, [], ref)
    started = time.time()
    r, outdir, _ = run_profiled(ctx, exe, [], ref)
    out = os.path.join(outdir, "out.prof")
    check_profile(out, spec, "meta", [src("controls_meta.c")])
    try:
        pairs = fnptree.read_meta(out)
    except fnptree.TreeError as e:
        raise Failure("meta: %s: the trailer does not load: %s" % (out, e))
    meta = dict(pairs)
    problems = []
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        problems.append("keys given more than once: %s" % keys)
    for key in ("program", "pid", "start", "host", "fnprof", "clock", "model", "batch"):
        if key not in meta:
            problems.append("no key %r" % key)
    want = {"program": os.path.realpath(exe), "pid": str(r.pid), "host": socket.gethostname(),
            "model": "resnet", "batch": "32"}
    for key, value in want.items():
        if key in meta and meta[key] != value:
            problems.append("%s is %r, want %r" % (key, meta[key], value))
    if meta.get("clock") not in ("tsc", "monotonic"):
        problems.append("clock is %r, want tsc or monotonic" % meta.get("clock"))
    try:
        start = calendar.timegm(time.strptime(meta.get("start", ""), "%Y-%m-%dT%H:%M:%SZ"))
        if not started - 2 <= start <= time.time() + 1:
            problems.append("start %s is not when the program ran" % meta["start"])
    except ValueError:
        problems.append("start %r is not ISO 8601 UTC (YYYY-MM-DDTHH:MM:SSZ)"
                        % meta.get("start"))
    if problems:
        raise Failure("meta: %s: metadata %s:\n  %s" % (out, pairs, "\n  ".join(problems)))
    print("run_robust: meta: %s" % pairs)
    tool = os.path.join(os.path.dirname(ctx.lib_dir), "bin", "fnprof")
    rep = run([tool, "report", out])
    shown = "\n".join("%s: %s" % kv for kv in pairs) + "\n"
    if rep.status != 0 or not rep.out.startswith(shown):
        raise Failure("meta: fnprof report (status %d) does not begin with the metadata, a "
                      "line \"key: value\" each:\n%s%s" % (rep.status, excerpt(rep.out),
                                                           excerpt(rep.err)))


CASES = {
    "deep": case_deep,
    "deep_chain": case_deep_chain,
    "reexec": case_reexec,
    "signals": case_signals,
    "dlopen": case_dlopen,
    "threads": case_threads,
    "threads_many": case_threads_many,
    "threads_exit": case_threads_exit,
    "trace_churn": case_trace_churn,
    "fork": case_fork,
    "exec": case_exec,
    "longjmp": case_longjmp,
    "except": case_except,
    "pause": case_pause,
    "pause_threads": case_pause_threads,
    "schedule": case_schedule,
    "reset": case_reset,
    "dumpsig": case_dumpsig,
    "trace": case_trace,
    "meta": case_meta,
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
                   help="fnprof's source tree (include/ for the programs, the runtime's "
                        "sources for --build-runtime)")
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
# SPDX-License-Identifier: MIT
