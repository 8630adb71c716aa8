#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/run's engine: builds every workload in every configuration, runs them interleaved
and prints the tables. Stdlib only. See bench/README.md for what each figure means.

Called by bench/run after the set-up (packages, sources, libfnprof.so); usable alone:
    python3 bench/harness.py --lib build-bench/lib [--quick] [--runs N] [--only fib,tiny]
"""
import argparse
import concurrent.futures
import glob
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
WL = BENCH / "workloads"
CACHE = BENCH / ".cache"
BUILD = CACHE / "build"
OUT = CACHE / "out"
LAUNCH = BUILD / "launch"  # tools/launch.c

CFLAGS = ["-O2", "-g"]
LIBS = ["-lpthread", "-lm", "-ldl"]
XRAY = ["-fxray-instrument", "-fxray-instruction-threshold=1"]


class Variant:
    """How one program variant is built: the compiler (gcc or clang, g++ or clang++ for C++
    sources), through fnprof's wrapper when wrapper is a list of its arguments, with flags
    at compile and link time and objects linked in besides mark.o."""

    def __init__(self, cflags=(), ldflags=None, compiler="gcc", wrapper=None, objs=()):
        self.cflags = list(cflags)
        self.ldflags = self.cflags if ldflags is None else list(ldflags)
        self.compiler, self.wrapper, self.objs = compiler, wrapper, list(objs)

    def command(self, cxx, bin_dir):
        real = {"gcc": "g++" if cxx else "gcc", "clang": "clang++" if cxx else "clang"}
        real = real[self.compiler]
        if self.wrapper is None:
            return [real], []
        tool = bin_dir / ("fnprof-c++" if cxx else "fnprof-cc")
        return (["env", f"{'FNPROF_CXX' if cxx else 'FNPROF_CC'}={real}",
                 f"XDG_CACHE_HOME={CACHE / 'xdg'}", tool, *self.wrapper], [tool])


# The program variants: base, instrumented (one binary for every hook configuration) and -pg
# always; the others (issue 25's rows) where their tools exist, see extra_variants.
VARIANTS = {
    "base": Variant(),
    "inst": Variant(["-finstrument-functions"]),
    "pg": Variant(["-pg"]),
}

# Every timed configuration, in the order of the table. callgrind is run apart (smaller
# sizes: it is 20-100x slower), see Runner.side_runs; so is fnprof-trace (see TRACE_REFS).
CONFIGS = ["base", "floor", "fnprof", "fnprof-count", "fnprof-off", "fnprof-paused",
           "fnprof-trace", "fnprof-pftrace", "limit", "limit-notime", "uftrace", "gprof"]

# fnprof-pftrace (issue 27): PROF_TRACE=<out>.pftrace, Perfetto's format streamed to disk by
# a writer thread while the program runs, every call kept in bounded memory. Unlike the
# JSON trace it runs at the full size, the size of the uftrace row it is held against; its
# own table (report_pftrace) compares whole runs, wall and CPU time (the writer thread runs
# on another processor: the program's user + system time counts its work too).

# Issue 25's configurations, timed in the same rounds and shown in a table of their own
# (report_patchable): the patchable build (fnprof-cc --patchable, libfnprof.so linked) off
# (no PROF_OUTPUT), on, paused from the start, and toggled by PROF_TOGGLE_SIGNAL from a side
# process every TOGGLE_MS; clang's base build; clang's XRay build on compiler-rt's XRay
# runtime, unpatched (patch_premain=false) and patched with a handler that returns at once.
PATCH_CONFIGS = ["patch-off", "patch-on", "patch-paused", "patch-toggle", "clang-base",
                 "xray-off", "xray-on"]
CONFIGS += PATCH_CONFIGS
TOGGLE_MS = 10

# fnprof-trace keeps every call (PROF_TRACE_EVENTS above the workload's calls, so that what
# is measured is the cost of recording, not the bound's drop path) and writes its JSON at
# exit, ~145-180 bytes per call: 0.5 s for 2 M calls, but 12 s (37 s on a loaded machine)
# and 3.1 GB for tiny's 20 M, as the kernel throttles a writer past its dirty-page limit;
# Lua's and SQLite's ~170 M calls would take 4 GB of buffers and ~30 GB of JSON a run. It
# runs at the "trace" size instead (7-12 M calls, ~1.5 GB of JSON: below the dirty limit of
# a machine with a few GB of memory), and the configurations its ratios need run beside it
# at that size, interleaved with it in the same rounds. (2-4 M calls were tried first: a
# work phase of 20-100 ms, which another process on the machine moved by half.)
TRACE_REFS = ["base", "floor", "fnprof", "limit", "uftrace"]

# uftrace's fastest honest mode: --no-libcall records the same functions as every other
# configuration (only the -finstrument-functions ones; library calls through the PLT would
# be extra work nobody else does), --no-event drops the scheduler events it records by
# default (nobody else records them). Its default buffer is kept (1 MB and 4 MB buffers
# were measured: no faster); --libmcount-single was ~3% faster on fib but applies to
# single-threaded programs only, so it is not used, for one set of options on every
# workload. The trace goes to a directory on the same disk as fnprof's profile.
UFTRACE = ["uftrace", "record", "--no-libcall", "--no-event"]

# Events the trace may keep beyond the calls counted: a thread's last buffer takes 4,096
# events from the budget at once, and the calls open at exit are added too.
TRACE_SLACK = 1 << 16

# The hot-path instruction counts (callgrind): base first, the reference of the others.
# The patchable build's, where it was built: its calls are the instrumented build's on the
# micro workloads (their functions are never inlined).
IR_PATCH = ["patch-off", "patch-paused", "patch-on"]
IR_CONFIGS = ["base", "floor", "fnprof-off", "fnprof", "fnprof-count", "fnprof-paused",
              "fnprof-trace", "fnprof-pftrace", "limit", "limit-notime"]


class Workload:
    def __init__(self, name, build, full, quick, small, trace, uftrace_extra=(), threads=1,
                 no_aslr=False, side=None, uftrace_note="", fnprof_env=None):
        self.name = name
        self.fnprof_env = fnprof_env or {}  # more variables for fnprof's configurations
        self.no_aslr = no_aslr
        # configurations run at another size than the others, against base at that size
        # ({config: size}); callgrind always runs at "small", fnprof-trace at "trace"
        self.side = {"callgrind": "small", "fnprof-trace": "trace", **(side or {})}
        self.uftrace_note = uftrace_note
        self.build = build  # key of the build (tiny and threads share one)
        self.sizes = {"full": full, "quick": quick, "small": small, "trace": trace}
        for config, size in (side or {}).items():
            if isinstance(size, list):
                self.sizes[config] = size
                self.side[config] = config
        self.uftrace_extra = list(uftrace_extra)
        self.threads = threads


def workloads():
    return [
        # fib(34): 18.5 M calls (fib(32), the trace's size: 7.1 M)
        Workload("fib", "fib", ["34"], ["22"], ["27"], ["32"]),
        # 20 M calls of a 3-instruction function
        Workload("tiny", "tiny", ["20000000", "1"], ["200000", "1"], ["1000000", "1"],
                 ["10000000", "1"]),
        # 5,000 distinct callees of one caller, 20 M calls in xorshift order. glibc's mcount
        # keeps one linked list of callees per call site and walks it on every call: gprof
        # takes ~14 us a call here (280 s for the full size), so it runs 100,000 calls
        Workload("many", "many", ["20000000"], ["200000"], ["1000000"], ["10000000"],
                 side={"gprof": ["100000"]}),
        # 200 descents to depth 100,000 (20 M calls). uftrace records 1,024 levels by
        # default and at most 65,535 (a larger --max-stack is ignored): its hooks still run
        # on every call, but a third of the calls are not written
        Workload("deep", "deep", ["200"], ["2"], ["10"], ["100"],
                 uftrace_extra=["--max-stack=65535"],
                 uftrace_note="records depth <= 65,535 only (its maximum)"),
        # past the node cap: 20 M calls of a leaf 300 levels below contexts merged beyond
        # PROF_MAX_NODES=100 (a recursion that never repeats gets there), every call on the
        # cold path; its cost must not grow with the depth (it scanned the stack)
        Workload("capped", "capped", ["20000000"], ["200000"], ["1000000"], ["10000000"],
                 fnprof_env={"PROF_MAX_NODES": "100"}),
        # tiny on 2 threads, 20 M calls each
        Workload("threads", "tiny", ["20000000", "2"], ["200000", "2"], ["1000000", "2"],
                 ["5000000", "2"], threads=2),
        # Lua's API string cache is indexed by the address of the C string, so with ASLR the
        # calls differ by ~0.4% from run to run: Lua runs without it, always the same calls
        # (the trace's sizes: 10.4 M calls for Lua, 11.5 M for SQLite)
        Workload("lua", "lua", ["@bench.lua", "50"], ["@bench.lua", "1"], ["@bench.lua", "2"],
                 ["@bench.lua", "3"], no_aslr=True),
        Workload("sqlite", "sqlite", ["--memdb", "--size", "35"], ["--memdb", "--size", "1"],
                 ["--memdb", "--size", "2"], ["--memdb", "--size", "3"]),
        # classes, templates, virtual calls and the standard library (workloads/cxx.cc): 100
        # rounds, 188 M calls where gcc instruments what it inlined (~60 ms base: nearly
        # every call is inlined); the trace's size 5 rounds, 9 M
        Workload("cxx", "cxx", ["100"], ["1"], ["1"], ["5"]),
    ]


# ---- building -----------------------------------------------------------------------------

def log(msg):
    print(f"bench: {msg}", file=sys.stderr, flush=True)


def sh(cmd, **kw):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)
    if r.returncode:
        sys.exit(f"bench: failed ({r.returncode}): {' '.join(map(str, cmd))}\n{r.stdout[-4000:]}")
    return r.stdout


def one_dir(pattern):
    found = sorted(glob.glob(str(CACHE / "src" / pattern)))
    if not found:
        sys.exit(f"bench: {pattern} not found under {CACHE / 'src'}: run bench/setup")
    return Path(found[-1])


def sources(key):
    """(source files, extra compile flags) of a build key; may generate files first."""
    if key in ("fib", "tiny", "deep", "capped"):
        return [WL / f"{key}.c"], []
    if key == "cxx":
        return [WL / "cxx.cc"], []
    if key == "many":
        gen = BUILD / "many" / "many.c"
        gen.parent.mkdir(parents=True, exist_ok=True)
        script = WL / "gen_many.py"
        if not gen.exists() or gen.stat().st_mtime < script.stat().st_mtime:
            sh([sys.executable, script, gen, "5000"])
        return [gen], []
    if key == "lua":
        src = one_dir("lua5.4-*") / "src"
        inc = BUILD / "lua" / "include"
        inc.mkdir(parents=True, exist_ok=True)
        # Debian's patched luaconf.h includes a header its rules generate.
        hdr = inc / "lua5.4-deb-multiarch.h"
        if not hdr.exists():
            triplet = sh(["gcc", "-dumpmachine"]).strip()
            hdr.write_text(f'#define DEB_HOST_MULTIARCH "{triplet}"\n')
        files = sorted(p for p in src.glob("*.c") if p.name != "luac.c")
        # Lua seeds its string hashes from time(NULL) and ASLR'd addresses, and table.sort
        # its pivots from clock(): the number of calls would differ run to run. Fixed seeds
        # (the hooks its sources leave for this) make every run make the same calls.
        return files, [f"-I{inc}", "-DLUA_USE_LINUX", "-Dluai_makeseed(L)=0x5eedu",
                       "-Dl_randomizePivot()=0x5eedu"]
    if key == "sqlite":
        src = one_dir("sqlite3-*")
        amalg = CACHE / "sqlite-amalg"
        if not (amalg / "sqlite3.c").exists():
            log("making the sqlite amalgamation (configure; make sqlite3.c)")
            amalg.mkdir(parents=True, exist_ok=True)
            sh([src / "configure"], cwd=amalg)
            sh(["make", "sqlite3.c"], cwd=amalg)
        return [src / "test" / "speedtest1.c", amalg / "sqlite3.c"], [f"-I{amalg}"]
    raise KeyError(key)


class Job:
    """A command producing out, redone when the command or an input's mtime changed. The
    inputs are looked at when needed() is asked: a link's objects are made by the compile
    jobs before it."""

    def __init__(self, cmd, out, inputs):
        self.cmd = [str(c) for c in cmd]
        self.out = Path(out)
        self.inputs = list(inputs)
        self.stamp = None
        self.stamp_file = self.out.with_name(self.out.name + ".cmd")

    def needed(self):
        self.stamp = " ".join(self.cmd) + "\n" + "\n".join(
            f"{p} {Path(p).stat().st_mtime_ns}" for p in self.inputs)
        return not (self.out.exists() and self.stamp_file.exists()
                    and self.stamp_file.read_text() == self.stamp)

    def run(self):
        self.out.parent.mkdir(parents=True, exist_ok=True)
        sh(self.cmd)
        self.stamp_file.write_text(self.stamp)


def run_jobs(jobs):
    todo = [j for j in jobs if j.needed()]
    if not todo:
        return
    # the amalgamation first: it is the longest compile by far
    todo.sort(key=lambda j: -max((Path(c).stat().st_size for c in j.cmd if c.endswith(".c")),
                                 default=0))
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        for f in [pool.submit(j.run) for j in todo]:
            f.result()


def extra_variants(bin_dir, notes):
    """Adds issue 25's variants to VARIANTS where their tools exist; notes why not otherwise:
    patch (fnprof-cc --patchable, gcc: the assembler filter's nop sites), clang (clang's
    base), xray (clang's XRay sleds with compiler-rt's XRay runtime and xray_noop.o)."""
    wrapper = bin_dir / "fnprof-cc"
    help_text = subprocess.run([str(wrapper), "--fnprof-help"], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True).stdout if wrapper.exists() \
        else ""
    if "--patchable" in help_text:
        VARIANTS["patch"] = Variant(wrapper=["--patchable"])
    else:
        notes.append("patch-*: pending: this fnprof's fnprof-cc has no --patchable")
    if not shutil.which("clang"):
        notes.append("clang-base, xray-*: not run: no clang")
        return
    VARIANTS["clang"] = Variant(compiler="clang")
    rt = subprocess.run(["clang", "--print-runtime-dir"], stdout=subprocess.PIPE,
                        text=True).stdout.strip()
    if not (Path(rt) / "libclang_rt.xray-x86_64.a").exists():
        notes.append(f"xray-*: not run: no libclang_rt.xray-x86_64.a in {rt} (libclang-rt-dev)")
        return
    VARIANTS["xray"] = Variant(XRAY, ["-fxray-instrument"], compiler="clang",
                               objs=[BUILD / "hooks" / "xray_noop.o"])


def build_all(keys, hook_libs, bin_dir):
    """Builds every program variant of keys; returns {(key, variant): path}."""
    mark_objs, compiles, links, progs = {}, [], [], {}
    for variant in VARIANTS:
        # mark.o is never instrumented nor -pg: it only timestamps the end of main's work
        obj = BUILD / "mark" / variant / "mark.o"
        compiles.append(Job(["gcc", *CFLAGS, "-c", WL / "mark.c", "-o", obj], obj,
                            [WL / "mark.c"]))
        mark_objs[variant] = obj
    if "xray" in VARIANTS:
        src, obj = BENCH / "hooks" / "xray_noop.c", BUILD / "hooks" / "xray_noop.o"
        compiles.append(Job(["clang", *CFLAGS, "-c", src, "-o", obj], obj, [src]))
    for key in keys:
        files, extra = sources(key)
        cxx = any(Path(f).suffix == ".cc" for f in files)
        for variant, v in VARIANTS.items():
            cc, tools = v.command(cxx, bin_dir)
            objs = []
            for f in files:
                obj = BUILD / key / variant / (Path(f).stem + ".o")
                compiles.append(Job([*cc, *CFLAGS, *v.cflags, *extra, "-c", f, "-o", obj], obj,
                                    [f, *tools]))
                objs.append(obj)
            prog = BUILD / key / variant / key
            links.append(Job([*cc, *CFLAGS, *v.ldflags, "-o", prog, *objs, *v.objs,
                              mark_objs[variant], *LIBS], prog, [*objs, *v.objs, *tools]))
            progs[(key, variant)] = prog
    for name, defs in (("limit", []), ("limit-notime", ["-DLIMIT_NOTIME"])):
        so = BUILD / "hooks" / f"{name}.so"
        src = BENCH / "hooks" / "limit.c"
        # the flags fnprof's runtime is built with (RelWithDebInfo, PIC, no instrumentation)
        compiles.append(Job(["gcc", "-O2", "-g", "-fPIC", "-shared", *defs, src, "-o", so], so,
                            [src]))
        hook_libs[name] = so
    compiles.append(Job(["gcc", "-O2", "-o", LAUNCH, BENCH / "tools" / "launch.c"], LAUNCH,
                        [BENCH / "tools" / "launch.c"]))
    t = time.monotonic()
    run_jobs(compiles)
    run_jobs(links)
    log(f"builds up to date ({time.monotonic() - t:.0f} s)")
    return progs


# The regions workload (workloads/regions.c): its loops, the configurations it runs under
# (fnprof's only: the other profilers have no regions) and its iterations per size.
REGION_MODES = ["plain", "call", "region", "begin"]
REGION_CONFIGS = ["fnprof", "fnprof-count", "fnprof-paused", "fnprof-off"]
REGION_N = {"full": 20000000, "quick": 200000}


def build_regions(lib_dir):
    """The regions workload, built against the fnprof measured: its header, and linked with
    its libfnprof.so (the program calls the region functions, so it links the library as
    any program using the API does; an rpath finds it). Returns (path, None) or (None, why)."""
    inc = lib_dir.parent.parent / "include"  # build-bench/lib, or a --rev tree's build/lib
    header = inc / "fnprof.h"
    if not header.exists() or "fnprof_region_enter" not in header.read_text():
        return None, f"no {header} declaring fnprof_region_enter (fnprof without regions)"
    src, mark = WL / "regions.c", BUILD / "mark" / "inst" / "mark.o"
    prog = BUILD / "regions" / "regions"
    run_jobs([Job(["gcc", *CFLAGS, "-finstrument-functions", f"-I{inc}", src, mark, "-o", prog,
                   f"-L{lib_dir}", f"-Wl,-rpath,{lib_dir}", "-lfnprof", *LIBS], prog,
                  [src, header, mark])])
    return prog, None


# ---- running -------------------------------------------------------------------------------

def clean_env():
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PROF_", "BENCH_")) and k not in ("LD_PRELOAD",)}
    env["LC_ALL"] = "C"
    if sum(len(k) + len(v) + 2 for k, v in env.items()) > 3000:
        # keep what programs need; the rest would not leave room for the padding
        env = {k: env[k] for k in ("PATH", "HOME", "LC_ALL", "TMPDIR") if k in env}
    return env


BASE_ENV = clean_env()




# Every run gets these variables, empty where unused, and BENCH_PAD brings the environment
# to one size: the program's stack then starts at the same address in every configuration.
# With ASLR off (Lua), that makes the calls identical: Lua's string cache is indexed by the
# address of the C string, argv and getenv's strings included, and one miss more or less
# moves its garbage collector's steps (a 50-byte variable changed the calls by 0.01%).
RUN_VARS = ["LD_PRELOAD", "PROF_OUTPUT", "PROF_TIMER", "PROF_START", "PROF_TRACE",
            "PROF_TRACE_EVENTS", "PROF_MAX_NODES", "PROF_TOGGLE_SIGNAL", "XRAY_OPTIONS",
            "BENCH_MARK", "BENCH_COUNT", "BENCH_XRAY_NOOP"]
ENV_SIZE = 4096


def run_env(extra):
    env = dict(BASE_ENV)
    env.update({k: "" for k in RUN_VARS})
    env.update({k: str(v) for k, v in (extra or {}).items()})
    env["BENCH_PAD"] = ""
    used = sum(len(k) + len(v) + 2 for k, v in env.items())
    env["BENCH_PAD"] = "x" * max(0, ENV_SIZE - used)
    return env


def spawn(argv, env_extra=None, cwd=None, err=None, fixed_layout=False):
    """Runs argv once through tools/launch.c, which times it and takes its rusage from a
    small parent (a Python child would report the interpreter's RSS as its peak); returns
    (wall ns, peak RSS KB, end time ns, exit status). ru_maxrss covers the command's own
    waited children too, e.g. the program under uftrace."""
    return spawn_signalled(argv, env_extra, cwd, err, fixed_layout)[:4]


def spawn_signalled(argv, env_extra=None, cwd=None, err=None, fixed_layout=False, signal=None):
    """spawn, and with signal ("SIG:MS", signal numbers) launch.c's side process sends the
    program that signal every MS ms once it catches it; returns spawn's four figures, the
    signals sent and the program's CPU time (user + system, ns)."""
    env = run_env(env_extra)
    preload = env.pop("LD_PRELOAD", "")  # set again, empty or not, for the program only
    errf = open(err, "wb") if err else subprocess.DEVNULL
    report = OUT / f"launch.{os.getpid()}"
    argv = [str(a) for a in argv]
    if not Path(argv[0]).is_absolute():
        argv[0] = shutil.which(argv[0]) or argv[0]
    cmd = [str(LAUNCH), *(["-R"] if fixed_layout else []), *(["-s", signal] if signal else []),
           "-p", preload, str(report), *argv]
    rc = subprocess.run(cmd, env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                        stdout=subprocess.DEVNULL, stderr=errf).returncode
    if err:
        errf.close()
    if rc != 0:
        sys.exit(f"bench: {LAUNCH.name} failed ({rc}) running {' '.join(argv)}")
    wall, rss, end, status, sent, cpu = (int(x) for x in report.read_text().split())
    return wall, rss, end, os.waitstatus_to_exitcode(status), sent, cpu


def dir_size(path):
    total = 0
    for dirpath, _, files in os.walk(path):
        for f in files:
            try:
                total += os.stat(os.path.join(dirpath, f)).st_size
            except OSError:
                pass
    return total


class Runner:
    def __init__(self, args, lib_dir, progs, hook_libs):
        self.args = args
        self.libfnprof = lib_dir / "libfnprof.so"
        self.progs = progs
        self.hook_libs = hook_libs
        self.trace_events = {}  # PROF_TRACE_EVENTS per workload: its calls at the trace's size
        self.notes = []
        OUT.mkdir(parents=True, exist_ok=True)
        # configurations whose build or runtime feature is missing: not run, shown as pending
        self.skip = {}
        for c, variant in (("patch-", "patch"), ("clang-base", "clang"), ("xray-", "xray")):
            if variant not in VARIANTS:
                self.skip.update({k: "not built" for k in PATCH_CONFIGS if k.startswith(c)})
        if b"PROF_TOGGLE_SIGNAL" not in self.libfnprof.read_bytes():
            self.skip["patch-toggle"] = "pending: this libfnprof.so has no PROF_TOGGLE_SIGNAL"

    def count_xray(self, w, size):
        """Calls of the XRay build (its handler counts entries: hooks/xray_noop.c)."""
        out = OUT / f"{w.name}.{size}.xray.count"
        out.unlink(missing_ok=True)
        _, _, _, rc = spawn(self.argv(w, "xray", size),
                            {"XRAY_OPTIONS": "patch_premain=true", "BENCH_COUNT": out},
                            fixed_layout=w.no_aslr)
        if rc or not out.exists():
            sys.exit(f"bench: {w.name} (xray) exited {rc} while counting calls")
        return int(out.read_text())

    def note(self, text):
        if text not in self.notes:
            self.notes.append(text)

    def argv(self, w, variant, size):
        args = [str(WL / a[1:]) if a.startswith("@") else a for a in w.sizes[size]]
        return [self.progs[(w.build, variant)], *args]

    def count_calls(self, w, size):
        """Instrumented call pairs, counted by limit-notime (every thread, exact)."""
        out = OUT / f"{w.name}.{size}.count"
        out.unlink(missing_ok=True)
        _, _, _, rc = spawn(self.argv(w, "inst", size),
                            {"LD_PRELOAD": self.hook_libs["limit-notime"], "BENCH_COUNT": out},
                            fixed_layout=w.no_aslr)
        if rc:
            sys.exit(f"bench: {w.name} exited {rc} while counting calls")
        return int(out.read_text())

    def run_config(self, w, config, size, tag=None):
        """One run; returns a dict of what was measured. tag names its files (default the
        configuration): a reference run beside a side configuration must not overwrite the
        main run's profile, which views.py reads at the end."""
        stem = f"{w.name}.{tag or config}"
        err = OUT / f"{stem}.err"
        mark = OUT / f"{stem}.mark"
        mark.unlink(missing_ok=True)
        env, cwd, size_of, post = {"BENCH_MARK": mark}, None, None, None
        variant = "inst"
        argv = None
        trace = None
        toggle = None
        if config == "base":
            variant = "base"
        elif config in ("fnprof", "fnprof-count", "fnprof-trace", "fnprof-pftrace"):
            prof = OUT / f"{stem}.prof"
            prof.unlink(missing_ok=True)
            env.update(LD_PRELOAD=self.libfnprof, PROF_OUTPUT=prof)
            if config == "fnprof-count":
                env["PROF_TIMER"] = "none"
            size_of = prof
            if config == "fnprof-trace":
                trace = OUT / f"{stem}.trace.json"
                trace.unlink(missing_ok=True)
                env.update(PROF_TRACE=trace, PROF_TRACE_EVENTS=self.trace_events[w.name])
                size_of = trace
            elif config == "fnprof-pftrace":
                trace = OUT / f"{stem}.pftrace"
                trace.unlink(missing_ok=True)
                env["PROF_TRACE"] = trace
                size_of = trace
        elif config == "fnprof-paused":
            # nothing is recorded, so no profile is written (fnprof says so on stderr)
            env.update(LD_PRELOAD=self.libfnprof, PROF_OUTPUT=OUT / f"{stem}.prof",
                       PROF_START="paused")
        elif config == "fnprof-off":
            env["LD_PRELOAD"] = self.libfnprof
        elif config in ("limit", "limit-notime"):
            env["LD_PRELOAD"] = self.hook_libs[config]
        elif config == "uftrace":
            data = OUT / f"{stem}.data"
            shutil.rmtree(data, ignore_errors=True)
            # the program under uftrace marks the end of its work too (its work phase then
            # includes uftrace's start-up; its tail, the recorder's last writes)
            env = {"BENCH_MARK": mark}
            argv = [*UFTRACE, *w.uftrace_extra, "-d", data, *self.argv(w, "inst", size)]
            size_of = data
        elif config == "callgrind":
            variant = "base"
            cg_out = OUT / f"{w.name}.callgrind.out"
            cg_out.unlink(missing_ok=True)
            env = {}
            argv = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={cg_out}",
                    *self.argv(w, "base", size)]
            size_of = cg_out
        elif config == "gprof":
            variant = "pg"
            cwd = OUT / f"{w.name}.gprof"
            cwd.mkdir(exist_ok=True)
            (cwd / "gmon.out").unlink(missing_ok=True)
            size_of = cwd / "gmon.out"
            post = ["gprof", "-b", self.progs[(w.build, "pg")], cwd / "gmon.out"]
        elif config.startswith("patch-"):
            # libfnprof.so is linked (fnprof-cc), not preloaded; patch-off leaves it unarmed
            variant = "patch"
            if config != "patch-off":
                prof = OUT / f"{stem}.prof"
                prof.unlink(missing_ok=True)
                env["PROF_OUTPUT"] = prof
                size_of = prof
            if config == "patch-paused":
                env["PROF_START"] = "paused"
            elif config == "patch-toggle":
                env["PROF_TOGGLE_SIGNAL"] = "USR1"
                toggle = f"{int(signal.SIGUSR1)}:{TOGGLE_MS}"
        elif config == "clang-base":
            variant = "clang"
        elif config in ("xray-off", "xray-on"):
            variant = "xray"
            env["XRAY_OPTIONS"] = "patch_premain=" + ("true" if config == "xray-on" else "false")
            if config == "xray-on":
                env["BENCH_XRAY_NOOP"] = "1"
        if config.startswith(("fnprof", "patch-")):
            env.update(w.fnprof_env)
        if argv is None:
            argv = self.argv(w, variant, size)
        wall, rss, end, rc, sent, cpu = spawn_signalled(argv, env, cwd=cwd, err=err,
                                                        fixed_layout=w.no_aslr, signal=toggle)
        text = err.read_text(errors="replace")
        if rc:
            sys.exit(f"bench: {w.name}/{config} exited {rc}:\n{text[-2000:]}")
        r = {"wall": wall, "rss": rss, "cpu": cpu}
        if toggle:
            r["signals"] = sent
        if mark.exists() and mark.read_text().strip():
            r["tail"] = end - int(mark.read_text())
            r["work"] = wall - r["tail"]
        if size_of is not None:
            p = Path(size_of)
            r["size"] = dir_size(p) if p.is_dir() else (p.stat().st_size if p.exists() else 0)
            if config.startswith(("fnprof", "patch-")) and not p.exists():
                self.note(f"{w.name}/{config}: no profile written: {text.strip()[-300:]}")
        if trace is not None:
            trace.unlink(missing_ok=True)  # GBs at the full sizes: kept by no run
        if post:
            t0 = time.monotonic_ns()
            subprocess.run([str(a) for a in post], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, check=True)
            r["post"] = time.monotonic_ns() - t0
        if config.startswith(("fnprof", "patch-")):
            for line in text.splitlines():
                m = re.search(r"fnprof: wrote .*\((\d+) functions, (\d+) calls", line)
                t = trace and re.search(r"fnprof: wrote .*\((\d+) calls", line)
                if m:
                    r["fnprof_calls"] = int(m.group(2))
                elif t:
                    r["trace_events"] = int(t.group(1))
                elif config in ("fnprof-paused", "patch-paused") and \
                        "no instrumented call was recorded" in line:
                    pass  # expected: paused from start to end
                elif "PROF_MAX_NODES" in w.fnprof_env and "were merged by caller" in line:
                    pass  # expected: the workload runs past the node cap
                elif "no DWARF debug info" in line:
                    pass  # a system library's names from its symbols (cxx: libstdc++)
                elif line.startswith("fnprof:"):
                    self.note(f"{w.name}/{config}: {line.strip()}")
                    if "not traced" in line:
                        r["warn"] = "calls dropped from the trace: see the notes"
            if trace and r.get("trace_events") != r.get("fnprof_calls"):
                # every call is meant to be kept: the trace holds what the profile counted
                self.note(f"{w.name}/{config}: the trace holds {r.get('trace_events')} calls, "
                          f"the profile {r.get('fnprof_calls')}")
            if config == "fnprof-count" and "unknown timer" in text:
                r["warn"] = "PROF_TIMER=none not supported: ran with a clock"
        if config == "uftrace":
            shutil.rmtree(OUT / f"{stem}.data", ignore_errors=True)
        return r

    def timed(self, ws, size, rounds):
        """rounds interleaved rounds; the first is a warm-up and is dropped."""
        samples = {(w.name, c): [] for w in ws for c in CONFIGS}
        t_start = time.monotonic()
        for r in range(rounds):
            for w in ws:
                # rotate the order every round: no configuration always runs right after
                # the same other one, or always first
                order = CONFIGS[r % len(CONFIGS):] + CONFIGS[:r % len(CONFIGS)]
                for c in order:
                    if c in w.side or c in self.skip:
                        continue
                    res = self.run_config(w, c, size)
                    if r > 0 or rounds == 1:
                        samples[(w.name, c)].append(res)
            log(f"round {r + 1}/{rounds} done ({time.monotonic() - t_start:.0f} s)"
                + (" (warm-up)" if r == 0 and rounds > 1 else ""))
        return samples

    def side_runs(self, ws, rounds, quick):
        """The configurations run at their own size (callgrind; gprof where its cost
        explodes; fnprof-trace), each interleaved with base at the same size, fnprof-trace
        with every configuration of TRACE_REFS. Keys (workload, config) and (workload,
        ref + "@" + config)."""
        res = {}
        items = [(w, c, "quick" if quick else size) for w in ws for c, size in w.side.items()]
        group = {}
        for w, c, _ in items:
            refs = TRACE_REFS if c == "fnprof-trace" else ["base"]
            # a reference whose configuration was left out (--configs) is not run
            group[(w.name, c)] = [(f"{ref}@{c}", ref) for ref in refs
                                  if ref == "base" or ref in CONFIGS] + [(c, c)]
            for key, _ in group[(w.name, c)]:
                res[(w.name, key)] = []
        for r in range(rounds):
            for w, c, size in items:
                g = group[(w.name, c)]
                for key, config in g[r % len(g):] + g[:r % len(g)]:
                    got = self.run_config(w, config, size, tag=key)
                    if r > 0 or rounds == 1:
                        res[(w.name, key)].append(got)
            log(f"side round {r + 1}/{rounds} done ({', '.join(sorted({c for _, c, _ in items}))})")
        return res

    def regions(self, prog, n, rounds):
        """The regions workload: every loop under every configuration of REGION_CONFIGS,
        interleaved, order rotated every round, the first round a warm-up. Returns
        {(config, mode): [samples]}."""
        pairs = [(c, m) for c in REGION_CONFIGS if c in CONFIGS for m in REGION_MODES]
        res = {p: [] for p in pairs}
        for r in range(rounds):
            for config, mode in pairs[r % len(pairs):] + pairs[:r % len(pairs)]:
                stem = OUT / f"regions.{config}.{mode}"
                mark, err = Path(f"{stem}.mark"), Path(f"{stem}.err")
                mark.unlink(missing_ok=True)
                env = {"BENCH_MARK": mark}
                if config != "fnprof-off":
                    env["PROF_OUTPUT"] = f"{stem}.prof"
                if config == "fnprof-count":
                    env["PROF_TIMER"] = "none"
                elif config == "fnprof-paused":
                    env["PROF_START"] = "paused"
                wall, rss, end, rc = spawn([prog, mode, n], env, err=err)
                text = err.read_text(errors="replace")
                if rc or not mark.exists():
                    sys.exit(f"bench: regions {mode}/{config} exited {rc}:\n{text[-2000:]}")
                for line in text.splitlines():
                    m = re.search(r"fnprof: wrote .*\((\d+) functions, (\d+) calls", line)
                    # each loop but plain records n calls or regions, and main one
                    if m and mode != "plain" and int(m.group(2)) != n + 1:
                        self.note(f"regions/{config}/{mode}: {int(m.group(2)):,} calls "
                                  f"recorded, {n + 1:,} made")
                    elif (line.startswith("fnprof:") and not m and "only one function" not in
                          line and "no instrumented call was recorded" not in line):
                        self.note(f"regions/{config}/{mode}: {line.strip()}")
                tail = end - int(mark.read_text())
                if r > 0 or rounds == 1:
                    res[(config, mode)].append({"wall": wall, "tail": tail, "work": wall - tail})
            log(f"regions round {r + 1}/{rounds} done")
        return res

    def hook_instructions(self, ws, size):
        """Instructions per call pair under callgrind, counted while main is on the stack
        (--toggle-collect=main: start-up and the exit dump are left out): those of the hook
        library (the two hooks and any cold path they take; for floor, glibc's no-op pair),
        and all of them (the hooks, the PLT stubs, the instrumented code around the calls)
        above base and above floor. Exclusive costs only: callgrind's inclusive costs
        follow its call tracking, which a hook reached through a PLT stub can confuse."""
        rows = {}
        for w in ws:
            calls = self.count_calls(w, size)
            for config in IR_CONFIGS + [c for c in IR_PATCH if c not in self.skip]:
                out = OUT / f"{w.name}.{config}.ir.out"
                out.unlink(missing_ok=True)
                env, hook_object = {}, None
                trace = OUT / f"{w.name}.{config}.ir.{'pftrace' if 'pf' in config else 'json'}"
                if config in ("fnprof", "fnprof-count", "fnprof-paused", "fnprof-trace",
                              "fnprof-pftrace"):
                    env.update(PROF_OUTPUT=OUT / f"{w.name}.{config}.ir.prof", PROF_QUIET="1")
                    if config == "fnprof-count":
                        env["PROF_TIMER"] = "none"
                    elif config == "fnprof-paused":
                        env["PROF_START"] = "paused"
                    elif config == "fnprof-trace":
                        # every call kept, as in the timed runs (stores, not page faults:
                        # callgrind counts no kernel work)
                        env.update(PROF_TRACE=trace, PROF_TRACE_EVENTS=calls + TRACE_SLACK)
                    elif config == "fnprof-pftrace":
                        # the program's thread only (--toggle-collect=main): the writer
                        # thread's encoding is not counted here (see bench/README.md)
                        env["PROF_TRACE"] = trace
                if config.startswith("fnprof"):
                    env["LD_PRELOAD"] = self.libfnprof
                    env.update(w.fnprof_env)
                    hook_object = "/libfnprof.so"
                elif config.startswith("limit"):
                    env["LD_PRELOAD"] = self.hook_libs[config]
                    hook_object = f"/{config}.so"
                variant = "base" if config == "base" else "inst"
                smc = []
                if config.startswith("patch-"):
                    # the linked libfnprof.so's stubs and trampolines are its instructions;
                    # the program's text is patched at run time, which valgrind sees only
                    # when it checks every block for changes (--smc-check=all)
                    variant, hook_object, smc = "patch", "/libfnprof.so", ["--smc-check=all"]
                    env.update(w.fnprof_env)
                    if config != "patch-off":
                        env.update(PROF_OUTPUT=OUT / f"{w.name}.{config}.ir.prof",
                                   PROF_QUIET="1")
                        (OUT / f"{w.name}.{config}.ir.prof").unlink(missing_ok=True)
                    if config == "patch-paused":
                        env["PROF_START"] = "paused"
                cg = ["valgrind", "--tool=callgrind", "--toggle-collect=main", *smc,
                      f"--callgrind-out-file={out}", *self.argv(w, variant, size)]
                _, _, _, rc = spawn(cg, env, err=OUT / f"{w.name}.{config}.ir.err",
                                    fixed_layout=w.no_aslr)
                trace.unlink(missing_ok=True)
                if rc:
                    sys.exit(f"bench: callgrind {w.name}/{config} failed")
                ann = subprocess.run(["callgrind_annotate", "--auto=no", "--threshold=100",
                                      str(out)], stdout=subprocess.PIPE, text=True,
                                     check=True).stdout
                total = hooks = 0
                # code inlined from a header is listed under its function without the
                # object: such lines take the object the same function has elsewhere
                objects = {}
                for line in ann.splitlines():
                    m = re.match(r"\s*[\d,]+\s+(?:\([^)]*\)\s+)?(\S.*) \[(.*)\]$", line)
                    if m:
                        objects[m.group(1).rsplit(":", 1)[-1]] = m.group(2)
                for line in ann.splitlines():
                    m = re.match(r"\s*([\d,]+)\s+(?:\([^)]*\)\s+)?(\S.*)$", line)
                    if not m:
                        continue
                    ir = int(m.group(1).replace(",", ""))
                    what = m.group(2)
                    if what.startswith("PROGRAM TOTALS"):
                        total = ir
                        continue
                    fn = what.split(" [")[0].rsplit(":", 1)[-1]
                    obj = what[what.rfind(" [") + 2:-1] if what.endswith("]") else objects.get(
                        fn, "")
                    if fn.startswith("__cyg_profile_func_") or (hook_object and hook_object in obj):
                        hooks += ir
                rows[(w.name, config)] = {"calls": calls, "main": total, "hooks": hooks}
                if config == "patch-on" and not (OUT / f"{w.name}.{config}.ir.prof").exists():
                    rows[(w.name, config)]["pending"] = True  # the runtime patched nothing
        return rows


