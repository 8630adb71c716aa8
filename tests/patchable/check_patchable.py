#!/usr/bin/env python3
"""The patchable build (docs/patchable.md): programs built by each front door, their sites
read back from the ELF files as the runtime reads them.

    check_patchable.py --bin BUILD/bin --patchdir BUILD/patchable --cc gcc|clang \\
                       --work DIR [--prefix INSTALLED] CASE

CASE (tests/patchable.cmake runs each as patchable.build.<case>.<cc>):
  pie, nopie, static   fnprof-cc --patchable, separate compile and link (nopie: -masm=intel;
                       gc: -fcf-protection, endbr64 before the entry site): every function of
                       progs/sites.c + lib.c has one entry site and exit sites, the bytes at
                       each are the unpatched pattern, no __fentry__, no TEXTREL, no gmon.out,
                       output identical to a plain build
  shared               lib.c as a -fPIC shared library: its sites in it, none in the program
  gc                   -ffunction-sections -Wl,--gc-sections: unused_function and its sites
                       gone, every site left inside a kept function (GNU ld, and lld)
  cxx                  two C++ TUs emitting the same inline function and templates (COMDAT),
                       with and without gc-sections: one entry per function, folded (GNU
                       ld, and gold and lld where installed)
  lto                  -flto through the wrapper: the sites survive (gcc: flags at the link)
  wrapper              fnprof-cc --patchable's refusals (one line), the link-only command
                       without -pg or XRay, the probe's cache, -fno-instrument-functions
  gmon                 one-step compile+link: no gmon.out (gcc), no XRay runtime (clang);
                       the controls without fnprof's help show what each check catches
  filter               fnprof-as before a recording fake `as`: byte-identical text where gcc
                       put no site, the rewrite where it did, arguments, exit status, signals,
                       temporary files removed, its own failures in one line (--cc ignored)
  pkgconfig, cmake     the installed fnprof-patchable(-clang) modules, find_package +
                       fnprof_instrument(... PATCHABLE) and fnprof_instrument_directory(
                       PATCHABLE): working programs with their sites
Exit 0 pass, 1 fail, 77 skipped (the reason printed). python3 standard library only.
"""

import argparse
import difflib
import os
import re
import shutil
import signal
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PROGS = os.path.join(HERE, "progs")
sys.path.insert(0, HERE)
import elfsites  # noqa: E402

TIMEOUT = 300
C_FUNCS = ["fib", "square", "tail", "split", "report", "main", "lib_twice", "unused_function"]
CXX_FUNCS = ["_Z3tu1i", "_Z3tu2i", "main", "_Z13shared_inlinei", "_Z5twiceIiET_S0_",
             "_Z5twiceIdET_S0_", "_Z10unused_tu1i"]


class Failure(Exception):
    pass


class Skip(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failure(what)


class Ctx:
    def __init__(self, a):
        self.a = a
        self.kind = a.cc
        self.cc = "gcc" if a.cc == "gcc" else "clang"
        self.cxx = "g++" if a.cc == "gcc" else "clang++"
        self.work = os.path.abspath(a.work)
        self.wcc = os.path.join(a.bin, "fnprof-cc")
        self.wcxx = os.path.join(a.bin, "fnprof-c++")
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith(("PROF_", "FNPROF_", "PKG_CONFIG_"))
                    and k not in ("LD_PRELOAD", "CFLAGS", "CXXFLAGS", "LDFLAGS", "TMPDIR")}
        self.env.update(LC_ALL="C", FNPROF_CC=self.cc, FNPROF_CXX=self.cxx,
                        XDG_CACHE_HOME=os.path.join(self.work, "cache"))

    def run(self, cmd, ok=True, env=None, cwd=None, stdin=None):
        e = dict(self.env)
        e.update(env or {})
        print("+ " + " ".join(cmd), flush=True)
        p = subprocess.run(cmd, cwd=cwd or self.work, env=e, input=stdin, capture_output=True,
                           timeout=TIMEOUT)
        if ok and p.returncode != 0:
            raise Failure("exit %d: %s\n%s" % (p.returncode, " ".join(cmd),
                                               p.stderr.decode(errors="replace")))
        return p

    def src(self, *names):
        for n in names:
            shutil.copy(os.path.join(PROGS, n), os.path.join(self.work, n))
        return list(names)

    def path(self, name):
        return os.path.join(self.work, name)


# ---- what a patchable file must hold ---------------------------------------------------

