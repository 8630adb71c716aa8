#!/usr/bin/env python3
"""fnprof as users take it: from an installed tree (cmake --install into a scratch prefix),
by every route docs/integration.md lists. One case per run; tests/install.cmake runs each.

    install_test.py install --build BUILD --prefix PREFIX
    install_test.py CASE --prefix PREFIX --work DIR [--cc gcc|clang] [--mode M] [--static]

CASE:
  static         a -static program linked with libfnprof.a by `pkg-config --static`'s line:
                 runs as without fnprof when PROF_OUTPUT is unset, profiles exactly when set
  link-position  -Wl,--as-needed first, pkg-config's line before or after the objects,
                 shared and static: the program profiles in all four
  abs-paths      the installed CMake and pkg-config files name no path of the build machine
  find-package   find_package(fnprof QUIET|REQUIRED) where libfnprof.a's dependencies are
                 hidden: configure succeeds, libfnprof.so's program builds and profiles
  subdir         add_subdirectory(fnprof), building only the user's target: names resolved
  multi          2 static libraries + 1 shared + app, --mode DEPENDENCIES or DIRECTORY:
                 every library's functions in the profile with exact calls
  cxx            C++ with the standard library, by pkg-config (fnprof-gcc / fnprof-clang)
                 and by CMake: no function from /usr/include in the profile
Exit 0 pass, 1 fail. python3 standard library only.
"""

import argparse
import os
import pstats
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))  # fnprof's source tree
TIMEOUT = 600


class Failure(Exception):
    pass


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PROF_", "FNPROF_", "PKG_CONFIG_"))
           and k not in ("LD_PRELOAD", "LD_LIBRARY_PATH", "CFLAGS", "CXXFLAGS", "LDFLAGS",
                         "CMAKE_PREFIX_PATH")}
    env["LC_ALL"] = "C"
    env.update(extra)
    return env


def run(cmd, env=None, cwd=None, ok=True):
    print("+ " + " ".join(cmd), flush=True)
    p = subprocess.run(cmd, env=env or clean_env(), cwd=cwd, capture_output=True, text=True,
                       timeout=TIMEOUT)
    if ok and p.returncode != 0:
        raise Failure("exit %d: %s\n%s%s" % (p.returncode, " ".join(cmd), p.stdout, p.stderr))
    return p


def check(cond, what):
    if not cond:
        raise Failure(what)


def pkg_config(prefix, *args):
    env = clean_env(PKG_CONFIG_PATH=os.path.join(prefix, "lib", "pkgconfig"))
    return run(["pkg-config"] + list(args), env=env).stdout.split()


def profile(path):
    """{(file basename, line, name): (ncalls, pcalls, callers as {name: ncalls})}"""
    check(os.path.exists(path), "no profile written at " + path)
    out = {}
    for (f, line, name), (cc, nc, tt, ct, callers) in pstats.Stats(path).stats.items():
        out[(f, line, name)] = (nc, cc, {k[2]: v[0] for k, v in callers.items()})
    return out


def by_name(prof):
    return {k[2]: v for k, v in prof.items()}


def run_profiled(exe, work, name, env_extra=None, expect_out=None):
    """Runs exe twice: without PROF_OUTPUT (must behave as a plain program: expect_out on
    stdout, nothing on stderr, exit 0, no file) and with it; returns the profile."""
    out = os.path.join(work, name + ".prof")
    if os.path.exists(out):
        os.remove(out)
    p = run([exe], env=clean_env(**(env_extra or {})), cwd=work)
    check(p.stderr == "", "%s without PROF_OUTPUT wrote to stderr: %r" % (name, p.stderr))
    if expect_out is not None:
        check(p.stdout == expect_out, "%s printed %r, not %r" % (name, p.stdout, expect_out))
    check(not os.path.exists(out), name + ": a profile without PROF_OUTPUT")
    p = run([exe], env=clean_env(PROF_OUTPUT=out, PROF_QUIET="1", **(env_extra or {})), cwd=work)
    if expect_out is not None:
        check(p.stdout == expect_out, "%s profiled printed %r" % (name, p.stdout))
    return profile(out)


def expect_square(prof, src, what):
    """square called 10 times by main, named from the program's DWARF (file and line)."""
    key = (src, 5, "square")
    check(key in prof, "%s: no %s in %s" % (what, key, sorted(prof)))
    check(prof[key][:2] == (10, 10), "%s: square %s" % (what, prof[key]))
    check(prof[key][2] == {"main": 10}, "%s: square's callers %s" % (what, prof[key][2]))