# ---- figures and tables --------------------------------------------------------------------

def med(xs):
    return statistics.median(xs) if xs else None


def fmt_ms(ns):
    return "-" if ns is None else f"{ns / 1e6:.0f}" if ns >= 1e8 else f"{ns / 1e6:.1f}"


def fmt_size(n):
    if n is None:
        return "-"
    for unit, scale in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f}{unit}"
    return f"{n}B"


def table(header, rows, align=None):
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    align = align or ["<"] + [">"] * (len(header) - 1)
    lines = []
    for k, r in enumerate([header] + rows):
        lines.append("  ".join(f"{str(c):{a}{wd}}" for c, a, wd in zip(r, align, widths)).rstrip())
        if k == 0:
            lines.append("  ".join("-" * wd for wd in widths))
    return "\n".join(lines)


def summarize(samples, key):
    """median, min, max of the samples' field key."""
    xs = [s[key] for s in samples if key in s]
    if not xs:
        return None, None, None
    return med(xs), min(xs), max(xs)


def verdict(value, target, le=True):
    if value is None:
        return "n/a"
    ok = value <= target if le else value >= target
    return "met" if ok else "MISSED"


def ratio_cell(num, ref, target, noise):
    """'num/ref = r verdict'; a reference within the noise makes the ratio meaningless."""
    if ref < noise:
        return f"{num:.1f}/{ref:.1f} ns: ref ~0"
    r = num / ref
    return f"{num:.1f}/{ref:.1f} = {r:.2f} {verdict(r, target)}"