def sites_of(ctx, path):
    elf = elfsites.Elf(path)
    return elf, (elf.gcc_sites() if ctx.kind == "gcc" else elf.xray_sites())


def check_file(ctx, path, expect=(), absent=()):
    """The sites of path: well formed, at the expected bytes, one entry per function; each
    function of expect has one entry and an exit; those of absent are not in the file. In
    progs/sites.c's functions: gcc's hot/cold split of split() has its exits in split.cold,
    tail()'s exit is before its tail-call jmp."""
    elf, sites = sites_of(ctx, path)
    what = os.path.basename(path)
    check(sites, "%s: no sites at all" % what)
    check(not elf.textrel(), "%s: DT_TEXTREL" % what)
    names = elf.symbol_names()
    check("__fentry__" not in names, "%s: a __fentry__ reference is left" % what)
    for s in ("__mcount_loc", "__return_loc"):
        check(not elf.named(s), "%s: gcc's %s table is left" % (what, s))
    if ctx.kind == "clang":
        check(not any(n.startswith("__xray_") for n in names),
              "%s: XRay's runtime is linked in" % what)
    funcs = sorted((start, size, name) for name, start, size in elf.functions() if size)
    starts = {}

    def owner(addr):
        for start, size, name in funcs:
            if start <= addr < start + size:
                return name, start
        raise Failure("%s: site %#x is in no function (a dropped function's site?)" % (what, addr))

    seen = set()
    per = {}
    for site in sites:
        check(site.addr not in seen, "%s: site %#x listed twice" % (what, site.addr))
        seen.add(site.addr)
        name, start = owner(site.addr)
        code = elf.bytes_at(site.addr, site.size)
        if ctx.kind == "gcc":
            kind, size, zero = site.raw
            check(kind in (1, 2) and size == 5 and zero == 0,
                  "%s: entry (kind %s, size %s, %s) is not gcc's format" % (what, kind, size, zero))
            check(code == elfsites.GCC_NOP5, "%s: %s site %#x in %s holds %s, not the nop5"
                  % (what, site.kind, site.addr, name, code.hex()))
        else:
            want = b"\xc3" if site.kind == elfsites.EXIT else b"\xeb\x09"
            check(code.startswith(want), "%s: %s sled %#x in %s holds %s" %
                  (what, site.kind, site.addr, name, code.hex()))
            check(site.function == start or site.function == owner(site.function)[1],
                  "%s: sled %#x names function %#x" % (what, site.addr, site.function))
        if site.kind == elfsites.ENTRY:
            at = start + (4 if elf.bytes_at(start, 4) == elfsites.ENDBR64 else 0)
            check(site.addr == at, "%s: the entry site %#x of %s is not at its start %#x"
                  % (what, site.addr, name, at))
            check(name not in starts, "%s: %s has two entry sites" % (what, name))
            starts[name] = site.addr
        base = name[:-5] if name.endswith(".cold") else name
        per.setdefault(base, []).append(site.kind)
        if name == "split.cold":
            per.setdefault(name, []).append(site.kind)
        if base == "tail" and site.kind != elfsites.ENTRY:
            after = elf.bytes_at(site.addr + site.size, 1)
            check(ctx.kind == "clang" or after in (b"\xe9", b"\xeb", b"\xff"),
                  "%s: tail's exit site is before %s, not a jmp" % (what, after.hex()))
            check(ctx.kind == "gcc" or site.kind == elfsites.TAIL, "%s: tail's exit sled is "
                  "not a tail sled" % what)
    for f in expect:
        kinds = per.get(f, [])
        check(kinds.count(elfsites.ENTRY) == 1, "%s: %s has %d entry sites (sites: %s)"
              % (what, f, kinds.count(elfsites.ENTRY), sorted(per)))
        check(any(k in (elfsites.EXIT, elfsites.TAIL) for k in kinds),
              "%s: %s has no exit site" % (what, f))
    fnames = {name for _, _, name in funcs}
    if ctx.kind == "gcc" and "split" in expect:
        check("split.cold" in fnames, "%s: gcc made no split.cold (the test's premise)" % what)
        check(elfsites.EXIT in per.get("split.cold", []), "%s: no exit site in split.cold" % what)
    for f in absent:
        check(f not in fnames and f not in per, "%s: %s is still there" % (what, f))
    print("%s: %d sites, %d functions with an entry" % (what, len(sites), len(starts)))
    return per


