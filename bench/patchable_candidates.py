#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Issue 25's "choose the mechanism by measuring" table: what each candidate way of
leaving patchable sites in a program costs while nothing records (no site patched, no
PROF_OUTPUT), against the same program built without them.

    bench/run --candidates [--runs N] [--quick]        (set-up and fnprof built first)
    python3 bench/patchable_candidates.py --lib build-bench/lib [--runs N] [--quick]
        [--only fib,lua] [--no-callgrind]

Workloads: fib, lua, sqlite (as bench/harness.py builds them) and cxx (workloads/cxx.cc),
each built -O2 -g by gcc and by clang, as:
  base          nothing added (PIE, the compilers' default)
  base-nopie    gcc: -fno-pie / -no-pie, the reference of fentry-nop
  instrument    fnprof-cc / fnprof-c++ (the -finstrument-functions build: gcc's
                -finstrument-functions with the system headers excluded, clang's
                -finstrument-functions-after-inlining), libfnprof.so linked, no PROF_OUTPUT
  fentry-nop    gcc -pg -mfentry -mnop-mcount -mrecord-mcount -minstrument-return=nop5
                -mrecord-return, non-PIC (-mnop-mcount is refused with -fPIC): the nop sites
                fnprof's assembler filter leaves in PIC code too; linked without -pg
  pfe5          -fpatchable-function-entry=5: an entry nop only, returns not caught
  xray          clang -fxray-instrument -fxray-instruction-threshold=1, linked without
                XRay's runtime (-fnoxray-link-deps): the sleds as they are, never patched
  patchable     fnprof-cc / fnprof-c++ --patchable, no PROF_OUTPUT (when the wrapper has it)
Figures: .text bytes and the site tables' bytes (size -A), wall time (median of interleaved
runs through bench/tools/launch.c, order rotated every round, first round a warm-up), and
instructions under callgrind while main runs (--toggle-collect=main) at a smaller size:
the machine is shared, and instruction counts do not move with it.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness as H  # noqa: E402  (bench/harness.py: sources, jobs, the launcher)

CAND = H.CACHE / "cand"
SITE_SECTIONS = ("__mcount_loc", "__return_loc", "__patchable_function_entries",
                 "xray_instr_map", "xray_fn_idx", "fnprof_sites")
FENTRY = ["-pg", "-mfentry", "-mnop-mcount", "-mrecord-mcount", "-minstrument-return=nop5",
          "-mrecord-return"]
XRAY = ["-fxray-instrument", "-fxray-instruction-threshold=1"]


class Variant:
    def __init__(self, name, compiler, cflags=(), ldflags=(), wrapper=None, ref="base"):
        self.name, self.compiler, self.ref = name, compiler, ref
        self.cflags, self.ldflags = list(cflags), list(ldflags)
        self.wrapper = wrapper  # extra wrapper arguments (list), or None: the bare compiler


def variants(has_patchable):
    vs = [
        Variant("base", "gcc"),
        Variant("base-nopie", "gcc", ["-fno-pie"], ["-no-pie"]),
        Variant("instrument", "gcc", wrapper=[]),
        Variant("fentry-nop", "gcc", FENTRY + ["-fno-pie"], ["-no-pie"], ref="base-nopie"),
        Variant("pfe5", "gcc", ["-fpatchable-function-entry=5"]),
        Variant("base", "clang"),
        Variant("instrument", "clang", wrapper=[]),
        Variant("xray", "clang", XRAY, ["-fxray-instrument", "-fnoxray-link-deps"]),
        Variant("pfe5", "clang", ["-fpatchable-function-entry=5"]),
    ]
    if has_patchable:
        vs.insert(5, Variant("patchable", "gcc", wrapper=["--patchable"]))
        vs.append(Variant("patchable", "clang", wrapper=["--patchable"]))
    return vs


# name: (build key of bench/harness.py or "cxx", C++?, full args, small args (callgrind),
#        quick args, no ASLR)
WORKLOADS = {
    "fib": ("fib", False, ["36"], ["27"], ["20"], False),
    "lua": ("lua", False, ["@bench.lua", "50"], ["@bench.lua", "2"], ["@bench.lua", "1"], True),
    "sqlite": ("sqlite", False, ["--memdb", "--size", "35"], ["--memdb", "--size", "2"],
               ["--memdb", "--size", "1"], False),
    "cxx": ("cxx", True, ["500"], ["20"], ["5"], False),
}