def report_trace(ws, calls, samples, side):
    """Issue 13's rows: the trace's per-call cost (at the trace's size, beside its
    references) and the paused one (at the full size, from the main runs), both over the
    work phase, start to BENCH_MARK: the trace's JSON is written in the tail, after it."""
    rows, trows = [], []
    for w in ws:
        trace = side.get((w.name, "fnprof-trace")) if side else None
        paused = samples.get((w.name, "fnprof-paused"))
        if not trace and not paused:
            continue
        med_of = {}  # config -> (work median, wall median, calls), per group
        first = True
        groups = []
        if trace:
            refs = [r for r in TRACE_REFS if (w.name, f"{r}@fnprof-trace") in side]
            groups.append((calls[(w.name, "fnprof-trace")], "*",
                           [(r, side[(w.name, f"{r}@fnprof-trace")]) for r in refs]
                           + [("fnprof-trace", trace)]))
        if paused:
            groups.append((calls[w.name], "", [("base", samples[(w.name, "base")]),
                                               ("floor", samples[(w.name, "floor")]),
                                               ("fnprof-paused", paused)]))
        for c, mark, group in groups:
            shown = False
            wb = summarize(group[0][1], "work")[0]
            wf = next((summarize(s, "work")[0] for k, s in group if k == "floor"), None)
            for config, s in group:
                m, lo, hi = summarize(s, "work")
                if m is None:  # no mark: the program did not run to its end
                    continue
                med_of[config + mark] = (m, summarize(s, "wall")[0], c)
                if mark == "" and config in ("base", "floor"):
                    continue  # shown in the main table
                tail = summarize(s, "tail")[0]
                size = summarize(s, "size")[0]
                rows.append([w.name if first else "", "" if shown else f"{c:,}",
                             config + mark, fmt_ms(m), f"{fmt_ms(lo)}-{fmt_ms(hi)}",
                             "-" if config == "base" else f"{(m - wb) / c:.1f}",
                             "-" if config in ("base", "floor") or wf is None
                             else f"{(m - wf) / c:.1f}",
                             fmt_ms(tail), f"{summarize(s, 'rss')[0] / 1024:.1f}",
                             fmt_size(size)])
                first, shown = False, True

        def per_call(config, ref, key=0):  # (config - ref) per call, work (0) or wall (1)
            a, r = med_of[config], med_of[ref]
            return (a[key] - r[key]) / a[2]

        def cell(f):
            try:
                return f()
            except KeyError:
                return "-"

        def ratio(num, ref, target, le=True):
            v = num / ref
            return f"{num:.1f}/{ref:.1f} = {v:.2f} {verdict(v, target, le)}"

        trows.append([
            w.name,
            cell(lambda: ratio(per_call("fnprof-trace*", "floor*"),
                               per_call("limit*", "floor*"), 1.5)),
            cell(lambda: ratio(per_call("uftrace*", "base*"),
                               per_call("fnprof-trace*", "base*"), 4, le=False)),
            cell(lambda: "{:.2f}".format(per_call("uftrace*", "base*", 1)
                                         / per_call("fnprof-trace*", "base*", 1))),
            cell(lambda: f"{per_call('fnprof-trace*', 'fnprof*'):+.1f}"),
            cell(lambda: f"{per_call('fnprof-paused', 'base') / per_call('floor', 'base'):.2f}"
                 f" ({per_call('fnprof-paused', 'floor'):+.1f} ns)")])
    if not rows:
        return []
    out = ["", "Trace (PROF_TRACE, every call kept) and pause (PROF_START=paused), per call over "
           "the work phase:",
           "start to the program's BENCH_MARK, before the exit tail where the trace's JSON is "
           "written; * at the trace's size,",
           "interleaved with the references beside it; fnprof-paused at the full size, against "
           "base and floor above"]
    out.append(table(["workload", "calls", "config", "work ms", "min-max", "ns/call>base",
                      "ns/call>floor", "tail ms", "RSS MB", "output"], rows,
                     ["<", ">", "<", ">", ">", ">", ">", ">", ">", ">"]))
    out.append("")
    out.append("Targets of issue 13 (work phase; ns per call):")
    out.append(table(["workload", "trace/limit >floor (<=1.5)", "uftrace/trace >base (>=4)",
                      "same, whole runs", "trace-fnprof ns", "paused/floor >base (~1)"],
                     trows))
    return out