def same_output(ctx, plain, patched, args=()):
    """Both programs: same stdout, stderr and exit status, with fnprof off; no gmon.out."""
    runs = []
    for exe in (plain, patched):
        d = ctx.path("run-" + os.path.basename(exe))
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        p = ctx.run([exe] + list(args), ok=False, cwd=d)
        check(not os.path.exists(os.path.join(d, "gmon.out")), "%s wrote gmon.out" % exe)
        runs.append((p.returncode, p.stdout, p.stderr))
    check(runs[0] == runs[1], "%s and %s differ: %r vs %r" % (plain, patched, runs[0], runs[1]))
    check(runs[0][0] == 0, "%s failed: %r" % (plain, runs[0]))


# ---- cases --------------------------------------------------------------------------------

def build_c(ctx, name, compile_flags=(), link_flags=(), lib_shared=False):
    """progs/sites.c + lib.c, patchable (through fnprof-cc) and plain; their paths."""
    ctx.src("sites.c", "lib.c")
    cf, lf = list(compile_flags), list(link_flags)
    out = {}
    for variant, cc in (("plain", [ctx.cc]), ("patch", [ctx.wcc, "--patchable"])):
        exe = ctx.path("%s-%s" % (name, variant))
        objs = []
        if lib_shared:
            lib = ctx.path("lib%s%s.so" % (name, variant))
            ctx.run(cc + ["-O2", "-fPIC"] + cf + ["-c", "lib.c", "-o", lib + ".o"])
            ctx.run(cc + ["-shared", lib + ".o", "-o", lib])
            libs = ["-L" + ctx.work, "-l%s%s" % (name, variant), "-Wl,-rpath," + ctx.work]
            out[variant + "-lib"] = lib
        else:
            ctx.run(cc + ["-O2"] + cf + ["-c", "lib.c", "-o", exe + "-lib.o"])
            objs.append(exe + "-lib.o")
            libs = []
        ctx.run(cc + ["-O2"] + cf + ["-c", "sites.c", "-o", exe + ".o"])
        ctx.run(cc + lf + [exe + ".o"] + objs + libs + ["-o", exe])
        out[variant] = exe
    same_output(ctx, out["plain"], out["patch"])
    return out


def case_pie(ctx):
    out = build_c(ctx, "pie")
    check(elfsites.Elf(out["patch"]).type == 3, "not a PIE (ET_DYN)")
    check_file(ctx, out["patch"], expect=C_FUNCS)


def case_nopie(ctx):
    # Intel syntax too: gcc prints its entry call in AT&T syntax whatever -masm says (the
    # assembler rejects it); the rewrite's nop is right in both.
    out = build_c(ctx, "nopie", ["-fno-pie", "-masm=intel"], ["-no-pie"])
    check(elfsites.Elf(out["patch"]).type == 2, "not a position-dependent executable")
    check_file(ctx, out["patch"], expect=C_FUNCS)


def case_static(ctx):
    try:
        out = build_c(ctx, "static", (), ["-static"])
    except Failure as e:
        if "cannot find -l" in str(e):
            raise Skip("static libraries missing: " + str(e).splitlines()[-1])
        raise
    check(not any(s.type == elfsites.SHT_DYNAMIC for s in elfsites.Elf(out["patch"]).sections),
          "not a static executable")
    check_file(ctx, out["patch"], expect=C_FUNCS)


def case_shared(ctx):
    out = build_c(ctx, "shared", lib_shared=True)
    check_file(ctx, out["patch-lib"], expect=["lib_twice"],
               absent=[f for f in C_FUNCS if f != "lib_twice"])
    check_file(ctx, out["patch"], expect=[f for f in C_FUNCS if f != "lib_twice"],
               absent=["lib_twice"])


def case_gc(ctx):
    for ld in linkers():
        if ld == "gold":
            continue  # its --gc-sections drops every site (docs/patchable.md)
        # With endbr64 at function starts: the entry site follows it.
        out = build_c(ctx, "gc-" + (ld or "ld"), ["-ffunction-sections", "-fcf-protection"],
                      ["-Wl,--gc-sections"] + (["-fuse-ld=" + ld] if ld else []))
        check_file(ctx, out["patch"], expect=[f for f in C_FUNCS if f != "unused_function"],
                   absent=["unused_function"])
        elf = elfsites.Elf(out["patch"])
        fib = [start for name, start, _ in elf.functions() if name == "fib"]
        check(fib and elf.bytes_at(fib[0], 4) == elfsites.ENDBR64,
              "fib does not start with endbr64 (the test's premise)")