def is_static(exe):
    headers = run(["readelf", "-lW", exe]).stdout
    return "INTERP" not in headers and "Requesting program interpreter" not in headers


# ---- cases ----------------------------------------------------------------------------

def case_install(a):
    shutil.rmtree(a.prefix, ignore_errors=True)
    run(["cmake", "--install", a.build, "--prefix", a.prefix])


def case_static(a):
    cc = a.cc or "gcc"
    src = os.path.join(a.work, "main.c")
    shutil.copy(os.path.join(HERE, "main.c"), src)
    cflags = pkg_config(a.prefix, "--static", "--cflags", "fnprof")
    libs = pkg_config(a.prefix, "--static", "--libs", "fnprof")
    check("-finstrument-functions" in cflags, "pkg-config --cflags: %s" % cflags)
    plain = os.path.join(a.work, "plain")
    exe = os.path.join(a.work, "prog")
    inc = [f for f in cflags if f.startswith("-I")]
    run([cc, "-static", "-O1", "main.c"] + inc + libs + ["-o", plain], cwd=a.work)
    run([cc, "-static", "-O1", "main.c"] + cflags + libs + ["-o", exe], cwd=a.work)
    for e in (plain, exe):
        check(is_static(e), e + " is not a static executable")
    expected = run([plain], cwd=a.work).stdout
    check(expected == "285 0.1.0\n", "the uninstrumented program printed %r" % expected)
    prof = run_profiled(exe, a.work, "prog", expect_out=expected)
    expect_square(prof, src, "static " + cc)
    check(by_name(prof)["main"][:2] == (1, 1), "main: %r" % (by_name(prof)["main"],))
    check(len(prof) == 2, "functions: %s" % sorted(prof))
    # fnprof_dump from the program, with its return value as the exit status.
    out = os.path.join(a.work, "dumped.prof")
    p = run([exe, "dump"], env=clean_env(PROF_OUTPUT=out, PROF_QUIET="1"), cwd=a.work, ok=False)
    check(p.returncode == 0, "fnprof_dump in a static program failed: %s" % p.stderr)


def case_link_position(a):
    cc = a.cc or "gcc"
    src = os.path.join(a.work, "noapi.c")
    shutil.copy(os.path.join(HERE, "noapi.c"), src)
    for kind in ("shared", "static"):
        static = ["--static"] if kind == "static" else []
        cflags = pkg_config(a.prefix, *static, "--cflags", "fnprof")
        libs = pkg_config(a.prefix, *static, "--libs", "fnprof")
        obj = os.path.join(a.work, "noapi.o")
        run([cc, "-c", "-O1", "noapi.c"] + cflags + ["-o", obj], cwd=a.work)
        extra = ["-static"] if static else ["-Wl,-rpath," + os.path.join(a.prefix, "lib")]
        for where in ("after", "before"):
            exe = os.path.join(a.work, "%s-%s" % (kind, where))
            objs_libs = [obj] + libs if where == "after" else libs + [obj]
            # LDFLAGS first, as make's default link rule puts them.
            run([cc, "-Wl,--as-needed"] + extra + objs_libs + ["-o", exe], cwd=a.work)
            prof = run_profiled(exe, a.work, "%s-%s" % (kind, where), expect_out="285\n")
            expect_square(prof, src, "%s, libraries %s the objects" % (kind, where))
    # The line this replaces, for the record: a bare -lfnprof before the objects is dropped.
    exe = os.path.join(a.work, "naive")
    run([cc, "-Wl,--as-needed", "-L" + os.path.join(a.prefix, "lib"), "-lfnprof", obj, "-o", exe],
        cwd=a.work)
    needed = run(["readelf", "-dW", exe]).stdout
    print("note: a bare -lfnprof before the objects under --as-needed is %s" %
          ("kept" if "libfnprof" in needed else "dropped (what the pkg-config line avoids)"))


def case_abs_paths(a):
    build = os.path.realpath(a.build)
    bad = [build, os.path.realpath(SOURCE), os.path.realpath(a.prefix),
           "/usr/lib/x86_64-linux-gnu/libdwarf", "/usr/lib/x86_64-linux-gnu/libelf",
           "/usr/lib/x86_64-linux-gnu/libz"]
    files = []
    for sub in ("cmake/fnprof", "pkgconfig"):
        d = os.path.join(a.prefix, "lib", sub)
        files += [os.path.join(d, f) for f in sorted(os.listdir(d))]
    check(any(f.endswith("fnprofStaticTargets.cmake") for f in files), "no static targets file")
    for f in files:
        text = open(f).read()
        for b in bad:
            check(b not in text, "%s names %s" % (f, b))
    print("checked %d files" % len(files))