def report_pftrace(ws, calls, samples):
    """Issue 27's rows: the streamed Perfetto trace (fnprof-pftrace) against the limit hook
    and uftrace, at the full size, over whole runs (the file is written while the program
    runs and finished at exit, as uftrace's is), by wall time and by CPU time (user + system
    of every thread: the writer's encoding runs on another processor, which the wall time of
    a machine with one to spare does not show); bytes per call on disk and peak RSS."""
    keys = ("base", "floor", "fnprof", "fnprof-pftrace", "limit", "uftrace")
    rows, trows = [], []
    for w in ws:
        if not samples.get((w.name, "fnprof-pftrace")):
            continue
        c = calls[w.name]
        med = {(k, f): summarize(samples.get((w.name, k), []), f)[0]
               for k in keys for f in ("wall", "cpu", "rss", "size")}

        def per(x, ref, f):
            a, b = med[(x, f)], med[(ref, f)]
            return None if a is None or b is None else (a - b) / c

        def show(v, fmt="{:.1f}"):
            return "-" if v is None else fmt.format(v)

        first = True
        for k in ("fnprof", "fnprof-pftrace", "limit", "uftrace"):
            if med[(k, "wall")] is None:
                continue
            size = med[(k, "size")]
            rows.append([w.name if first else "", f"{c:,}" if first else "", k,
                         fmt_ms(med[(k, "wall")]), show(per(k, "floor", "wall")),
                         fmt_ms(med[(k, "cpu")]), show(per(k, "floor", "cpu")),
                         show(med[(k, "rss")] / 1024),
                         "-" if k in ("fnprof", "limit") or size is None else fmt_size(size),
                         "-" if k in ("fnprof", "limit") or size is None else f"{size / c:.1f}"])
            first = False

        def ratio(num, ref, target, le=True):
            if num is None or ref is None or ref <= 0:
                return "-"
            v = num / ref
            return f"{num:.1f}/{ref:.1f} = {v:.2f} {verdict(v, target, le)}"

        size = lambda k: med[(k, "size")] and med[(k, "size")] / c  # noqa: E731
        trows.append([
            w.name,
            ratio(per("fnprof-pftrace", "floor", "wall"), per("limit", "floor", "wall"), 1.5),
            ratio(per("fnprof-pftrace", "floor", "cpu"), per("limit", "floor", "cpu"), 1.5),
            ratio(per("uftrace", "base", "wall"), per("fnprof-pftrace", "base", "wall"), 4,
                  le=False),
            ratio(per("uftrace", "base", "cpu"), per("fnprof-pftrace", "base", "cpu"), 4,
                  le=False),
            "-" if not size("fnprof-pftrace") or not size("uftrace") else
            f"{size('fnprof-pftrace'):.1f} / {size('uftrace'):.1f}",
            show(per("fnprof-pftrace", "fnprof", "wall"), "{:+.1f}"),
            show(per("fnprof-pftrace", "fnprof", "cpu"), "{:+.1f}")])
    if not rows:
        return []
    out = ["", "Streamed trace (issue 27): PROF_TRACE=<out>.pftrace, every call kept, at the "
           "full size beside uftrace; whole runs,",
           "wall and CPU time (user + system of every thread: the writer thread's encoding "
           "runs beside the program); ns per call above floor;",
           "output: the .pftrace file, uftrace's data directory; B/call: its bytes per call"]
    out.append(table(["workload", "calls", "config", "wall ms", "ns/call>floor", "cpu ms",
                      "cpu ns/call>floor", "RSS MB", "output", "B/call"], rows,
                     ["<", ">", "<", ">", ">", ">", ">", ">", ">", ">"]))
    out.append("")
    out.append("Targets of issue 27 (ns per call, whole runs; pftrace = fnprof-pftrace):")
    out.append(table(["workload", "pftrace/limit >floor wall (<=1.5)",
                      "pftrace/limit >floor cpu (<=1.5)", "uftrace/pftrace >base wall (>=4)",
                      "uftrace/pftrace >base cpu (>=4)", "B/call pftrace / uftrace",
                      "pftrace-fnprof wall ns", "cpu ns"], trows))
    return out