def linkers():
    """The linkers to link with: the default (GNU ld), and gold and lld where installed."""
    return [None] + [ld for ld in ("gold", "lld") if shutil.which("ld." + ld)]


def case_cxx(ctx):
    ctx.src("comdat.hh", "comdat1.cc", "comdat2.cc")
    for gc in (False, True):
        cf = ["-ffunction-sections"] if gc else []
        objs = {}
        for variant, cc in (("plain", [ctx.cxx]), ("patch", [ctx.wcxx, "--patchable"])):
            objs[variant] = []
            for tu in ("comdat1", "comdat2"):
                obj = ctx.path("cxx%s-%s-%s.o" % ("-gc" if gc else "", variant, tu))
                ctx.run(cc + ["-O2"] + cf + ["-c", tu + ".cc", "-o", obj])
                objs[variant].append(obj)
        # Each object has its own copy of the inline function and the templates.
        for obj in objs["patch"]:
            check(sites_of(ctx, obj)[1], "%s: no sites in the object" % obj)
        expect = [f for f in CXX_FUNCS if not gc or f != "_Z10unused_tu1i"]
        absent = [] if expect == CXX_FUNCS else ["_Z10unused_tu1i"]
        # Without the COMDAT group on their sites, gold and lld refuse the link (a reference
        # into the discarded copy); gold's --gc-sections drops every site (docs/patchable.md).
        for ld in linkers():
            if gc and ld == "gold":
                continue
            lf = (["-Wl,--gc-sections"] if gc else []) + (["-fuse-ld=" + ld] if ld else [])
            out = {}
            for variant, cc in (("plain", [ctx.cxx]), ("patch", [ctx.wcxx, "--patchable"])):
                exe = ctx.path("cxx%s-%s-%s" % ("-gc" if gc else "", ld or "ld", variant))
                ctx.run(cc + lf + objs[variant] + ["-o", exe])
                out[variant] = exe
            same_output(ctx, out["plain"], out["patch"])
            check_file(ctx, out["patch"], expect=expect, absent=absent)


def case_lto(ctx):
    ctx.src("sites.c", "lib.c")
    link = []
    if ctx.kind == "clang":
        if not shutil.which("ld.lld"):
            raise Skip("clang's LTO needs ld.lld here (apt-get install lld)")
        link = ["-fuse-ld=lld"]
    for src in ("sites", "lib"):
        ctx.run([ctx.wcc, "--patchable", "-O2", "-flto", "-c", src + ".c", "-o", src + ".o"])
    ctx.run([ctx.cc, "-O2", "-flto", "sites.c", "lib.c", "-o", "lto-plain"] + link)
    ctx.run([ctx.wcc, "--patchable", "-O2", "-flto", "sites.o", "lib.o", "-o", "lto-patch"] +
            link)
    same_output(ctx, ctx.path("lto-plain"), ctx.path("lto-patch"))
    # LTO may drop the uncalled function (the program exports nothing).
    check_file(ctx, ctx.path("lto-patch"), expect=[f for f in C_FUNCS if f != "unused_function"])
    if ctx.kind == "gcc":
        # The control: the same objects linked by gcc alone lose every site (-pg is not
        # carried by gcc's LTO objects): what the wrapper's link flags are for.
        ctx.run([ctx.cc, "-O2", "-flto", "sites.o", "lib.o", "-o", "lto-bare"])
        _, sites = sites_of(ctx, ctx.path("lto-bare"))
        check(not sites, "control: gcc's LTO link alone kept %d sites" % len(sites))