def cmake_consumer(a, project, name, defs, env=None, build=True, ok=True, target=None):
    bdir = os.path.join(a.work, name)
    shutil.rmtree(bdir, ignore_errors=True)
    cmd = ["cmake", "-S", os.path.join(HERE, project), "-B", bdir,
           "-DCMAKE_PREFIX_PATH=" + a.prefix] + ["-D" + d for d in defs]
    p = run(cmd, env=env, ok=ok)
    if p.returncode == 0 and build:
        cmd = ["cmake", "--build", bdir, "-j2"] + (["--target", target] if target else [])
        run(cmd, env=env)
    return bdir, p


def case_find_package(a):
    empty = os.path.join(a.work, "empty-pkgconfig")
    os.makedirs(empty, exist_ok=True)
    hide_pc = clean_env(PKG_CONFIG_PATH=empty, PKG_CONFIG_LIBDIR=empty)
    src = os.path.join(HERE, "main.c")
    # libelf's .pc hidden: the package does not need it; libfnprof.a stays available.
    # /usr ignored: libelf, libdwarf and zlib are missing; fnprof::fnprof still works.
    for hidden, defs, expect_static in (
            ("pc", [], 1), ("usr", ["CMAKE_IGNORE_PREFIX_PATH=/usr"], 0)):
        for mode in ("QUIET", "REQUIRED"):
            name = "%s-%s" % (hidden, mode)
            bdir, p = cmake_consumer(a, "shared_only", name,
                                     defs + ["FNP_MODE=" + mode,
                                             "FNP_EXPECT_STATIC=%d" % expect_static],
                                     env=hide_pc)
            if not expect_static and mode == "REQUIRED":
                check("libfnprof.a" in p.stdout, "no message on the missing static target:\n"
                      + p.stdout)
            env = {"LD_LIBRARY_PATH": os.path.join(a.prefix, "lib")}
            prof = run_profiled(os.path.join(bdir, "consumer"), a.work, name, env,
                                expect_out="285 0.1.0\n")
            expect_square(prof, src, name)
    # Asking for the static component where it cannot be had fails, as REQUIRED should.
    _, p = cmake_consumer(a, "shared_only", "usr-component",
                          ["CMAKE_IGNORE_PREFIX_PATH=/usr", "FNP_MODE=REQUIRED;COMPONENTS;static",
                           "FNP_EXPECT_STATIC=0"], env=hide_pc, build=False, ok=False)
    check(p.returncode != 0, "COMPONENTS static without libelf configured")
    # The package itself absent: REQUIRED fails as CMake does; QUIET says nothing.
    for mode, fails in (("REQUIRED", True), ("QUIET", False)):
        bdir = os.path.join(a.work, "absent-" + mode)
        shutil.rmtree(bdir, ignore_errors=True)
        p = run(["cmake", "-S", os.path.join(HERE, "shared_only"), "-B", bdir,
                 "-DFNP_MODE=" + mode, "-Dfnprof_DIR=" + os.path.join(a.work, "nowhere")],
                ok=False)
        check(p.returncode != 0, "configure without the package succeeded")
        said = 'Could not find a package configuration file provided by "fnprof"' in p.stderr
        check(said == fails, "absent, %s: stderr %s" % (mode, p.stderr))


def case_subdir(a):
    bdir, _ = cmake_consumer(a, "subdir", "subdir", ["FNP_SOURCE=" + SOURCE], target="consumer")
    check(os.path.exists(os.path.join(bdir, "fnprof", "lib", "libfnprof-symbolizer.so")),
          "building consumer alone did not build libfnprof-symbolizer.so")
    prof = run_profiled(os.path.join(bdir, "consumer"), a.work, "subdir",
                        expect_out="285 0.1.0\n")
    expect_square(prof, os.path.join(HERE, "main.c"), "add_subdirectory")


def case_multi(a):
    # --as-needed, as several distributions' compilers default to: the runtime must stay.
    defs = ["FNP_MODE=" + a.mode, "FNP_STATIC=%d" % a.static,
            "CMAKE_EXE_LINKER_FLAGS=-Wl,--as-needed", "CMAKE_SHARED_LINKER_FLAGS=-Wl,--as-needed"]
    bdir, _ = cmake_consumer(a, "multi", "multi", defs)
    env = {"LD_LIBRARY_PATH": os.path.join(a.prefix, "lib")}
    prof = by_name(run_profiled(os.path.join(bdir, "app"), a.work, "multi", env,
                                expect_out="62\n"))
    want = {"main": (1, 1, {}), "alpha_step": (7, 7, {"main": 7}),
            "beta_leaf": (7, 7, {"alpha_step": 7}), "gamma_twice": (3, 3, {"main": 3})}
    check(prof == want, "profile %s, not %s" % (prof, want))