def report_patchable(ws, calls, samples, skip):
    """Issue 25's table: the patchable build off, paused, on and toggled against base, the
    -finstrument-functions build off (fnprof-off), its floor and the limit hook, and XRay's
    runtime against clang's base. Each build's own calls: the instrumented build's
    (limit-notime's count) for floor, fnprof-off and limit; the patchable build's from
    patch-on's profile (only what was not inlined); XRay's from its counting handler. Wall
    time and the program's CPU time (user + system): on a machine other jobs share, the
    wall time moves by more than the 3% the targets ask, the CPU time much less."""
    if not any(samples.get((w.name, c)) for w in ws for c in PATCH_CONFIGS):
        if skip:
            return ["", "Patchable builds (issue 25): not run: " + "; ".join(
                sorted({f"{k}: {v}" for k, v in skip.items()}))]
        return []
    rows, trows = [], []
    order = ["base", "fnprof-off", "patch-off", "patch-paused", "patch-on", "patch-toggle",
             "floor", "limit", "clang-base", "xray-off", "xray-on"]
    for w in ws:
        med = {(c, k): summarize(samples.get((w.name, c), []), k)
               for c in order for k in ("wall", "cpu")}
        got = [s.get("fnprof_calls") for s in samples.get((w.name, "patch-on"), [])]
        got = [g for g in got if g]
        pcalls = max(got) if got else None  # None: the runtime patched nothing
        own = {"fnprof-off": calls[w.name], "floor": calls[w.name], "limit": calls[w.name],
               "xray-off": calls.get((w.name, "xray")), "xray-on": calls.get((w.name, "xray"))}
        for c in ("patch-off", "patch-paused", "patch-on", "patch-toggle"):
            own[c] = pcalls
        first = True
        for c in order:
            m, lo, hi = med[(c, "wall")]
            cpu = med[(c, "cpu")][0]
            ref = "clang-base" if c.startswith(("xray", "clang")) else "base"
            b, bcpu = med[(ref, "wall")][0], med[(ref, "cpu")][0]
            n = own.get(c)
            notes = []
            if c in skip:
                notes.append(skip[c])
            elif m is None:
                continue
            if c.startswith("patch-") and c != "patch-off" and m is not None and not pcalls:
                notes.append("pending: no call recorded (the runtime patches nothing yet)")
            if c == "patch-toggle" and m is not None:
                sig = summarize(samples[(w.name, c)], "signals")[0]
                notes.append(f"SIGUSR1 sent {sig:.0f} times" if sig is not None else "")
            shown = m is not None and b is not None
            per = shown and n and c not in ("base", "clang-base")
            rows.append([w.name if first else "", c, "-" if not n else f"{n:,}",
                         fmt_ms(m), "-" if m is None else f"{fmt_ms(lo)}-{fmt_ms(hi)}",
                         f"{m / b:.3f}" if shown else "-",
                         f"{(m - b) / n:.1f}" if per else "-",
                         fmt_ms(cpu), f"{cpu / bcpu:.3f}" if shown and bcpu else "-",
                         f"{(cpu - bcpu) / n:.1f}" if per and bcpu else "-",
                         "; ".join(x for x in notes if x)])
            first = False

        def pct(a, key, r="base"):
            x, y = med[(a, key)][0], med[(r, key)][0]
            return None if x is None or y is None or not y else 100 * (x - y) / y

        def pct_cell(a, key, r="base", target=None):
            v = pct(a, key, r)
            if v is None:
                return "pending" if a.startswith("patch") else "-"
            return f"{v:+.1f}%" + ("" if target is None else f" {verdict(abs(v), target)}")

        def paused_cell(key):
            p, o = pct("patch-paused", key), pct("patch-off", key)
            if p is None or o is None or not pcalls:
                return "pending"
            return f"{p - o:+.1f}% {verdict(abs(p - o), 3)}"

        def on_cell(key):
            on, lim, b = (med[(c, key)][0] for c in ("patch-on", "limit", "base"))
            if on is None or not pcalls or lim is None:
                return "pending"
            r = ((on - b) / pcalls) / ((lim - b) / calls[w.name])
            return f"{(on - b) / pcalls:.1f}/{(lim - b) / calls[w.name]:.1f} = {r:.2f} " \
                + verdict(r, 1.25)

        trows.append([w.name, pct_cell("patch-off", "wall", target=3),
                      pct_cell("patch-off", "cpu", target=3), paused_cell("wall"),
                      paused_cell("cpu"), on_cell("wall"), on_cell("cpu"),
                      pct_cell("fnprof-off", "cpu"), pct_cell("xray-off", "cpu", "clang-base"),
                      pct_cell("xray-on", "cpu", "clang-base")])
    out = ["", "Patchable builds (issue 25): gcc's base and -finstrument-functions builds "
           "(fnprof-off: libfnprof.so preloaded, no PROF_OUTPUT; floor; limit),",
           "the fnprof-cc --patchable build (libfnprof.so linked) off, paused from the start, "
           f"on, and toggled by PROF_TOGGLE_SIGNAL every {TOGGLE_MS} ms;",
           "clang's base and XRay builds (compiler-rt's runtime: patch_premain=false, and =true "
           "with a no-op handler), against clang-base.",
           "calls: each build's own (the patchable and XRay builds see no inlined function); "
           "ns/call: (time - base's) / those calls;",
           "cpu: the program's user + system time (median), which the machine's other jobs "
           "move less than the wall time"]
    out.append(table(["workload", "config", "calls", "wall ms", "min-max", "x base",
                      "ns/call>base", "cpu ms", "x base", "cpu ns/call", "notes"], rows,
                     ["<", "<", ">", ">", ">", ">", ">", ">", ">", ">", "<"]))
    out.append("")
    out.append("Targets of issue 25 (against base; on: ns per call above base, patch-on's / "
               "limit's; the last three without a target, CPU time):")
    out.append(table(["workload", "patch-off wall (3%)", "patch-off cpu (3%)",
                      "paused-off wall (3%)", "paused-off cpu (3%)",
                      "on/limit wall (<=1.25)", "on/limit cpu (<=1.25)", "fnprof-off cpu",
                      "xray-off cpu", "xray-on cpu"], trows))
    return out