def case_gmon(ctx):
    ctx.src("sites.c", "lib.c")
    ctx.run([ctx.cc, "-O2", "sites.c", "lib.c", "-o", "plain"])
    ctx.run([ctx.wcc, "--patchable", "-O2", "sites.c", "lib.c", "-o", "onestep"])
    same_output(ctx, ctx.path("plain"), ctx.path("onestep"))
    check_file(ctx, ctx.path("onestep"), expect=C_FUNCS)
    if ctx.kind == "gcc":
        # The flags pkg-config gives, on one command: the -B directory's start file.
        flags = ["-pg", "-mfentry", "-mrecord-mcount", "-minstrument-return=nop5",
                 "-mrecord-return", "-B" + ctx.a.patchdir + "/"]
        ctx.run([ctx.cc, "-O2"] + flags + ["sites.c", "lib.c", "-o", "raw"])
        same_output(ctx, ctx.path("plain"), ctx.path("raw"))
        check_file(ctx, ctx.path("raw"), expect=C_FUNCS)
        # The control: gcc -pg alone links gprof's start file, which writes gmon.out.
        ctx.run([ctx.cc, "-O2", "-pg", "sites.c", "lib.c", "-o", "gprof"])
        d = ctx.path("run-gprof")
        os.makedirs(d, exist_ok=True)
        ctx.run([ctx.path("gprof")], cwd=d)
        check(os.path.exists(os.path.join(d, "gmon.out")),
              "control: gcc -pg wrote no gmon.out, the check above proves nothing")
    else:
        # The control: -fxray-instrument on a one-step command links XRay's runtime.
        p = ctx.run([ctx.cc, "-O2", "-fxray-instrument", "sites.c", "lib.c", "-o", "xray"],
                    ok=False)
        if p.returncode == 0:
            names = elfsites.Elf(ctx.path("xray")).symbol_names()
            check(any(n.startswith("__xray_") for n in names),
                  "control: clang -fxray-instrument linked no XRay runtime")


# The lines of gcc's sites, and of fnprof-as's rewrite of them.
GCC_SITE = re.compile(rb"^(1:(\s*call\s+\*?__fentry__(@GOTPCREL\(%rip\))?)?"
                      rb"|\s*\.byte\s+0x0f, 0x1f, 0x44, 0x00, 0x00"
                      rb"|\s*\.section __(mcount|return)_loc, \"a\",@progbits"
                      rb"|\s*\.quad 1b|\s*\.previous)$")
OUR_SITE = re.compile(rb"^(1:|1:\t\.Lfnprof_site\d+:\t\.byte\t0x0f, 0x1f, 0x44, 0x00, 0x00"
                      rb"|\t\.pushsection\tfnprof_sites,\"aoG?\",@progbits,\.Lfnprof_site\d+"
                      rb"(,[^,]+(,comdat)?)?"
                      rb"|\t\.balign\t4; \.long\t\.Lfnprof_site\d+ - \.; \.byte\t[12], 5; "
                      rb"\.short\t0|\t\.popsection)$")

def case_wrapper(ctx):
    """fnprof-cc --patchable's own rules: what it adds where, what it refuses."""
    ctx.src("sites.c", "lib.c")
    verbose = {"FNPROF_CC_VERBOSE": "1"}

    def refused(args, env=None, code=1):
        p = ctx.run([ctx.wcc] + args, ok=False, env=env)
        lines = p.stderr.decode().splitlines()
        check(p.returncode == code and len(lines) == 1
              and lines[0].startswith("fnprof: fnprof-cc: "),
              "%s: exit %d, stderr %r" % (" ".join(args), p.returncode, lines))

    refused(["--patchable", "-finstrument-functions", "-c", "sites.c"])
    refused(["--patchable", "-m32", "-c", "sites.c"])
    refused(["--patchable", "--target=aarch64-linux-gnu", "-c", "sites.c"])
    refused(["--patchable", "-c", "sites.c"], env={"FNPROF_CC_KIND": "other"})
    refused(["--patchable", "--filter", "x.filter", "-c", "sites.c"], code=2)
    # The probe's cache names the target and clang's version (docs/wrappers.md).
    ctx.run([ctx.wcc, "--patchable", "-O2", "-c", "sites.c", "-o", "sites.o"])
    ctx.run([ctx.wcc, "--patchable", "-O2", "-c", "lib.c", "-o", "lib.o"])
    cache = os.path.join(ctx.env["XDG_CACHE_HOME"], "fnprof", "cc-kind")
    with open(os.path.join(cache, os.listdir(cache)[0])) as f:
        line = f.read().splitlines()[1].split()
    check(line[:2] == [ctx.kind, "x86_64"] and (line[2] != "0") == (ctx.kind == "clang"),
          "the cache says %r" % line)
    # A link-only command: the runtime, nothing of -pg or XRay; and no warning that the
    # objects call no hooks (they have sites).
    p = ctx.run([ctx.wcc, "--patchable", "sites.o", "lib.o", "-o", "linked"], env=verbose)
    err = p.stderr.decode()
    check(err.count("\n") == 1 and "-lfnprof" in err, "link: %r" % err)
    for flag in ("-pg", "-mfentry", "-fxray", "-B"):
        check(" %s" % flag not in err, "the link got %s: %r" % (flag, err))
    p = ctx.run([ctx.wcc, "sites.o", "lib.o", "-o", "linked2"])
    check(p.stderr == b"", "a link of patchable objects warned: %r" % p.stderr)
    # -fno-instrument-functions (gcc; clang 14 rejects the option) leaves the source alone.
    if ctx.kind == "gcc":
        ctx.run([ctx.wcc, "--patchable", "-fno-instrument-functions", "-c", "lib.c", "-o",
                 "off.o"])
        check(not sites_of(ctx, ctx.path("off.o"))[1], "-fno-instrument-functions: sites")


