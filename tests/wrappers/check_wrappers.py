#!/usr/bin/env python3
"""Checks fnprof-cc and fnprof-c++ against the compiler they wrap.

    check_wrappers.py --bin build/bin --cc gcc --workdir build/tests/wrappers/x CHECK

--cc gcc uses FNPROF_CC=gcc, FNPROF_CXX=g++; --cc clang uses clang and clang++. CHECK is one
of the names in CHECKS below; each builds its programs from tests/wrappers/progs in a fresh
workdir. Exit 0 pass, 1 fail, 2 bad usage or broken setup. python3 standard library only.
"""

import argparse
import os
import pstats
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PROGS = os.path.join(HERE, "progs")
TIMEOUT = 120


class Failure(Exception):
    pass


def clean_env():
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PROF_", "FNPROF_")) and k not in ("LD_PRELOAD", "LD_AUDIT")}
    env["LC_ALL"] = "C"
    return env


class Ctx:
    def __init__(self, args):
        self.bin = os.path.abspath(args.bin)
        self.kind = args.cc
        self.cc = "gcc" if args.cc == "gcc" else "clang"
        self.cxx = "g++" if args.cc == "gcc" else "clang++"
        self.work = os.path.abspath(args.workdir)
        self.wcc = os.path.join(self.bin, "fnprof-cc")
        self.wcxx = os.path.join(self.bin, "fnprof-c++")
        self.env = clean_env()
        self.env["FNPROF_CC"] = self.cc
        self.env["FNPROF_CXX"] = self.cxx
        # The detection cache of this test only: no state from other runs.
        self.env["XDG_CACHE_HOME"] = os.path.join(self.work, "cache")

    def run(self, cmd, env_extra=None, check=True, cwd=None, stdin=None):
        env = dict(self.env)
        env.update(env_extra or {})
        p = subprocess.run(cmd, cwd=cwd or self.work, env=env, timeout=TIMEOUT, input=stdin,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if check and p.returncode != 0:
            raise Failure("%s exited %d:\n%s" % (" ".join(cmd), p.returncode,
                                                 p.stderr.decode(errors="replace")))
        return p

    def src(self, name):
        """A copy of progs/<name> in the workdir: builds name sources relatively, as make."""
        dst = os.path.join(self.work, name)
        if not os.path.exists(dst):
            shutil.copy(os.path.join(PROGS, name), dst)
        return name

    def profile(self, exe, env_extra=None):
        out = os.path.join(self.work, os.path.basename(exe) + ".prof")
        if os.path.exists(out):
            os.unlink(out)
        extra = {"PROF_OUTPUT": out, "PROF_QUIET": "1"}
        extra.update(env_extra or {})
        self.run([os.path.join(self.work, exe)], extra)
        if not os.path.exists(out):
            raise Failure("%s wrote no profile" % exe)
        return pstats.Stats(out).stats


def calls_by_name(stats):
    """{function name without parameters: ncalls}."""
    out = {}
    for (_file, _line, name), (_cc, nc, _tt, _ct, _callers) in stats.items():
        short = name.split("(")[0]
        out[short] = out.get(short, 0) + nc
    return out


def expect_calls(stats, expected, what):
    got = calls_by_name(stats)
    for name, n in expected.items():
        if got.get(name) != n:
            raise Failure("%s: %s called %s times in the profile, expected %d; profile: %s"
                          % (what, name, got.get(name), n, sorted(got.items())))


def system_functions(stats):
    """Functions of the system headers: by file, or by a std:: name (not parameter type)."""
    return sorted(name for (file, _line, name) in stats
                  if file.startswith("/usr/") or name.split("(")[0].startswith(("std::", "__gnu_cxx::"))
                  or " std::" in name.split("(")[0])


def nm_undefined(ctx, obj):
    return ctx.run(["nm", "-u", obj]).stdout.decode()


def needed(ctx, exe):
    return ctx.run(["readelf", "-d", exe]).stdout.decode()


# --- checks -------------------------------------------------------------------------------

def check_profile_c(ctx):
    """A C program built and linked in one command, -O0 and -O2: exact counts, no libc."""
    for opt in ("-O0", "-O2"):
        exe = "app_c" + opt
        ctx.run([ctx.wcc, opt, "-o", exe, ctx.src("app.c")])
        stats = ctx.profile(exe)
        expect_calls(stats, {"main": 1, "middle": 10, "leaf": 55}, exe)
        if system_functions(stats):
            raise Failure("%s: system functions in the profile: %s" % (exe, system_functions(stats)))
        if "libfnprof.so" not in needed(ctx, exe):
            raise Failure("%s does not need libfnprof.so" % exe)


def check_profile_cxx(ctx):
    """C++ with vector, map and sort: the program's functions counted; with gcc no std::
    function at all; with clang (after inlining) at -O2 far fewer than plain
    -finstrument-functions (docs/wrappers.md has the figures)."""
    for opt in ("-O0", "-O2"):
        exe = "app_cxx" + opt
        ctx.run([ctx.wcxx, opt, "-o", exe, ctx.src("app.cc")])
        stats = ctx.profile(exe)
        expect_calls(stats, {"main": 1, "build": 1, "score": 1000, "histogram": 1}, exe)
        system = system_functions(stats)
        if ctx.kind == "gcc" and system:
            raise Failure("%s: std:: functions in a gcc profile: %s" % (exe, system))
        if ctx.kind == "clang" and opt == "-O2":
            plain = "plain_cxx" + opt
            ctx.run([ctx.cxx, opt, "-g", "-finstrument-functions", "-o", plain, "app.cc",
                     "-L" + libdir(ctx), "-Wl,-rpath," + libdir(ctx), "-lfnprof"])
            plain_system = system_functions(ctx.profile(plain))
            if len(system) >= len(plain_system):
                raise Failure("%s: %d std:: functions with the wrapper, %d with plain "
                              "-finstrument-functions" % (exe, len(system), len(plain_system)))


def libdir(ctx):
    return os.path.normpath(os.path.join(ctx.bin, "..", "lib"))


def check_separate(ctx):
    """-c, then a link of objects only: the objects instrumented, the link adds the runtime
    (and no -g to an object-only command matters)."""
    obj = "app.o"
    ctx.run([ctx.wcc, "-O2", "-c", ctx.src("app.c"), "-o", obj])
    if "__cyg_profile_func_enter" not in nm_undefined(ctx, obj):
        raise Failure("-c: the object calls no hook")
    if "libfnprof" in ctx.run(["readelf", "-d", obj], check=False).stdout.decode():
        raise Failure("-c: an object with a dynamic section?")
    ctx.run([ctx.wcc, "-o", "app_sep", obj])
    expect_calls(ctx.profile("app_sep"), {"main": 1, "middle": 10, "leaf": 55}, "app_sep")
    # -S: assembly with the hooks, nothing linked.
    ctx.run([ctx.wcc, "-O2", "-S", "app.c", "-o", "app.s"])
    with open(os.path.join(ctx.work, "app.s")) as f:
        if "__cyg_profile_func_enter" not in f.read():
            raise Failure("-S: the assembly calls no hook")
    # An object linked with the plain compiler instead: the hooks bind to glibc's no-ops,
    # the program still runs (the wrapper's objects need nothing of fnprof).
    ctx.run([ctx.cc, "-o", "app_plainlink", obj])
    if ctx.run([os.path.join(ctx.work, "app_plainlink")]).stdout.strip() == b"":
        raise Failure("plain link of a wrapped object printed nothing")


def same(ctx, plain_cmd, wrapped_cmd, what, compare_stderr=True, stdin=None):
    a = ctx.run(plain_cmd, check=False, stdin=stdin)
    b = ctx.run(wrapped_cmd, check=False, stdin=stdin)
    if a.returncode != b.returncode:
        raise Failure("%s: exit %d with the compiler, %d with the wrapper\n%s"
                      % (what, a.returncode, b.returncode, b.stderr.decode(errors="replace")))
    if a.stdout != b.stdout:
        raise Failure("%s: stdout differs:\n--- compiler\n%s\n--- wrapper\n%s"
                      % (what, a.stdout.decode(errors="replace")[:2000],
                         b.stdout.decode(errors="replace")[:2000]))
    if compare_stderr and a.stderr != b.stderr:
        raise Failure("%s: stderr differs:\n--- compiler\n%s\n--- wrapper\n%s"
                      % (what, a.stderr.decode(errors="replace"), b.stderr.decode(errors="replace")))
    return a


def check_preprocess(ctx):
    """-E, -M, -MM, -dM -E: byte for byte the compiler's (-g alone would add a working
    directory line marker to -E's output)."""
    ctx.src("app.c")
    ctx.src("app.cc")
    for flags in (["-E"], ["-E", "-O2"], ["-M"], ["-MM"], ["-E", "-dM"], ["-E", "-MD", "-MF",
                                                                          "dep.d"]):
        same(ctx, [ctx.cc] + flags + ["app.c"], [ctx.wcc] + flags + ["app.c"],
             "cc " + " ".join(flags))
        same(ctx, [ctx.cxx] + flags + ["app.cc"], [ctx.wcxx] + flags + ["app.cc"],
             "c++ " + " ".join(flags))
    # Standard input, as configure's CPP checks do.
    same(ctx, [ctx.cc, "-E", "-"], [ctx.wcc, "-E", "-"], "cc -E -", stdin=b"#define X 1\nX\n")
    # -MD with -c: the dependency file is the compiler's (the compile is instrumented).
    for tool, cmd in ((ctx.cc, "plain"), (ctx.wcc, "wrapped")):
        ctx.run([tool, "-c", "-MD", "-MF", cmd + ".d", "app.c", "-o", "dep_" + cmd + ".o"])
    with open(os.path.join(ctx.work, "plain.d")) as f:
        plain = f.read().replace("dep_plain.o", "X")
    with open(os.path.join(ctx.work, "wrapped.d")) as f:
        wrapped = f.read().replace("dep_wrapped.o", "X")
    if plain != wrapped:
        raise Failure("-MD: dependency files differ:\n%s\n%s" % (plain, wrapped))


def check_failure(ctx):
    """A compile error and a link error: the compiler's exit status and diagnostics."""
    ctx.src("bad.c")
    same(ctx, [ctx.cc, "-c", "bad.c", "-o", "bad.o"], [ctx.wcc, "-c", "bad.c", "-o", "bad.o"],
         "failing compile")
    a = ctx.run([ctx.wcc, "-c", "bad.c", "-o", "bad.o"], check=False)
    if a.returncode == 0:
        raise Failure("bad.c compiled")
    with open(os.path.join(ctx.work, "undef.c"), "w") as f:
        f.write("int missing(void);\nint main(void) { return missing(); }\n")
    same(ctx, [ctx.cc, "undef.c", "-o", "undef"], [ctx.wcc, "undef.c", "-o", "undef"],
         "failing link", compare_stderr=False)
    # No input: the compiler's own complaint, nothing linked.
    same(ctx, [ctx.cc], [ctx.wcc], "no input")
    same(ctx, [ctx.cc, "-c"], [ctx.wcc, "-c"], "-c without input")
    same(ctx, [ctx.cc, "-o", "x"], [ctx.wcc, "-o", "x"], "-o without input")
    same(ctx, [ctx.cc, "nonexistent.c"], [ctx.wcc, "nonexistent.c"], "missing source",
         compare_stderr=False)


def check_response(ctx):
    """@file: read to know the mode, passed on as it is."""
    ctx.src("app.c")
    with open(os.path.join(ctx.work, "compile.rsp"), "w") as f:
        f.write('-O2 -c "app.c"\n-o app_rsp.o\n')
    ctx.run([ctx.wcc, "@compile.rsp"])
    if "__cyg_profile_func_enter" not in nm_undefined(ctx, "app_rsp.o"):
        raise Failure("@file compile: the object calls no hook")
    with open(os.path.join(ctx.work, "link.rsp"), "w") as f:
        f.write("app_rsp.o -o 'app rsp'\n")
    ctx.run([ctx.wcc, "@link.rsp"])
    expect_calls(ctx.profile("app rsp"), {"main": 1, "middle": 10, "leaf": 55}, "@file link")
    # A response file saying -E: nothing added, output identical.
    with open(os.path.join(ctx.work, "pre.rsp"), "w") as f:
        f.write("-E app.c\n")
    same(ctx, [ctx.cc, "@pre.rsp"], [ctx.wcc, "@pre.rsp"], "@file with -E")


def check_info(ctx):
    """-v, --version, -dumpversion, -print-*: the compiler's output, exactly."""
    for flags in (["-v"], ["--version"], ["-dumpversion"], ["-dumpmachine"],
                  ["-print-prog-name=ld"], ["-print-search-dirs"], ["-print-libgcc-file-name"],
                  ["--help"]):
        same(ctx, [ctx.cc] + flags, [ctx.wcc] + flags, "cc " + " ".join(flags))
        same(ctx, [ctx.cxx] + flags, [ctx.wcxx] + flags, "c++ " + " ".join(flags))
    # -v on a real compile still compiles instrumented (and shows the flags).
    ctx.src("app.c")
    p = ctx.run([ctx.wcc, "-v", "-c", "app.c", "-o", "app_v.o"])
    if b"instrument-functions" not in p.stderr:
        raise Failure("-v -c: the compiler's command shows no instrumentation")


# What autoconf's AC_PROG_CC, AC_PROG_CPP and a few AC_CHECK_* run (configure.ac of any
# project): each must exit as the plain compiler does, and print the same.
PROBES = [
    ("conftest.c", "int main(void) { return 0; }\n",
     [["-o", "conftest", "conftest.c"], ["-c", "conftest.c"], ["-g", "-c", "conftest.c"],
      ["-std=gnu11", "-c", "conftest.c"], ["-E", "conftest.c"],
      ["-V"], ["-qversion"], ["-version"], ["-o", "conftest", "-g", "-O2", "conftest.c", "-lm"]]),
    ("conftest2.c", "#include <nonexistent_header.h>\nint main(void) { return 0; }\n",
     [["-E", "conftest2.c"], ["-c", "conftest2.c"]]),
    ("conftest3.c", "char nonexistent_function(void);\n"
     "int main(void) { return nonexistent_function(); }\n",
     [["-o", "conftest3", "conftest3.c"]]),
]


def check_probes(ctx):
    """configure's probe sequence: same exit status each; programs that link also run."""
    for name, text, commands in PROBES:
        with open(os.path.join(ctx.work, name), "w") as f:
            f.write(text)
        for args in commands:
            a = same(ctx, [ctx.cc] + args, [ctx.wcc] + args, "probe " + " ".join(args),
                     compare_stderr=False)
            if a.returncode == 0 and args[:2] == ["-o", "conftest"]:
                ctx.run([ctx.wcc] + args)
                ctx.run([os.path.join(ctx.work, "conftest")])  # the cross-compiling check


def check_shared(ctx):
    """A shared library built with the wrapper needs the runtime; a program built with the
    wrapper (its own code needs none) profiles it with no LD_PRELOAD; one built without
    fnprof needs the preload (`fnprof run`): its libc comes first in the lookup order, and
    glibc's no-op hooks win (docs/wrappers.md)."""
    ctx.src("lib.c")
    ctx.src("use_lib.c")
    ctx.run([ctx.wcc, "-O2", "-fPIC", "-shared", "-o", "libwrapped.so", "lib.c"])
    if "libfnprof.so" not in needed(ctx, "libwrapped.so"):
        raise Failure("-shared: the library does not need libfnprof.so")
    link = ["-o", "use_lib", "use_lib.c", "-L.", "-lwrapped", "-Wl,-rpath,$ORIGIN"]
    ctx.run([ctx.wcc] + link)
    expect_calls(ctx.profile("use_lib"), {"lib_run": 1, "lib_step": 7}, "use_lib (wrapped)")
    ctx.run([ctx.cc] + link)
    expect_calls(ctx.profile("use_lib", {"LD_PRELOAD": os.path.join(libdir(ctx), "libfnprof.so")}),
                 {"lib_run": 1, "lib_step": 7}, "use_lib (plain, preloaded)")
    # -r (a relocatable link) is not a program: no runtime in it.
    ctx.run([ctx.wcc, "-c", "lib.c", "-o", "lib.o"])
    ctx.run([ctx.wcc, "-r", "lib.o", "-o", "lib_r.o"])
    if "lib_run" not in ctx.run(["nm", "lib_r.o"]).stdout.decode():
        raise Failure("-r: no lib_run in the output")


def check_env(ctx):
    """FNPROF_CC split at blanks; a loop and a missing compiler are one-line errors; the
    user's -fno-instrument-functions and -Wl,--as-needed ahead of everything are honoured."""
    ctx.src("app.c")
    ctx.run([ctx.wcc, "-c", "app.c", "-o", "env.o"], {"FNPROF_CC": "env LC_ALL=C " + ctx.cc})
    if "__cyg_profile_func_enter" not in nm_undefined(ctx, "env.o"):
        raise Failure("FNPROF_CC with words: not instrumented")
    p = ctx.run([ctx.wcc, "-c", "app.c"], {"FNPROF_CC": ctx.wcc}, check=False)
    lines = p.stderr.decode().splitlines()
    if p.returncode != 1 or len(lines) != 1 or not lines[0].startswith("fnprof: fnprof-cc: "):
        raise Failure("FNPROF_CC=fnprof-cc: exit %d, stderr %r" % (p.returncode, lines))
    p = ctx.run([ctx.wcc, "-c", "app.c"], {"FNPROF_CC": "/nonexistent/cc"}, check=False)
    lines = p.stderr.decode().splitlines()
    if p.returncode != 127 or len(lines) != 1 or not lines[0].startswith("fnprof: fnprof-cc: "):
        raise Failure("missing compiler: exit %d, stderr %r" % (p.returncode, lines))
    # The user's -fno-instrument-functions wins (clang 14 does not know the option: then the
    # compiler's error, as without the wrapper).
    a = ctx.run([ctx.cc, "-fno-instrument-functions", "-c", "app.c", "-o", "no.o"], check=False)
    b = ctx.run([ctx.wcc, "-fno-instrument-functions", "-c", "app.c", "-o", "no.o"],
                check=False)
    if a.returncode != b.returncode:
        raise Failure("-fno-instrument-functions: exit %d vs %d" % (a.returncode, b.returncode))
    if b.returncode == 0 and "__cyg_profile" in nm_undefined(ctx, "no.o"):
        raise Failure("-fno-instrument-functions: the object calls the hooks")
    # --as-needed before the objects (LDFLAGS): the runtime stays (issue 14, item 7).
    ctx.run([ctx.wcc, "-Wl,--as-needed", "-O2", "-o", "app_asneeded", "app.c"])
    expect_calls(ctx.profile("app_asneeded"), {"main": 1, "leaf": 55}, "--as-needed")
    # The detection cache was written, and a second compile uses it.
    cache = os.path.join(ctx.env["XDG_CACHE_HOME"], "fnprof", "cc-kind")
    entries = os.listdir(cache) if os.path.isdir(cache) else []
    if not entries:
        raise Failure("no compiler detection cache in %s" % cache)
    with open(os.path.join(cache, entries[0])) as f:
        kinds = f.read()
    if ctx.kind not in kinds:
        raise Failure("cache says %r for %s" % (kinds, ctx.cc))
    # A corrupt cache entry is ignored, not believed.
    with open(os.path.join(cache, entries[0]), "w") as f:
        f.write("garbage\n")
    ctx.run([ctx.wcc, "-c", "app.c", "-o", "env2.o"], {"FNPROF_CC_VERBOSE": "1"})


FILTER_TEXT = """# helper_* are too cheap to profile
SCOREP_REGION_NAMES_BEGIN
  EXCLUDE helper_*
SCOREP_REGION_NAMES_END
"""

FILE_FILTER_TEXT = """SCOREP_FILE_NAMES_BEGIN
  EXCLUDE */filtered.c
SCOREP_FILE_NAMES_END
"""


def check_filter(ctx):
    """--filter with name rules (gcc: exact exclusion by identifier, two passes) and with
    file rules (both compilers: the source compiled without instrumentation)."""
    ctx.src("filtered.c")
    with open(os.path.join(ctx.work, "names.filter"), "w") as f:
        f.write(FILTER_TEXT)
    with open(os.path.join(ctx.work, "files.filter"), "w") as f:
        f.write(FILE_FILTER_TEXT)
    ctx.run([ctx.wcc, "--filter", "names.filter", "-O2", "-c", "filtered.c", "-o", "f.o"])
    ctx.run([ctx.wcc, "-o", "filtered", "f.o"])
    stats = ctx.profile("filtered")
    expect_calls(stats, {"main": 1, "keep_work": 1, "keep_helper_x": 5}, "--filter")
    got = calls_by_name(stats)
    if ctx.kind == "gcc":
        # helper_add/helper_mul: gone at compile time; helper_x: its name is inside
        # keep_helper_x's, which gcc's substring match would exclude too: kept.
        for name in ("helper_add", "helper_mul"):
            if name in got:
                raise Failure("--filter: %s still instrumented: %s" % (name, sorted(got)))
        if got.get("helper_x") != 5:
            raise Failure("--filter: helper_x must stay (5 calls): %s" % sorted(got.items()))
    else:
        if got.get("helper_add") != 5:
            raise Failure("--filter with clang changes nothing at compile time: %s"
                          % sorted(got.items()))
    ctx.run([ctx.wcc, "--filter=files.filter", "-O2", "-c", "filtered.c", "-o", "ff.o"])
    if "__cyg_profile" in nm_undefined(ctx, "ff.o"):
        raise Failure("--filter with a file rule: the excluded source is instrumented")
    # A malformed filter: one line naming file and line, exit 1, nothing compiled.
    with open(os.path.join(ctx.work, "bad.filter"), "w") as f:
        f.write("SCOREP_REGION_NAMES_BEGIN\n  FROB x\n")
    p = ctx.run([ctx.wcc, "--filter", "bad.filter", "-c", "filtered.c", "-o", "bad.o"],
                check=False)
    lines = p.stderr.decode().splitlines()
    if p.returncode != 1 or len(lines) != 1 or "bad.filter:" not in lines[0]:
        raise Failure("bad filter: exit %d, stderr %r" % (p.returncode, lines))


def check_uninstrumented_link(ctx):
    """A link of objects compiled without the wrapper (a Makefile's $(MPICC)-style compiler
    variable): one line on stderr saying so; the link and the program as without it. A link
    with one instrumented object, or with sources it compiles itself, says nothing."""
    plain, inst = "plain.o", "inst.o"
    ctx.run([ctx.cc, "-O2", "-c", ctx.src("app.c"), "-o", plain])
    ctx.run([ctx.wcc, "-O2", "-c", "app.c", "-o", inst])
    p = ctx.run([ctx.wcc, "-o", "app_plain", plain])
    lines = p.stderr.decode().splitlines()
    want = "fnprof: fnprof-cc: none of the objects linked calls the profiling hooks"
    if len(lines) != 1 or not lines[0].startswith(want) or "$(MPICC)" not in lines[0]:
        raise Failure("a link of uninstrumented objects: stderr %r, not one line %r"
                      % (lines, want))
    if ctx.run([os.path.join(ctx.work, "app_plain")]).stdout.strip() == b"":
        raise Failure("the uninstrumented program printed nothing")
    for what, cmd in (("an instrumented object", [ctx.wcc, "-o", "app_inst", inst]),
                      ("sources", [ctx.wcc, "-O2", "-o", "app_src", "app.c"])):
        p = ctx.run(cmd)
        if p.stderr:
            raise Failure("a link of %s: stderr %r" % (what, p.stderr.decode()))


CHECKS = {
    "uninstrumented_link": check_uninstrumented_link,
    "profile_c": check_profile_c,
    "profile_cxx": check_profile_cxx,
    "separate": check_separate,
    "preprocess": check_preprocess,
    "failure": check_failure,
    "response": check_response,
    "info": check_info,
    "probes": check_probes,
    "shared": check_shared,
    "env": check_env,
    "filter": check_filter,
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", required=True, help="directory with fnprof-cc and fnprof-c++")
    ap.add_argument("--cc", choices=("gcc", "clang"), required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("check", choices=sorted(CHECKS))
    args = ap.parse_args()
    ctx = Ctx(args)
    for tool in (ctx.wcc, ctx.wcxx):
        if not os.access(tool, os.X_OK):
            print("check_wrappers: %s: not built" % tool, file=sys.stderr)
            return 2
    if shutil.which(ctx.cc) is None:
        print("check_wrappers: %s not installed" % ctx.cc, file=sys.stderr)
        return 2
    shutil.rmtree(ctx.work, ignore_errors=True)
    os.makedirs(ctx.work)
    try:
        CHECKS[args.check](ctx)
    except Failure as e:
        print("FAIL %s (%s): %s" % (args.check, args.cc, e), file=sys.stderr)
        return 1
    print("ok %s (%s)" % (args.check, args.cc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
# SPDX-License-Identifier: MIT