def report(ws, calls, samples, side, irs, fnprof_counts, quick, skip=None):
    out = []
    rows = []
    W = {}
    for w in ws:
        b = summarize(samples[(w.name, "base")], "wall")[0]
        f = summarize(samples[(w.name, "floor")], "wall")[0]
        off_tail = summarize(samples[(w.name, "fnprof-off")], "tail")[0]
        W[w.name] = {"base": b, "floor": f}
        c = calls[w.name]
        first = True
        for config in [c for c in CONFIGS if c not in PATCH_CONFIGS] + ["callgrind"]:
            main_run = config not in w.side
            if config == "callgrind" and main_run:
                continue  # --no-callgrind
            if main_run:
                s, bb, cc, label = samples[(w.name, config)], b, c, config
            elif side and (w.name, config) in side:
                s, label = side[(w.name, config)], config + "*"
                bb = summarize(side[(w.name, "base@" + config)], "wall")[0]
                ff = summarize(side.get((w.name, "floor@" + config), []), "wall")[0]
                cc = calls[(w.name, config)]
            else:
                continue
            m, lo, hi = summarize(s, "wall")
            W[w.name][config] = m
            rss = summarize(s, "rss")[0]
            size = summarize(s, "size")[0]
            notes = []
            if config in ("fnprof", "fnprof-count"):
                tail = summarize(s, "tail")[0]
                if tail is not None and off_tail is not None:
                    ex = tail - off_tail
                    W[w.name][config + ":exit"] = ex
                    notes.append(f"exit {fmt_ms(ex)} ms ({100 * ex / m:.1f}%)")
            elif config == "gprof":
                notes.append(f"gprof {fmt_ms(summarize(s, 'post')[0])} ms")
            elif config == "uftrace" and w.uftrace_note:
                notes.append(w.uftrace_note)
            elif config == "fnprof-pftrace":
                tail = summarize(s, "tail")[0]
                if tail is not None:
                    notes.append(f"tail {fmt_ms(tail)} ms (streamed; finished at exit)")
            elif config == "fnprof-trace":
                tail = summarize(s, "tail")[0]
                if tail is not None:
                    notes.append(f"tail {fmt_ms(tail)} ms (JSON written at exit)")
            if not main_run:
                notes.append(f"* {cc:,} calls, base {fmt_ms(bb)} ms")
            if any("warn" in x for x in s):
                notes.append("! " + next(x["warn"] for x in s if "warn" in x))
            above_floor = main_run and config not in ("base", "floor", "gprof")
            if main_run:
                over_floor = f"{(m - f) / c:.1f}" if above_floor else "-"
            else:  # against floor at the same size, where it ran beside (fnprof-trace)
                over_floor = "-" if ff is None else f"{(m - ff) / cc:.1f}"
            rows.append([w.name if first else "", f"{c:,}" if first else "", label,
                         fmt_ms(m), f"{fmt_ms(lo)}-{fmt_ms(hi)}", f"{m / bb:.2f}",
                         "-" if config == "base" else f"{(m - bb) / cc:.1f}",
                         over_floor,
                         f"{rss / 1024:.1f}", fmt_size(size), "; ".join(notes)])
            first = False
    out.append(table(["workload", "calls", "config", "wall ms", "min-max", "x base",
                      "ns/call>base", "ns/call>floor", "RSS MB", "output", "notes"], rows,
                     ["<", ">", "<", ">", ">", ">", ">", ">", ">", ">", "<"]))
    out.append("* run at another size (see notes), against base (and floor) at that size, "
               "interleaved with it; callgrind is 20-100x slower, gprof's mcount is quadratic in "
               "'many';\n  fnprof-trace's wall time includes writing its JSON at exit (its tail): "
               "see the trace's table below")

    # targets, from the same medians
    trows = []

    def cell(f):  # "-" where a configuration it needs did not run (--configs)
        try:
            return f()
        except KeyError:
            return "-"

    for w in ws:
        d, c = W[w.name], calls[w.name]
        above = lambda k, ref="floor": (d[k] - d[ref]) / c  # noqa: E731
        # a reference per call smaller than this is within run-to-run noise
        noise = 1.0
        r2 = lambda: (d["fnprof"] - d["base"]) / (d["uftrace"] - d["base"])  # noqa: E731
        r4 = (d["fnprof-off"] - d["floor"]) / d["floor"]
        ex = d.get("fnprof:exit")
        r5 = ex / d["fnprof"] if ex is not None else None
        trows.append([
            w.name,
            cell(lambda: ratio_cell(above("fnprof"), above("limit"), 1.25, noise)),
            cell(lambda: f"{r2():.2f} {verdict(r2(), 0.5)}"),
            cell(lambda: ratio_cell(above("fnprof-count", "base"),
                                    above("limit-notime", "base"), 1.5, noise)),
            cell(lambda: ratio_cell(above("fnprof-count"), above("limit-notime"), 1.5, noise)),
            f"{100 * r4:+.1f}% {verdict(abs(r4), 0.02)}",
            "-" if r5 is None else f"{100 * r5:.1f}%"
            + (f" {verdict(r5, 0.05)}" if w.name in ("lua", "sqlite") else "")])
    out.append("")
    out.append("Targets (ns per call: fnprof's / the reference's; 'ref ~0': the reference "
               "is within the noise, < 1 ns/call):")
    out.append(table(["workload", "fnprof/limit >floor (<=1.25)",
                      "fnprof/uftrace >base (<=0.5)", "count/limit-notime >base (<=1.5)",
                      "count/limit-notime >floor", "off vs floor (2%)",
                      "exit/run (<5% lua, sqlite)"], trows))

    if "tiny" in W and "threads" in W:
        t1, t2 = W["tiny"], W["threads"]
        c1, c2 = calls["tiny"], calls["threads"] / 2  # calls per thread
        out.append("")
        out.append("threads: cost per call per thread, tiny on 2 threads (each making tiny's "
                   "calls) vs 1 (target: fnprof >floor within 10%):")
        for config in ("fnprof", "fnprof-count", "limit", "limit-notime", "floor"):
            if config not in t1:
                continue
            pb1, pb2 = (t1[config] - t1["base"]) / c1, (t2[config] - t2["base"]) / c2
            line = f"  {config:13s} >base {pb1:5.1f} -> {pb2:5.1f} ns ({pb2 / pb1:.2f}x)"
            if config != "floor":
                pf1, pf2 = (t1[config] - t1["floor"]) / c1, (t2[config] - t2["floor"]) / c2
                line += f"   >floor {pf1:5.1f} -> {pf2:5.1f} ns"
                if pf1 >= 1.0:
                    line += f" ({pf2 / pf1:.2f}x" + (
                        f", {verdict(pf2 / pf1, 1.10)})" if config == "fnprof" else ")")
            out.append(line)

    out.extend(report_trace(ws, calls, samples, side))
    out.extend(report_pftrace(ws, calls, samples))
    out.extend(report_patchable(ws, calls, samples, skip or {}))

    mismatch = [f"{k}: bench counted {calls[k]:,}, fnprof wrote {v:,}"
                for k, v in fnprof_counts.items() if v != calls[k]]
    out.append("")
    if mismatch:
        out.append("call counts that differ (limit-notime's count vs fnprof's 'wrote' line):")
        out.extend("  " + m for m in mismatch)
        if "lua" in fnprof_counts:
            out.append("  (Lua's calls depend on the process layout, which the preloaded "
                       "library changes: up to\n  0.5% seen; the figures divide by "
                       "limit-notime's count)")
    else:
        out.append("calls: fnprof's count-only profile has exactly the calls limit-notime "
                   "counted, on every workload")

    if irs:
        out.append("")
        out.append("Instructions per call pair under callgrind while main runs (Ir; "
                   "repeatable: judge hook changes by these):")
        irows = []
        names = [w.name for w in ws if (w.name, "base") in irs]
        for n in names:
            base = irs[(n, "base")]
            floor = irs[(n, "floor")]
            c = base["calls"]
            for config in IR_CONFIGS[1:] + IR_PATCH:
                r = irs.get((n, config))
                if r is None:
                    continue
                irows.append([n if config == "floor" else "",
                              f"{c:,}" if config == "floor" else "",
                              config + (" (pending: nothing patched)" if r.get("pending") else ""),
                              f"{r['hooks'] / c:.1f}", f"{(r['main'] - base['main']) / c:.1f}",
                              f"{(r['main'] - floor['main']) / c:.1f}"])
        out.append(table(["workload", "calls", "config", "in hook library", "all >base",
                          "all >floor"], irows, ["<", ">", "<", ">", ">", ">"]))
    if quick:
        out.append("")
        out.append("(--quick: a smoke run, tiny sizes and one run; the figures mean nothing)")
    return "\n".join(out)