FAKE_AS = r"""#!/bin/sh
# Records what the assembler got: arguments, the input (last argument), then exits as told.
printf '%s\n' "$@" > "$FAKE_AS_DIR/args"
for last; do :; done
printf '%s' "$last" > "$FAKE_AS_DIR/input-name"
cat "$last" > "$FAKE_AS_DIR/input" 2>/dev/null
if [ -n "$FAKE_AS_KILL" ]; then kill -"$FAKE_AS_KILL" $$; fi
exit "${FAKE_AS_STATUS:-0}"
"""


def case_filter(ctx):
    """fnprof-as before a fake as that records what it gets."""
    fake = ctx.path("fake")
    os.makedirs(fake, exist_ok=True)
    with open(os.path.join(fake, "as"), "w") as f:
        f.write(FAKE_AS)
    os.chmod(os.path.join(fake, "as"), 0o755)
    filt = os.path.join(ctx.a.patchdir, "as")
    tmp = ctx.path("tmp")
    os.makedirs(tmp, exist_ok=True)
    env = {"PATH": ctx.a.patchdir + ":" + fake + ":" + os.environ["PATH"], "FAKE_AS_DIR": fake,
           "TMPDIR": tmp}

    def assemble(args, stdin=None, extra=None, ok=True):
        e = dict(env)
        e.update(extra or {})
        for f in ("args", "input", "input-name"):
            if os.path.exists(os.path.join(fake, f)):
                os.unlink(os.path.join(fake, f))
        p = ctx.run([filt] + args, ok=ok, env=e, stdin=stdin)
        got = {}
        for f in ("args", "input", "input-name"):
            if os.path.exists(os.path.join(fake, f)):
                with open(os.path.join(fake, f), "rb") as fh:
                    got[f] = fh.read()
        check(not os.listdir(tmp), "temporary files left: %s" % os.listdir(tmp))
        return p, got

    def text(name):
        with open(ctx.path(name), "rb") as fh:
            return fh.read()

    # Texts with no site of gcc's: a hand-written file (gcc's own shapes, incomplete), clang's
    # and gcc's output without -pg, with debug information.
    ctx.src("handwritten.s", "sites.c", "lib.c", "comdat.hh", "comdat1.cc")
    ctx.run(["gcc", "-O2", "-g", "-S", "sites.c", "-o", "gcc-g.s"])
    clean = ["handwritten.s", "gcc-g.s"]
    if shutil.which("clang"):
        ctx.run(["clang", "-O2", "-g", "-S", "sites.c", "-o", "clang-g.s"])
        ctx.run(["clang", "-O2", "-fxray-instrument", "-fxray-instruction-threshold=1", "-S",
                 "sites.c", "-o", "clang-xray.s"])
        clean += ["clang-g.s", "clang-xray.s"]
    for name in clean:
        args = ["--64", "-o", ctx.path("x.o"), ctx.path(name)]
        p, got = assemble(args)
        check(got["args"].decode().split("\n")[:-1] == args,
              "%s: the assembler got %r, not %r" % (name, got["args"], args))
        check(got["input"] == text(name), "%s: the text changed" % name)
        # From standard input (gcc -pipe): a temporary file, the same bytes.
        p, got = assemble(["--64", "-o", ctx.path("x.o")], stdin=text(name))
        check(got["input"] == text(name), "%s from stdin: the text changed" % name)
        check(got["input-name"].decode().startswith(tmp + "/"), "stdin: not a temporary file")

    # gcc's profiling output: every site rewritten, nothing else.
    flags = ["-pg", "-mfentry", "-mrecord-mcount", "-minstrument-return=nop5", "-mrecord-return"]
    for name, cmd in (("gcc-pg.s", ["gcc", "-O2", "-g"] + flags + ["-S", "sites.c"]),
                      ("gcc-pg-nopic.s", ["gcc", "-O2", "-fno-pie"] + flags + ["-S", "sites.c"]),
                      ("gcc-pg-cf.s", ["gcc", "-O2", "-fcf-protection", "-ffunction-sections"]
                       + flags + ["-S", "sites.c"]),
                      ("gxx-pg.s", ["g++", "-O2", "-ffunction-sections"] + flags +
                       ["-S", "comdat1.cc"])):
        ctx.run(cmd + ["-o", name])
        orig = text(name)
        nsites = orig.count(b"__mcount_loc") + orig.count(b"__return_loc")
        check(nsites > 0, "%s: gcc wrote no site" % name)
        p, got = assemble(["--64", "-o", ctx.path("x.o"), ctx.path(name)])
        new = got["input"]
        check(new != orig, "%s: not rewritten" % name)
        for word in (b"__fentry__", b"__mcount_loc", b"__return_loc"):
            check(word not in new, "%s: %s left" % (name, word.decode()))
        check(new.count(b"\n") == orig.count(b"\n"), "%s: line count changed" % name)
        check(new.count(b".long\t.Lfnprof_site") == nsites,
              "%s: %d entries for %d sites" % (name, new.count(b".long\t.Lfnprof_site"), nsites))
        # The lines outside the sites are the same, in order: every difference is gcc's
        # site text on one side and fnprof's on the other.
        sm = difflib.SequenceMatcher(None, orig.split(b"\n"), new.split(b"\n"), autojunk=False)
        for tag, i1, i2, j1, j2 in sm.get_opcodes():
            if tag == "equal":
                continue
            o, n = orig.split(b"\n")[i1:i2], new.split(b"\n")[j1:j2]
            check(all(GCC_SITE.match(ln) for ln in o) and all(OUR_SITE.match(ln) for ln in n),
                  "%s: lines other than the sites changed: %r -> %r" % (name, o, n))
        # The real assembler takes it: fnprof_sites linked to its text, no gcc tables.
        real = dict(env, PATH=os.environ["PATH"])
        ctx.run([filt, "--64", "-o", ctx.path(name + ".o"), ctx.path(name)], env=real)
        obj = elfsites.Elf(ctx.path(name + ".o"))
        secs = obj.named("fnprof_sites")
        check(secs and all(s.flags & 0x80 for s in secs),
              "%s: fnprof_sites missing or not SHF_LINK_ORDER" % name)
        check(sum(s.size for s in secs) == 8 * nsites, "%s: %d bytes of entries for %d sites"
              % (name, sum(s.size for s in secs), nsites))
        if b"comdat" in orig:
            check(any(s.flags & 0x200 for s in secs), "%s: no fnprof_sites in a group" % name)
        # One fnprof_sites per text section, not per site.
        check(len(secs) <= orig.count(b".section\t.text") + 2,
              "%s: %d fnprof_sites sections" % (name, len(secs)))

    # Unchanged input files get the real assembler's own object, byte for byte.
    ctx.run(["as", "--64", "-o", ctx.path("direct.o"), ctx.path("handwritten.s")])
    ctx.run([filt, "--64", "-o", ctx.path("filtered.o"), ctx.path("handwritten.s")],
            env=dict(env, PATH=os.environ["PATH"]))
    check(text("direct.o") == text("filtered.o"), "handwritten.s: objects differ")

    # Exit status and signals are the assembler's.
    p, _ = assemble(["--64", ctx.path("gcc-pg.s")], extra={"FAKE_AS_STATUS": "3"}, ok=False)
    check(p.returncode == 3, "the assembler's exit 3 came back as %d" % p.returncode)
    p, _ = assemble(["--64", ctx.path("gcc-pg.s")], extra={"FAKE_AS_KILL": "TERM"}, ok=False)
    check(p.returncode == -signal.SIGTERM, "killed by SIGTERM came back as %d" % p.returncode)
    # Its own failure: one line, non-zero (a temporary directory that does not exist).
    p = ctx.run([filt, "--64", "-o", ctx.path("x.o")], ok=False, stdin=b"nop\n",
                env=dict(env, TMPDIR="/nonexistent/fnprof"))
    lines = p.stderr.decode().splitlines()
    check(p.returncode != 0 and len(lines) == 1 and lines[0].startswith("fnprof-as: "),
          "own failure: exit %d, stderr %r" % (p.returncode, lines))
    # A copy of the filter earlier in PATH: the two skip each other, the fake one runs.
    copy = ctx.path("copy")
    os.makedirs(copy, exist_ok=True)
    shutil.copy(filt, os.path.join(copy, "as"))
    p, got = assemble(["--64", "-o", ctx.path("x.o"), ctx.path("gcc-pg.s")],
                      extra={"PATH": copy + ":" + env["PATH"]})
    check(b"__fentry__" not in got["input"], "through two filters: not rewritten")