def sources(key):
    if key == "cxx":
        return [H.WL / "cxx.cc"], []
    return H.sources(key)


def compiler_cmd(v, cxx, bin_dir):
    real = {"gcc": "g++" if cxx else "gcc", "clang": "clang++" if cxx else "clang"}[v.compiler]
    if v.wrapper is None:
        return [real], []
    var = "FNPROF_CXX" if cxx else "FNPROF_CC"
    tool = bin_dir / ("fnprof-c++" if cxx else "fnprof-cc")
    return ["env", f"{var}={real}", f"XDG_CACHE_HOME={CAND / 'xdg'}", tool, *v.wrapper], [tool]


def build(names, vs, bin_dir):
    """{(workload, compiler, variant): program}"""
    compiles, links, progs = [], [], {}
    for name in names:
        key, cxx, *_ = WORKLOADS[name]
        files, extra = sources(key)
        for v in vs:
            d = CAND / v.compiler / v.name / name
            cc, tools = compiler_cmd(v, cxx, bin_dir)
            objs = []
            for f in files:
                obj = d / (Path(f).stem + ".o")
                compiles.append(H.Job([*cc, *H.CFLAGS, *v.cflags, *extra, "-c", f, "-o", obj],
                                      obj, [f, *tools]))
                objs.append(obj)
            prog = d / name
            links.append(H.Job([*cc, *H.CFLAGS, *v.ldflags, "-o", prog, *objs, *H.LIBS], prog,
                               [*objs, *tools]))
            progs[(name, v.compiler, v.name)] = prog
    compiles.append(H.Job(["gcc", "-O2", "-o", H.LAUNCH, H.BENCH / "tools" / "launch.c"],
                          H.LAUNCH, [H.BENCH / "tools" / "launch.c"]))
    t = time.monotonic()
    H.run_jobs(compiles)
    H.run_jobs(links)
    H.log(f"candidates built ({time.monotonic() - t:.0f} s)")
    return progs


def sections(prog):
    """(.text bytes, site tables' bytes) from size -A."""
    text = tables = 0
    for line in subprocess.run(["size", "-A", str(prog)], stdout=subprocess.PIPE, text=True,
                               check=True).stdout.splitlines():
        f = line.split()
        if len(f) >= 2 and f[1].isdigit():
            if f[0] == ".text":
                text = int(f[1])
            elif f[0] in SITE_SECTIONS:
                tables += int(f[1])
    return text, tables


def argv(prog, args):
    return [prog, *[str(H.WL / a[1:]) if a.startswith("@") else a for a in args]]


def timed(progs, names, rounds, is_quick):
    """{(workload, compiler, variant): [wall ns]}: every program of a workload once a round,
    order rotated every round; the first round is a warm-up unless there is only one."""
    res = {k: [] for k in progs}
    t0 = time.monotonic()
    for r in range(rounds):
        for name in names:
            keys = [k for k in progs if k[0] == name]
            order = keys[r % len(keys):] + keys[:r % len(keys)]
            for k in order:
                _, _, full, _, quick, no_aslr = WORKLOADS[name]
                wall, _, _, rc = H.spawn(argv(progs[k], quick if is_quick else full), {},
                                         err=CAND / "run.err", fixed_layout=no_aslr)
                if rc:
                    sys.exit(f"bench: {' '.join(k)} exited {rc}: "
                             f"{(CAND / 'run.err').read_text()[-1000:]}")
                if r > 0 or rounds == 1:
                    res[k].append(wall)
        H.log(f"candidates round {r + 1}/{rounds} ({time.monotonic() - t0:.0f} s)")
    return res


def instructions(prog, args, no_aslr):
    # valgrind 3.19 cannot read some of clang 14's DWARF 5 ("unhandled dwarf2 abbrev form"):
    # it runs a copy without the debug sections, the same code (main is found by its symbol)
    bare = prog.with_name(prog.name + ".nodebug")
    H.sh(["objcopy", "--strip-debug", prog, bare])
    out = CAND / "cg.out"
    out.unlink(missing_ok=True)
    _, _, _, rc = H.spawn(["valgrind", "--tool=callgrind", "--toggle-collect=main",
                           f"--callgrind-out-file={out}", *argv(bare, args)], {},
                          err=CAND / "cg.err", fixed_layout=no_aslr)
    if rc:
        sys.exit(f"bench: callgrind {prog} exited {rc}")
    m = re.search(r"^(?:summary|totals): (\d+)", out.read_text(), re.M)
    return int(m.group(1))