def check_cxx(prof, what, cc, neutral):
    """main.cpp's functions exact; gcc: nothing from /usr/include; clang, which has no such
    filter, only what survived inlining: a tenth of the neutral build's system functions."""
    mine = {k: v for k, v in prof.items() if k[0].endswith("main.cpp")}
    names = sorted(k[2].split("(")[0] for k in mine)
    check(names == ["main", "weigh_all", "weight"], "%s: main.cpp's functions %s" % (what, names))
    weight = [v for k, v in mine.items() if k[2].startswith("weight")][0]
    check(weight[:2] == (5, 5), "%s: weight %r" % (what, weight[:2]))
    system = sorted(k for k in prof if k[0].startswith("/usr/"))
    if cc == "gcc":
        check(not system, "%s: system headers' functions in the profile: %s" % (what, system[:5]))
    else:
        check(len(system) * 10 <= neutral, "%s: %d system functions of %d without exclusions"
              % (what, len(system), neutral))
    others = sorted(k for k in prof if k not in mine and k not in system)
    check(not others, "%s: unexpected functions %s" % (what, others[:5]))
    print("%s: %d functions from system headers (%d without exclusions)"
          % (what, len(system), neutral))


def case_cxx(a):
    cc = a.cc or "gcc"
    cxx = {"gcc": "g++", "clang": "clang++"}[cc]
    src = os.path.join(a.work, "main.cpp")
    shutil.copy(os.path.join(HERE, "cxx", "main.cpp"), src)
    env = {"LD_LIBRARY_PATH": os.path.join(a.prefix, "lib")}
    # The compiler-neutral module instruments the standard library: the check below can fail.
    flags = pkg_config(a.prefix, "--cflags", "--libs", "fnprof")
    run([cxx, "-O2", "main.cpp"] + flags + ["-o", "neutral"], cwd=a.work)
    prof = run_profiled(os.path.join(a.work, "neutral"), a.work, "neutral", env)
    neutral = sum(1 for k in prof if k[0].startswith("/usr/"))
    check(neutral >= 20, "without exclusions, %d std:: functions: the test proves nothing"
          % neutral)
    flags = pkg_config(a.prefix, "--cflags", "--libs", "fnprof-" + cc)
    run([cxx, "-O2", "main.cpp"] + flags + ["-o", "excluding"], cwd=a.work)
    check_cxx(run_profiled(os.path.join(a.work, "excluding"), a.work, "excluding", env,
                           expect_out="112 120\n"), "pkg-config fnprof-" + cc, cc, neutral)
    bdir, _ = cmake_consumer(a, "cxx", "cxx", ["CMAKE_CXX_COMPILER=" + cxx,
                                               "CMAKE_BUILD_TYPE=Release"])
    check_cxx(run_profiled(os.path.join(bdir, "sorter"), a.work, "cmake", env,
                           expect_out="112 120\n"), "CMake with " + cxx, cc, neutral)


CASES = {"install": case_install, "static": case_static, "link-position": case_link_position,
         "abs-paths": case_abs_paths, "find-package": case_find_package, "subdir": case_subdir,
         "multi": case_multi, "cxx": case_cxx}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("case", choices=sorted(CASES))
    ap.add_argument("--prefix", required=True)
    ap.add_argument("--build", help="fnprof's build tree (install, abs-paths)")
    ap.add_argument("--work")
    ap.add_argument("--cc", choices=("gcc", "clang"))
    ap.add_argument("--mode", choices=("DEPENDENCIES", "DIRECTORY"), default="DEPENDENCIES")
    ap.add_argument("--static", action="store_true")
    a = ap.parse_args()
    a.prefix = os.path.abspath(a.prefix)
    a.static = int(a.static)
    if a.work:
        a.work = os.path.abspath(a.work)
        shutil.rmtree(a.work, ignore_errors=True)
        os.makedirs(a.work)
    try:
        CASES[a.case](a)
    except Failure as e:
        print("FAIL: %s" % e)
        return 1
    print("PASS: " + a.case)
    return 0


if __name__ == "__main__":
    sys.exit(main())