def pkg_config(ctx, *args):
    env = {"PKG_CONFIG_PATH": os.path.join(ctx.a.prefix, "lib", "pkgconfig")}
    return ctx.run(["pkg-config"] + list(args), env=env).stdout.decode().split()


def case_pkgconfig(ctx):
    check(ctx.a.prefix, "--prefix is needed")
    module = "fnprof-patchable" if ctx.kind == "gcc" else "fnprof-patchable-clang"
    cflags, libs = pkg_config(ctx, "--cflags", module), pkg_config(ctx, "--libs", module)
    ctx.src("sites.c", "lib.c")
    ctx.run([ctx.cc, "-O2", "sites.c", "lib.c", "-o", "plain"])
    # One step, and as make's rules do: compile with CFLAGS, link with CFLAGS and LDFLAGS.
    ctx.run([ctx.cc, "-O2"] + cflags + ["sites.c", "lib.c"] + libs + ["-o", "onestep"])
    for src in ("sites", "lib"):
        ctx.run([ctx.cc, "-O2"] + cflags + ["-c", src + ".c", "-o", src + ".o"])
    ctx.run([ctx.cc, "-O2"] + cflags + ["sites.o", "lib.o"] + libs + ["-o", "twostep"])
    for exe in ("onestep", "twostep"):
        same_output(ctx, ctx.path("plain"), ctx.path(exe))
        check_file(ctx, ctx.path(exe), expect=C_FUNCS)
        check("libfnprof" in ctx.run(["readelf", "-dW", ctx.path(exe)]).stdout.decode(),
              "%s does not link libfnprof" % exe)


