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
  build-tree     find_package(fnprof) from the build tree (-Dfnprof_DIR=BUILD/cmake), no
                 install: libfnprof.so and libfnprof.a programs profile
  relocated      installed, then the prefix moved: pkg-config's paths follow it, autoconf's
                 "can the compiler make programs" probe passes with the .pc flags and no
                 LD_LIBRARY_PATH, `fnprof --libdir` names the moved lib directory and the
                 README's LD_PRELOAD line with it profiles, fnprof run and the wrappers work,
                 examples/primes builds by make (fnprof-cc, pkg-config) and CMake
  man            man -l on the installed pages, and `man fnprof-c++` with MANPATH (groff
                 when man is absent; skipped, exit 77, with neither)
  deb            cpack -G DEB in BUILD, dpkg -x into a scratch root: the package's files,
                 dependencies, and a program profiled with only what it installed; a
                 system install adds no rpath (pkg-config, fnprof_instrument)
Exit 0 pass, 1 fail, 77 skipped (a tool missing: the reason is printed). python3 standard
library only.
"""

import argparse
import importlib.machinery
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


class Skip(Exception):
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


def case_build_tree(a):
    """The package in the build tree, before any install (fnprofTargets.cmake exported)."""
    pkg = os.path.join(a.build, "cmake")
    bdir = os.path.join(a.work, "consumer")
    run(["cmake", "-S", HERE, "-B", bdir, "-Dfnprof_DIR=" + pkg])
    run(["cmake", "--build", bdir])
    src = os.path.join(HERE, "main.c")
    for prog in ("consumer", "consumer_static"):
        # No LD_LIBRARY_PATH: CMake's build rpath names the build tree's lib directory.
        prof = run_profiled(os.path.join(bdir, prog), a.work, prog, expect_out="285 0.1.0\n")
        expect_square(prof, src, "build tree, " + prog)


PRIMES_OUT = "9592 primes below 100000\n"  # examples/primes run without arguments


def expect_primes(prof, what, limit=100000):
    names = by_name(prof)
    want = {"main": (1, 1, {}), "count_primes": (1, 1, {"main": 1}),
            "is_prime": (limit, limit, {"count_primes": limit})}
    check(names == want, "%s: profile %s, not %s" % (what, names, want))


def build_primes(a, name, make_args, env=None):
    """examples/primes copied to work/name and built by make with make_args."""
    d = os.path.join(a.work, name)
    shutil.rmtree(d, ignore_errors=True)
    shutil.copytree(os.path.join(SOURCE, "examples", "primes"), d)
    run(["make", "-C", d] + make_args, env=env)
    return os.path.join(d, "primes")


def case_relocated(a):
    # Installed to one place, then moved: nothing may still point at the first place.
    first = os.path.join(a.work, "first")
    moved = os.path.join(a.work, "moved")
    run(["cmake", "--install", a.build, "--prefix", first])
    os.rename(first, moved)
    lib = os.path.join(moved, "lib")
    pc_env = clean_env(PKG_CONFIG_PATH=os.path.join(lib, "pkgconfig"))
    libdir = run(["pkg-config", "--variable=libdir", "fnprof"], env=pc_env).stdout.strip()
    check(os.path.realpath(libdir) == os.path.realpath(lib), "pkg-config's libdir %s" % libdir)
    cflags = run(["pkg-config", "--cflags", "fnprof"], env=pc_env).stdout.split()
    libs = run(["pkg-config", "--libs", "fnprof"], env=pc_env).stdout.split()
    check(any(f.startswith("-Wl,-rpath,") for f in libs), "no rpath in Libs: %s" % libs)
    # autoconf's AC_PROG_CC probe: $CC $CFLAGS $CPPFLAGS $LDFLAGS conftest.c $LIBS, then run
    # it; a program that cannot start fails configure ("cannot run C compiled programs").
    with open(os.path.join(a.work, "conftest.c"), "w") as f:
        f.write("int main(void)\n{\n    return 0;\n}\n")
    run(["cc", "-O2"] + cflags + ["conftest.c"] + libs + ["-o", "conftest"], cwd=a.work)
    run([os.path.join(a.work, "conftest")], cwd=a.work)
    shutil.copy(os.path.join(HERE, "main.c"), os.path.join(a.work, "main.c"))
    run(["cc", "-O1", "main.c"] + cflags + libs + ["-o", "pc-prog"], cwd=a.work)
    expect_square(run_profiled(os.path.join(a.work, "pc-prog"), a.work, "pc-prog",
                               expect_out="285 0.1.0\n"),
                  os.path.join(a.work, "main.c"), "pkg-config, moved prefix")
    # The README's LD_PRELOAD line, with the directory fnprof --libdir prints.
    fnprof = os.path.join(moved, "bin", "fnprof")
    said = run([fnprof, "--libdir"]).stdout.strip()
    check(said == os.path.realpath(lib), "fnprof --libdir said %r, not %r" % (said, lib))
    shutil.copy(os.path.join(HERE, "noapi.c"), os.path.join(a.work, "noapi.c"))
    run(["cc", "-g", "-O1", "-finstrument-functions", "noapi.c", "-o", "plain"], cwd=a.work)
    preload = os.path.join(said, "libfnprof.so")
    check(os.path.exists(preload), preload + " does not exist")
    expect_square(run_profiled(os.path.join(a.work, "plain"), a.work, "preloaded",
                               env_extra={"LD_PRELOAD": preload}, expect_out="285\n"),
                  os.path.join(a.work, "noapi.c"), "LD_PRELOAD=$(fnprof --libdir)/libfnprof.so")
    out = os.path.join(a.work, "run.prof")
    run([fnprof, "run", "-q", "-o", out, "--", os.path.join(a.work, "plain")], cwd=a.work)
    expect_square(profile(out), os.path.join(a.work, "noapi.c"), "fnprof run, moved prefix")
    # A Make project, by the wrapper and by pkg-config's flags, with no LD_LIBRARY_PATH.
    for name, args in (
            ("make-wrapper", ["CC=" + os.path.join(moved, "bin", "fnprof-cc")]),
            ("make-pkgconfig", ["CFLAGS=-O2 " + " ".join(cflags), "LDLIBS=" + " ".join(libs)])):
        exe = build_primes(a, name, args)
        prof = run_profiled(exe, os.path.dirname(exe), "primes", expect_out=PRIMES_OUT)
        expect_primes(prof, name)
    # The same project by CMake, its library instrumented too (fnprof_instrument DEPENDENCIES).
    bdir = os.path.join(a.work, "cmake-primes")
    run(["cmake", "-S", os.path.join(SOURCE, "examples", "primes"), "-B", bdir, "-DPROFILE=ON",
         "-DCMAKE_PREFIX_PATH=" + moved])
    run(["cmake", "--build", bdir])
    expect_primes(run_profiled(os.path.join(bdir, "primes"), bdir, "primes",
                               expect_out=PRIMES_OUT), "CMake")


def case_man(a):
    man1 = os.path.join(a.prefix, "share", "man", "man1")
    pages = {"fnprof.1": "fnprof report", "fnprof-cc.1": "fnprof-cc"}
    env = clean_env(MANPATH=os.path.join(a.prefix, "share", "man"), MANWIDTH="80",
                    MAN_KEEP_FORMATTING="0", PAGER="cat", MANPAGER="cat")
    if shutil.which("man"):
        for page, want in pages.items():
            text = run(["man", "-l", os.path.join(man1, page)], env=env).stdout
            check(want in text, "man -l %s: no %r in\n%s" % (page, want, text[:500]))
        # By name, as a user types it: fnprof-c++ is a link to fnprof-cc's page.
        for name, want in (("fnprof", "fnprof report"), ("fnprof-c++", "fnprof-cc")):
            text = run(["man", name], env=env).stdout
            check(want in text, "man %s: no %r in\n%s" % (name, want, text[:500]))
    elif shutil.which("groff"):
        for page, want in pages.items():
            p = run(["groff", "-man", "-Tutf8", "-ww", os.path.join(man1, page)])
            check(p.stderr == "", "groff warns on %s: %s" % (page, p.stderr))
            check(want in p.stdout, "groff %s: no %r" % (page, want))
        check(os.path.realpath(os.path.join(man1, "fnprof-c++.1")) ==
              os.path.realpath(os.path.join(man1, "fnprof-cc.1")), "fnprof-c++.1")
    else:
        raise Skip("neither man nor groff is installed (apt-get install man-db)")


def deb_python(a, root):
    """The Python package, when the build made it: in the .deb where Debian's python3 looks
    (/usr/lib/python3/dist-packages), imported from the unpacked root by that python3 with
    only PYTHONPATH (its _fnprof finds the root's libfnprof.so by its runpath), and
    `python3 -m fnprof -o` profiling a script there."""
    # The build's own extension (the one for the Python the tests run with, as CMake found
    # it); tests/python.cmake builds 3.12's and 3.13's beside it, for its tests only.
    built = ["_fnprof" + x for x in importlib.machinery.EXTENSION_SUFFIXES
             if os.path.isfile(os.path.join(a.build, "python", "fnprof", "_fnprof" + x))][:1]
    if not built:
        print("no Python package in the build: not checked in the .deb")
        return
    pkg = os.path.join(root, "usr", "lib", "python3", "dist-packages", "fnprof")
    for f in ["__init__.py", "__main__.py"] + built:
        check(os.path.isfile(os.path.join(pkg, f)),
              "the package lacks /usr/lib/python3/dist-packages/fnprof/" + f)
    py = "/usr/bin/python3"
    if not os.access(py, os.X_OK):
        print("no %s: the packaged Python module not imported" % py)
        return
    suffixes = run([py, "-c", "import importlib.machinery as m; "
                    "print(' '.join(m.EXTENSION_SUFFIXES))"]).stdout.split()
    if not any(f.endswith(x) for f in built for x in suffixes):
        print("%s is not the Python the module was built for (%s): not imported" % (py, built))
        return
    env = clean_env(PYTHONPATH=os.path.dirname(pkg))
    env.pop("PYTHONHOME", None)
    got = run([py, "-c", "import fnprof, fnprof._fnprof as m; print(fnprof.__file__); "
               "print(m.library())"], env=env).stdout.split("\n")
    real = os.path.realpath(root) + "/"
    check(os.path.realpath(got[0]).startswith(real) and
          os.path.realpath(got[1]).startswith(real),
          "Debian's python3 took fnprof from outside the unpacked .deb: %r" % got)
    with open(os.path.join(a.work, "deb_script.py"), "w") as f:
        f.write("def square(x):\n    return x * x\n\n\nprint(sum(square(i) for i in range(9)))\n")
    out = os.path.join(a.work, "deb_script.prof")
    p = run([py, "-m", "fnprof", "-o", out, "deb_script.py"], env=env, cwd=a.work)
    check(p.stdout == "204\n", "python3 -m fnprof from the .deb printed %r" % p.stdout)
    calls = {k[2]: v[0] for k, v in profile(out).items()}
    check(calls.get("square") == 9, "python3 -m fnprof from the .deb: square's calls %r"
          % calls.get("square"))


def case_deb(a):
    for tool in ("cpack", "dpkg-deb", "dpkg-shlibdeps", "dpkg"):
        if not shutil.which(tool):
            raise Skip(tool + " is not installed (apt-get install dpkg-dev)")
    out = os.path.join(a.work, "out")
    run(["cpack", "-G", "DEB", "-B", out], cwd=a.build)
    debs = sorted(f for f in os.listdir(out) if f.endswith(".deb"))
    arch = run(["dpkg", "--print-architecture"]).stdout.strip()
    mpi_built = os.path.exists(os.path.join(a.build, "lib", "libfnprof-mpi.so"))
    mpich_built = os.path.exists(os.path.join(a.build, "lib", "libfnprof-mpich.so"))
    want = ["fnprof_0.1.0_%s.deb" % arch] + (["fnprof-mpi_0.1.0_%s.deb" % arch] if mpi_built
                                             else [])
    mpich_deb = "fnprof-mpich_0.1.0_%s.deb" % arch
    want += [mpich_deb] if mpich_built else []
    check(debs == sorted(want), "cpack wrote %s, not %s" % (debs, want))
    deb = os.path.join(out, want[0])

    def control(path):
        fields = {}
        for line in run(["dpkg-deb", "-f", path]).stdout.splitlines():
            if ":" in line and not line.startswith(" "):
                k, v = line.split(":", 1)
                fields[k] = v.strip()
        return fields
    fields = control(deb)
    depends = fields.get("Depends", "")
    for lib in ("libc6", "libelf1", "libdwarf1", "zlib1g"):
        check(lib in depends, "Depends lacks %s: %r" % (lib, depends))
    # MPI is the fnprof-mpi package's dependency alone.
    check("mpi" not in depends, "fnprof depends on MPI: %r" % depends)
    check(fields.get("Package") == "fnprof", "Package: %r" % fields.get("Package"))
    if mpi_built:
        mpi_deb = os.path.join(out, want[1])
        mfields = control(mpi_deb)
        check(mfields.get("Package") == "fnprof-mpi", "Package: %r" % mfields.get("Package"))
        check("fnprof (= 0.1.0)" in mfields.get("Depends", "") and
              "libopenmpi" in mfields.get("Depends", ""),
              "fnprof-mpi's Depends: %r" % mfields.get("Depends"))
        mlisting = run(["dpkg-deb", "-c", mpi_deb]).stdout
        check("./usr/lib/libfnprof-mpi.so" in mlisting, "fnprof-mpi lacks libfnprof-mpi.so")
        check("libfnprof-mpich" not in mlisting, "libfnprof-mpich.so is in fnprof-mpi")
    if mpich_built:
        # MPICH's wrappers: their own package, depending on MPICH's library alone.
        path = os.path.join(out, mpich_deb)
        mfields = control(path)
        depends = mfields.get("Depends", "")
        check(mfields.get("Package") == "fnprof-mpich", "Package: %r" % mfields.get("Package"))
        check("fnprof (= 0.1.0)" in depends and "libmpich" in depends
              and "libopenmpi" not in depends, "fnprof-mpich's Depends: %r" % depends)
        check("./usr/lib/libfnprof-mpich.so" in run(["dpkg-deb", "-c", path]).stdout,
              "fnprof-mpich lacks libfnprof-mpich.so")
    root = os.path.join(a.work, "root")
    run(["dpkg", "-x", deb, root])
    usr = os.path.join(root, "usr")
    listing = run(["dpkg-deb", "-c", deb]).stdout
    for f in ("usr/bin/fnprof", "usr/bin/fnprof-cc", "usr/bin/fnprof-c++", "usr/include/fnprof.h",
              "usr/lib/libfnprof.so", "usr/lib/libfnprof.a", "usr/lib/libfnprof-symbolizer.so",
              "usr/lib/pkgconfig/fnprof.pc", "usr/lib/cmake/fnprof/fnprofConfig.cmake",
              "usr/lib/cmake/fnprof/fnprofTargets.cmake", "usr/share/man/man1/fnprof.1",
              "usr/share/man/man1/fnprof-cc.1", "usr/share/doc/fnprof/copyright",
              "usr/libexec/fnprof/patchable/as", "usr/libexec/fnprof/patchable/gcrt1.o",
              "usr/libexec/fnprof/patchable/grcrt1.o", "usr/lib/pkgconfig/fnprof-patchable.pc",
              "usr/lib/pkgconfig/fnprof-patchable-clang.pc"):
        check(os.path.lexists(os.path.join(root, f)), "the package lacks /" + f)
    check("libfnprof-mpi" not in listing, "libfnprof-mpi.so is in the fnprof package")
    # Only the unpacked root from here on: the build tree and the scratch prefix are hidden
    # from every lookup (no LD_LIBRARY_PATH, pkg-config and CMake pointed at the root).
    fnprof = os.path.join(usr, "bin", "fnprof")
    check(run([fnprof, "--version"]).stdout == "fnprof 0.1.0\n", "fnprof --version")
    pc_env = clean_env(PKG_CONFIG_PATH=os.path.join(usr, "lib", "pkgconfig"))
    cflags = run(["pkg-config", "--cflags", "fnprof"], env=pc_env).stdout.split()
    libs = run(["pkg-config", "--libs", "fnprof"], env=pc_env).stdout.split()
    for f in cflags + libs:
        for opt in ("-I", "-L"):
            if f.startswith(opt):
                path = os.path.realpath(f[len(opt):])
                check(path.startswith(os.path.realpath(root) + "/"),
                      "pkg-config names %s, outside the unpacked package" % f)
    # A system install (/usr/lib, where the loader looks) gives its programs no rpath.
    for module in ("fnprof", "fnprof-gcc", "fnprof-clang", "fnprof-patchable",
                   "fnprof-patchable-clang"):
        line = run(["pkg-config", "--libs", module], env=pc_env).stdout
        check("rpath" not in line, "the .deb's %s.pc adds an rpath: %s" % (module, line))
    # The unpacked /usr/lib is not the loader's: LD_LIBRARY_PATH stands in for it.
    loader = {"LD_LIBRARY_PATH": os.path.join(usr, "lib")}
    shutil.copy(os.path.join(HERE, "main.c"), os.path.join(a.work, "main.c"))
    run(["cc", "-O1", "main.c"] + cflags + libs + ["-o", "deb-prog"], cwd=a.work)
    expect_square(run_profiled(os.path.join(a.work, "deb-prog"), a.work, "deb-prog", loader,
                               expect_out="285 0.1.0\n"),
                  os.path.join(a.work, "main.c"), "from the .deb, pkg-config")
    # Nor does the CMake package's fnprof_instrument: the unpacked lib directory made one
    # the compiler links from by default, as /usr/lib is, the installed program has none.
    bdir = os.path.join(a.work, "deb-system")
    run(["cmake", "-S", HERE, "-B", bdir, "-DCMAKE_PREFIX_PATH=" + usr,
         "-DCMAKE_PLATFORM_IMPLICIT_LINK_DIRECTORIES=%s;/lib;/usr/lib" % os.path.join(usr, "lib")])
    run(["cmake", "--build", bdir, "--target", "consumer"])
    run(["cmake", "--install", bdir, "--prefix", os.path.join(a.work, "deb-system-app")])
    dyn = run(["readelf", "-d", os.path.join(a.work, "deb-system-app", "bin", "consumer")]).stdout
    check("RPATH" not in dyn and "RUNPATH" not in dyn,
          "fnprof_instrument from a system install added an rpath:\n" + dyn)
    report = run([fnprof, "report", "--no-meta", os.path.join(a.work, "deb-prog.prof")]).stdout
    check("main.c:5(square)" in report, "fnprof report from the .deb:\n" + report)
    exe = build_primes(a, "deb-make", ["CC=" + os.path.join(usr, "bin", "fnprof-cc")])
    expect_primes(run_profiled(exe, os.path.dirname(exe), "primes", expect_out=PRIMES_OUT),
                  ".deb, make CC=fnprof-cc")
    bdir = os.path.join(a.work, "deb-cmake")
    run(["cmake", "-S", os.path.join(SOURCE, "examples", "primes"), "-B", bdir, "-DPROFILE=ON",
         "-DCMAKE_PREFIX_PATH=" + usr])
    run(["cmake", "--build", bdir])
    expect_primes(run_profiled(os.path.join(bdir, "primes"), bdir, "primes",
                               expect_out=PRIMES_OUT), ".deb, CMake")
    deb_python(a, root)
    if shutil.which("man"):
        text = run(["man", "-l", os.path.join(usr, "share", "man", "man1", "fnprof.1")],
                   env=clean_env(MANWIDTH="80", PAGER="cat", MANPAGER="cat")).stdout
        check("fnprof report" in text, "man -l on the packaged fnprof.1")


CASES = {"install": case_install, "static": case_static, "link-position": case_link_position,
         "abs-paths": case_abs_paths, "find-package": case_find_package, "subdir": case_subdir,
         "multi": case_multi, "cxx": case_cxx, "build-tree": case_build_tree,
         "relocated": case_relocated, "man": case_man, "deb": case_deb}


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
    except Skip as e:
        print("SKIP: %s" % e)
        return 77
    print("PASS: " + a.case)
    return 0


if __name__ == "__main__":
    sys.exit(main())
# SPDX-License-Identifier: MIT