def report_regions(res, n):
    """ns per iteration of each loop above the plain one, under the same configuration (so
    that the library's load and exit cancel), over the work phase."""
    rows = []
    for config in REGION_CONFIGS:
        if (config, "plain") not in res:
            continue
        work = {m: summarize(res[(config, m)], "work")[0] for m in REGION_MODES}
        per = {m: (work[m] - work["plain"]) / n for m in REGION_MODES}
        rows.append([config, fmt_ms(work["plain"]), f"{per['call']:.1f}", f"{per['region']:.1f}",
                     f"{per['begin']:.1f}",
                     f"{per['region'] / per['call']:.2f}" if per["call"] >= 1.0 else "ref ~0"])
    return "\n".join([
        "", f"Regions (workloads/regions.c, linked with -lfnprof): {n:,} iterations of a loop "
        "around a non-inlined",
        "3-instruction function; ns per iteration above the same loop without instrumentation "
        "or region, under the same",
        "configuration (work phase): the instrumented function (one hook pair), the "
        "uninstrumented one inside",
        "FNPROF_REGION, or inside fnprof_region_begin/end:",
        table(["config", "plain loop ms", "instrumented call", "FNPROF_REGION",
               "region_begin/end", "region/call (~1)"], rows)])


def machine():
    cpu = "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{os.cpu_count()} CPUs ({cpu}), Linux {platform.release()}"