def case_cmake(ctx):
    check(ctx.a.prefix, "--prefix is needed")
    b = ctx.path("consumer")
    shutil.rmtree(b, ignore_errors=True)
    ctx.run(["cmake", "-S", os.path.join(HERE, "consumer"), "-B", b,
             "-DCMAKE_PREFIX_PATH=" + ctx.a.prefix, "-DCMAKE_C_COMPILER=" + ctx.cc,
             "-DCMAKE_CXX_COMPILER=" + ctx.cxx])
    ctx.run(["cmake", "--build", b])
    ctx.src("sites.c", "lib.c", "comdat.hh", "comdat1.cc", "comdat2.cc")
    ctx.run([ctx.cc, "-O2", "sites.c", "lib.c", "-o", "plain"])
    ctx.run([ctx.cxx, "-O2", "comdat1.cc", "comdat2.cc", "-o", "plain-cxx"])
    same_output(ctx, ctx.path("plain"), os.path.join(b, "sites"))
    same_output(ctx, ctx.path("plain-cxx"), os.path.join(b, "comdat"))
    check_file(ctx, os.path.join(b, "sites"), expect=C_FUNCS)
    same_output(ctx, ctx.path("plain"), os.path.join(b, "dir", "sites_dir"))
    check_file(ctx, os.path.join(b, "dir", "sites_dir"), expect=C_FUNCS)
    check_file(ctx, os.path.join(b, "comdat"), expect=CXX_FUNCS[:-1], absent=CXX_FUNCS[-1:])


CASES = {n[5:]: f for n, f in globals().items() if n.startswith("case_")}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--patchdir", required=True)
    ap.add_argument("--cc", choices=("gcc", "clang"), default="gcc")
    ap.add_argument("--work", required=True)
    ap.add_argument("--prefix")
    ap.add_argument("case", choices=sorted(CASES))
    a = ap.parse_args()
    a.bin, a.patchdir = os.path.abspath(a.bin), os.path.abspath(a.patchdir)
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    try:
        if os.uname().machine != "x86_64":
            raise Skip("the patchable build is x86_64 only")
        if not shutil.which("clang" if a.cc == "clang" else "gcc"):
            raise Skip(a.cc + " is not installed")
        CASES[a.case.replace("-", "_")](Ctx(a))
    except Skip as e:
        print("SKIP: %s" % e)
        return 77
    except (Failure, elfsites.ElfError) as e:
        print("FAIL: %s" % e)
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
# SPDX-License-Identifier: MIT