def has_patchable(bin_dir):
    """Whether this fnprof's wrapper knows --patchable (the design's assembler filter)."""
    r = subprocess.run([str(bin_dir / "fnprof-cc"), "--fnprof-help"], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    return "--patchable" in r.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", required=True, help="directory holding libfnprof.so")
    ap.add_argument("--runs", type=int, help="timed runs after the warm-up (default 7)")
    ap.add_argument("--quick", action="store_true", help="smoke run: tiny sizes, one run")
    ap.add_argument("--only", help="comma-separated workloads (fib,lua,sqlite,cxx)")
    ap.add_argument("--no-callgrind", action="store_true")
    args = ap.parse_args()
    lib_dir = Path(args.lib).resolve()
    bin_dir = lib_dir.parent / "bin"
    names = args.only.split(",") if args.only else list(WORKLOADS)
    if set(names) - set(WORKLOADS):
        sys.exit(f"bench: unknown workload(s): {', '.join(sorted(set(names) - set(WORKLOADS)))}")
    H.OUT.mkdir(parents=True, exist_ok=True)
    CAND.mkdir(parents=True, exist_ok=True)
    vs = variants(has_patchable(bin_dir))
    progs = build(names, vs, bin_dir)
    runs = args.runs or (1 if args.quick else 7)
    rounds = runs if args.quick else runs + 1
    t0 = time.monotonic()
    walls = timed(progs, names, rounds, args.quick)
    irs = {}
    if not args.no_callgrind:
        for k, prog in progs.items():
            _, _, _, small, quick, no_aslr = WORKLOADS[k[0]]
            irs[k] = instructions(prog, quick if args.quick else small, no_aslr)
        H.log(f"callgrind done ({time.monotonic() - t0:.0f} s)")

    print(f"fnprof bench/patchable_candidates.py{' --quick' if args.quick else ''}: "
          f"{time.strftime('%Y-%m-%d %H:%M %Z')}")
    print(f"machine: {H.machine()}")
    print(f"fnprof: {H.fnprof_rev(lib_dir)}; gcc {cc_version('gcc')}, clang {cc_version('clang')}")
    print(f"wall: median of {runs} interleaved runs after "
          f"{'no' if rounds == runs else 'one'} warm-up round; Ir: callgrind "
          "--toggle-collect=main at the small size; nothing records (no PROF_OUTPUT)")
    for name in names:
        _, _, full, small, quick, _ = WORKLOADS[name]
        print()
        print(f"{name} {' '.join(quick if args.quick else full)} "
              f"(Ir: {' '.join(quick if args.quick else small)})")
        rows = []
        for v in vs:
            k = (name, v.compiler, v.name)
            ref = (name, v.compiler, v.ref)
            text, tables = sections(progs[k])
            rtext = sections(progs[ref])[0]
            w = H.med(walls[k])
            rw = H.med(walls[ref])
            ir = irs.get(k)
            rir = irs.get(ref)
            rows.append([v.compiler, v.name, v.ref if k != ref else "-", f"{text:,}",
                         f"{text / rtext:.2f}", f"{tables:,}", H.fmt_ms(w),
                         f"{H.fmt_ms(min(walls[k]))}-{H.fmt_ms(max(walls[k]))}",
                         f"{w / rw:.3f}", "-" if ir is None else f"{ir / 1e6:,.1f}",
                         "-" if ir is None else f"{ir / rir:.3f}"])
        print(H.table(["compiler", "build", "vs", ".text B", "x", "tables B", "wall ms",
                       "min-max", "x", "Ir M", "x"], rows,
                      ["<", "<", "<", ">", ">", ">", ">", ">", ">", ">", ">"]))
    print(f"\n(took {time.monotonic() - t0:.0f} s after the builds)")


def cc_version(cc):
    return subprocess.run([cc, "-dumpversion"], stdout=subprocess.PIPE, text=True).stdout.strip()


if __name__ == "__main__":
    main()