def fnprof_rev(lib_dir):
    rev = subprocess.run(["git", "-C", str(ROOT), "describe", "--always", "--dirty"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout
    return rev.strip() or "?"


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", required=True, help="directory holding libfnprof.so")
    ap.add_argument("--quick", action="store_true", help="smoke run: tiny sizes, 1 run")
    ap.add_argument("--runs", type=int, help="timed runs after the warm-up (default 5)")
    ap.add_argument("--only", help="comma-separated workloads (regions: the regions workload)")
    ap.add_argument("--no-callgrind", action="store_true", help="skip both callgrind parts")
    ap.add_argument("--label", default="", help="what was measured (printed in the header)")
    ap.add_argument("--configs", help="comma-separated configurations to run (base, floor and "
                    "fnprof-off always run; a target whose configurations did not run shows -)")
    args = ap.parse_args()

    t_start = time.monotonic()
    ws = workloads()
    with_regions = True
    if args.only:
        keep = args.only.split(",")
        unknown = set(keep) - {w.name for w in ws} - {"regions"}
        if unknown:
            sys.exit(f"bench: unknown workload(s) {', '.join(sorted(unknown))}")
        ws = [w for w in ws if w.name in keep]
        with_regions = "regions" in keep
    if args.configs:
        keep = set(args.configs.split(",")) | {"base", "floor", "fnprof-off"}
        unknown = keep - set(CONFIGS)
        if unknown:
            sys.exit(f"bench: unknown configuration(s) {', '.join(sorted(unknown))}")
        CONFIGS[:] = [c for c in CONFIGS if c in keep]
        for w in ws:
            for c in [c for c in w.side if c != "callgrind" and c not in keep]:
                w.side.pop(c)
    lib_dir = Path(args.lib).resolve()
    if not (lib_dir / "libfnprof.so").exists():
        sys.exit(f"bench: {lib_dir}/libfnprof.so not found")
    hook_libs = {}
    build_notes = []
    if any(c in CONFIGS for c in PATCH_CONFIGS):
        extra_variants(lib_dir.parent / "bin", build_notes)
    progs = build_all(sorted({w.build for w in ws}), hook_libs, lib_dir.parent / "bin")
    run = Runner(args, lib_dir, progs, hook_libs)
    for n in build_notes:
        run.note(n)
    regions_prog = None
    if with_regions:
        regions_prog, why = build_regions(lib_dir)
        if why:
            run.note(f"regions: not run: {why}")

    size = "quick" if args.quick else "full"
    runs = args.runs or (1 if args.quick else 5)
    rounds = runs if args.quick else runs + 1
    if args.no_callgrind:
        for w in ws:
            w.side.pop("callgrind", None)
    calls = {}
    for w in ws:
        calls[w.name] = run.count_calls(w, size)
        for config, side_size in w.side.items():
            calls[(w.name, config)] = run.count_calls(w, size if args.quick else side_size)
        if "xray-on" in CONFIGS and "xray-on" not in run.skip:
            calls[(w.name, "xray")] = run.count_xray(w, size)
    log("calls: " + ", ".join(f"{w.name} {calls[w.name]:,}" for w in ws))
    for w in ws:
        if "fnprof-trace" in w.side:
            run.trace_events[w.name] = calls[(w.name, "fnprof-trace")] + TRACE_SLACK

    samples = run.timed(ws, size, rounds)
    fnprof_counts = {}
    for w in ws:
        got = {s.get("fnprof_calls") for s in samples.get((w.name, "fnprof-count"), [])} - {None}
        if got:
            fnprof_counts[w.name] = max(got)
    side = run.side_runs(ws, rounds, args.quick)
    irs = None
    if not args.no_callgrind:
        micro = [w for w in ws if w.name in ("fib", "tiny", "many", "capped")]
        irs = run.hook_instructions(micro, size if args.quick else "small")
    regions = regions_prog and run.regions(regions_prog, REGION_N[size], rounds)

    header = [
        f"fnprof bench/run{' --quick' if args.quick else ''}: {time.strftime('%Y-%m-%d %H:%M %Z')}",
        f"machine: {machine()}",
        f"fnprof: {fnprof_rev(lib_dir)} {args.label}".rstrip()
        + f" ({lib_dir / 'libfnprof.so'}, LD_PRELOAD)",
        f"runs: median of {runs} after {'no' if rounds == runs else 'one'} warm-up round, "
        "configurations interleaved (order rotated every round); times in ms",
        "",
    ]
    print("\n".join(header))
    if ws:
        print(report(ws, calls, samples, side, irs, fnprof_counts, args.quick, run.skip))
    if regions:
        print(report_regions(regions, REGION_N[size]))
    # The views: the tree each fnprof profile carries, and fnprof convert on it.
    fnprof_bin = lib_dir.parent / "bin" / "fnprof"
    profs = [str(OUT / f"{w.name}.fnprof.prof") for w in ws
             if (OUT / f"{w.name}.fnprof.prof").exists()]
    if fnprof_bin.exists() and profs:
        print()
        sys.stdout.flush()
        subprocess.run([sys.executable, str(BENCH / "views.py"), "--fnprof", str(fnprof_bin),
                        "--runs", "1" if args.quick else "5", "--outdir", str(OUT / "views"),
                        "--lib", str(lib_dir), "--ranks", "4" if args.quick else "64",
                        "--sqlite", str(CACHE / "build" / "sqlite" / "inst" / "sqlite"),
                        *profs], check=False)
    # An MPI rank's per-call cost against a plain process's (bench/mpi/overhead.py).
    if fnprof_bin.exists():
        print()
        sys.stdout.flush()
        subprocess.run([sys.executable, str(BENCH / "mpi" / "overhead.py"), "--fnprof",
                        str(fnprof_bin), *(["--quick"] if args.quick else [])], check=False)
    # PROF_MEMORY: the cost per allocation, against heaptrack and DHAT (bench/memory.py).
    print()
    sys.stdout.flush()
    subprocess.run([sys.executable, str(BENCH / "memory.py"), "--lib", str(lib_dir),
                    *(["--quick"] if args.quick else [])], check=False)
    if run.notes:
        print("\nnotes from the runs:")
        for n in run.notes:
            print("  " + n)
    print(f"\nbench/run took {time.monotonic() - t_start:.0f} s (after set-up)")


if __name__ == "__main__":
    main()
