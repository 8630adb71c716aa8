#!/usr/bin/env python3
"""MPI programs end to end (docs/mpi.md): a profile per rank, MPI calls as functions.

Builds tests/mpi/imbalance.c with mpicc (-finstrument-functions), runs it on four ranks
under mpirun with libfnprof.so and libfnprof-mpi.so, and checks every rank's file:

  - exactly four files, named as asked (%r, or ".rank<r>" appended), and nothing else;
  - every function's calls, primitive calls and caller edges, exactly, from the program's
    known structure (rank r calls work() STEPS * UNITS * (r + 1)^3 times), the MPI_* calls
    included, each under the function that made it and keyed ('MPI', 0, 'MPI_Send');
  - "rank" and "size" in the metadata (read by tests/e2e/fnptree.py, not by fnprof);
  - fnprof ranks --json and its text table: every row's figures equal those computed here
    from the ranks' pstats (calls summed, cumtime and tottime min/mean/max, imbalance,
    cost, to 1e-9 relative), work's cumtime max is on rank 3; fnprof merge of the four:
    every count the sum.

    run_mpi.py --case NAME --fnprof BIN --lib-dir DIR --mpicc MPICC --mpiexec MPIRUN --workdir W
               [--flavour openmpi|mpich] [--mpi-lib libfnprof-mpich.so]

Cases: env_rank (-x PROF_OUTPUT=out.%r.prof), env_plain (out.prof: ".rank<r>"), linked
(the program linked with -lfnprof, PROF_OUTPUT in mpirun's own environment, only the
wrappers preloaded), run_rank and run_plain
(fnprof run --mpi -o ...), libcalls (fnprof run --mpi --libcalls: the MPI calls still the
wrappers', exact, none of them or of PMPI_* a library call; rank 0's printf one, under main),
count (PROF_TIMER=none), filter (PROF_FILTER leaves MPI_Barrier
and work out), no_lib (fnprof run --mpi without libfnprof-mpi.so: a clear error),
reversed (LD_PRELOAD=libfnprof-mpi.so:libfnprof.so: either order works), alone
(libfnprof-mpi.so preloaded alone into a program not linked with fnprof: libc's empty hooks
win, each rank says so in one line and writes nothing, exit status 0), fork (each rank
forks a child that calls compute() and exits, under fnprof run --mpi -o out.prof: the
child's calls are in the rank's file, no .rank<r>.<pid> left), more (tests/mpi/more_calls.c:
MPI-IO, a Cartesian topology and a neighbourhood collective, one-sided calls, a persistent
synchronous send, each call's count and caller exact), mismatch (MPICH only: fnprof run
--mpi on the MPICH program where only Open MPI's wrappers were built refuses it in one line).
--flavour mpich runs the same cases with mpicc.mpich, Hydra's mpiexec.hydra (-genv for -x)
and --mpi-lib libfnprof-mpich.so, the wrappers built for MPICH.
Exit 77 (ctest's skip) when MPI cannot be run here, with the reason.
python3 standard library only.
"""
import argparse
import json
import os
import pstats
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "e2e"))
import fnptree  # noqa: E402
from mpilaunch import env_args, mpi_env, mpirun_cmd  # noqa: E402

NP = 4
STEPS, UNITS = 4, 10
SKIP = 77
PROGRAM_FUNCS = {"main", "compute", "work", "ring", "ring_nonblocking", "collectives"}
REL = 1e-9


def fail(msg):
    sys.exit(f"FAIL: {msg}")


def xenv(args, name, value):
    """The launcher's options setting name=value in every rank (mpilaunch.env_args)."""
    return env_args(args.flavour, name, value)


def expected(rank, fork=False):
    """{name: (ncalls, {caller name: ncalls})} for one rank: what imbalance.c calls. With
    fork, the rank's file holds its forked child's calls too: main and fork_child, open at
    the fork, once more each (a child counts the calls open at the fork once), compute once
    more, from fork_child."""
    s = STEPS
    extra = 1 if fork else 0
    nwork = (s + extra) * UNITS * (rank + 1) ** 3
    e = {
        "main": (1 + extra, {}),
        "compute": (s + extra, {"main": s, "fork_child": 1} if fork else {"main": s}),
        "work": (nwork, {"compute": nwork}),
        "ring": (s, {"main": s}),
        "ring_nonblocking": (s, {"main": s}),
        "collectives": (s, {"main": s}),
    }
    for name in ("MPI_Init", "MPI_Comm_rank", "MPI_Comm_size", "MPI_Finalize"):
        e[name] = (1, {"main": 1})
    for name in ("MPI_Send", "MPI_Recv"):
        e[name] = (s, {"ring": s})
    for name in ("MPI_Irecv", "MPI_Isend", "MPI_Waitall"):
        e[name] = (s, {"ring_nonblocking": s})
    for name in ("MPI_Barrier", "MPI_Bcast", "MPI_Allreduce", "MPI_Reduce", "MPI_Gather"):
        e[name] = (s, {"collectives": s})
    if fork:
        e["fork_child"] = (2, {"main": 2})
    return e


def expected_more():
    """{name: (ncalls, {caller: ncalls})} of tests/mpi/more_calls.c, the same on every rank."""
    e = {"main": (1, {})}
    calls = {
        "main": ["io", "topology", "one_sided", "persistent", "MPI_Init", "MPI_Comm_rank",
                 "MPI_Comm_size", "MPI_Reduce", "MPI_Finalize"],
        "io": ["MPI_File_open", "MPI_File_set_view", "MPI_File_write_at_all", "MPI_File_sync",
               "MPI_File_seek", "MPI_File_read", "MPI_Barrier", "MPI_File_iread_at",
               "MPI_Wait", "MPI_File_close"],
        "topology": ["MPI_Cart_create", "MPI_Comm_dup_with_info", "MPI_Neighbor_allgather",
                     "MPI_Comm_free", "MPI_Comm_free"],
        "one_sided": ["MPI_Win_allocate", "MPI_Win_lock_all", "MPI_Win_sync", "MPI_Barrier",
                      "MPI_Fetch_and_op", "MPI_Win_flush_all", "MPI_Barrier", "MPI_Rget",
                      "MPI_Wait", "MPI_Win_unlock_all", "MPI_Win_free"],
        "persistent": ["MPI_Ssend_init", "MPI_Irecv", "MPI_Start", "MPI_Waitall",
                       "MPI_Request_get_status", "MPI_Request_free"],
    }
    for caller, callees in calls.items():
        for name in callees:
            n, by = e.get(name, (0, {}))
            by = dict(by)
            by[caller] = by.get(caller, 0) + 1
            e[name] = (n + 1, by)
    return e


def build(args, work, linked, source="imbalance"):
    prog = work / (f"{source}-linked" if linked else source)
    cmd = [args.mpicc, "-g", "-O2", "-finstrument-functions", f"-DSTEPS={STEPS}",
           f"-DUNITS={UNITS}", str(HERE / f"{source}.c"), "-o", str(prog)]
    if linked:
        cmd += [f"-L{args.lib_dir}", f"-Wl,-rpath,{args.lib_dir}", "-lfnprof"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"{' '.join(cmd)}: exit {r.returncode}\n{r.stderr}")
    return prog


def run(args, cmd, work, env, want=None):
    r = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True, timeout=240)
    if r.returncode != 0:
        fail(f"{' '.join(map(str, cmd))}: exit {r.returncode}\nstdout: {r.stdout}\n"
             f"stderr: {r.stderr}")
    want = want or f"imbalance: size {NP} tokens {STEPS * (NP - 1)} left "
    if not r.stdout.startswith(want):
        fail(f"program output {r.stdout!r}, expected it to start {want!r}")
    return r


def check_files(work, names, keep):
    """The workdir holds exactly names (plus keep: the programs); returns their paths."""
    present = sorted(p.name for p in work.iterdir() if p.name not in keep)
    if present != sorted(names):
        fail(f"files after the run: {present}, expected {sorted(names)}")
    return [work / n for n in names]


counts = fnptree.name_counts


def is_libcall(key):
    """A library call PROF_LIBCALLS recorded: (library file name, 0, name)."""
    f, line, _ = key
    return line == 0 and ".so" in f and "/" not in f


def check_libcalls(path, rank):
    """fnprof run --mpi --libcalls: no MPI or PMPI function is a library call (the wrappers
    stay the MPI calls' functions), and rank 0's one printf is, under main."""
    stats = fnptree.read(path)[0]
    calls = {k: v for k, v in stats.items() if is_libcall(k)}
    mpi = [k for k in calls if k[2].startswith(("MPI_", "PMPI_"))]
    if mpi:
        fail(f"{path}: MPI calls recorded as library calls: {mpi}")
    printf = [(v[1], {c[2]: n[0] for c, n in v[4].items()}) for k, v in calls.items()
              if k[2] == "printf"]
    want = [(1, {"main": 1})] if rank == 0 else []
    if printf != want:
        fail(f"{path}: printf as a library call {printf}, expected {want}")


def check_rank(path, rank, want, count_only=False, source="imbalance", libcalls=False):
    stats, tree, meta = fnptree.read_all(path)
    if tree is None:
        fail(f"{path}: no calling-context tree")
    bad = fnptree.check(stats, tree)
    if bad:
        fail(f"{path}: tree and dict disagree: {bad}")
    meta = dict(meta)
    if meta.get("rank") != str(rank) or meta.get("size") != str(NP):
        fail(f"{path}: metadata rank {meta.get('rank')!r} size {meta.get('size')!r}, "
             f"expected {rank!r} and {NP!r}")
    for (f, line, name) in stats:
        if f == "~" or (libcalls and is_libcall((f, line, name))):
            continue
        if name.startswith("MPI_"):
            # the MPI library's functions: one key on every machine, no build path
            if (f, line) != ("MPI", 0):
                fail(f"{path}: {name} keyed {f}:{line}, expected ('MPI', 0, {name!r})")
            continue
        where = f"tests/mpi/{source}.c"
        if not f.endswith(where) or line <= 0:
            fail(f"{path}: {name} keyed {f}:{line}, expected a line of {where}")
    got = {n: v for n, v in counts({k: v for k, v in stats.items()
                                   if not (libcalls and is_libcall(k))}).items()
           if not n.startswith("<")}
    wrong = []
    for name in sorted(set(got) | set(want)):
        if name not in want:
            wrong.append(f"{name}: not called, found {got[name]}")
            continue
        if name not in got:
            wrong.append(f"{name}: missing (expected {want[name]})")
            continue
        nc, callers = want[name]
        pc_g, nc_g, callers_g = got[name]
        if (pc_g, nc_g) != (nc, nc):
            wrong.append(f"{name}: calls {pc_g}/{nc_g}, expected {nc}/{nc}")
        if callers_g != {c: (n, n) for c, n in callers.items()}:
            wrong.append(f"{name}: callers {callers_g}, expected {callers}")
    if wrong:
        fail(f"{path} (rank {rank}):\n  " + "\n  ".join(wrong))
    # Times: finite, and in count-only mode each call weighs one "second".
    for key, (pc, nc, tt, ct, _c) in stats.items():
        if not 0 <= tt <= ct + 1e-9 and key[0] != "~":
            fail(f"{path}: {key}: tottime {tt} cumtime {ct}")
        if count_only and key[2] == "work" and tt != nc:
            fail(f"{path}: count-only work tottime {tt}, expected its calls {nc}")
    return stats


def close(a, b):
    return abs(a - b) <= REL * max(abs(a), abs(b)) or abs(a - b) < 1e-15


def spread(values):
    """min, mean, max of one figure over the ranks (values in rank order)."""
    return min(values), sum(values) / len(values), max(values)


def ranks_expected(paths):
    """fnprof ranks' figures computed here from each rank's pstats: {(file, line, name):
    (calls, primitive calls, [cumtime per rank], [tottime per rank])}, a function absent
    from a rank counting 0 there."""
    per_rank = [pstats.Stats(str(p)).stats for p in paths]
    keys = set().union(*per_rank)
    out = {}
    for key in keys:
        rows = [st.get(key, (0, 0, 0.0, 0.0, {})) for st in per_rank]
        out[key] = (sum(r[1] for r in rows), sum(r[0] for r in rows),
                    [r[3] for r in rows], [r[2] for r in rows])
    return out


def check_ranks_cmd(args, paths):
    """fnprof ranks over the four files, given out of order: every figure of every row as
    computed here from the ranks' own pstats; work's heaviest rank is 3."""
    shuffled = [paths[2], paths[0], paths[3], paths[1]]
    r = subprocess.run([args.fnprof, "ranks", "--json"] + [str(p) for p in shuffled],
                       capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"fnprof ranks --json: exit {r.returncode}: {r.stderr}")
    doc = json.loads(r.stdout)
    if sorted(x["rank"] for x in doc["ranks"]) != list(range(NP)):
        fail(f"fnprof ranks --json: ranks {doc['ranks']}")
    want = ranks_expected(paths)
    got = {(f["file"], f["line"], f["name"]): f for f in doc["functions"]}
    if set(got) != set(want):
        fail(f"fnprof ranks --json: functions {sorted(set(got) ^ set(want))} in one of "
             "its rows and the ranks' files only")
    wrong = []
    for key, (nc, pc, cum, tot) in sorted(want.items()):
        row = got[key]
        if (row["calls"], row["primitive_calls"]) != (nc, pc):
            wrong.append(f"{key}: calls {row['calls']}/{row['primitive_calls']}, "
                         f"expected {nc}/{pc}")
        for fig, vals in (("cumtime", cum), ("tottime", tot)):
            lo, mean, hi = spread(vals)
            g = row[fig]
            if not (close(g["min"], lo) and close(g["mean"], mean) and close(g["max"], hi)):
                wrong.append(f"{key}: {fig} {g}, expected min {lo!r} mean {mean!r} max {hi!r}")
            # The rank named must hold the max (ties: any of them).
            if not 0 <= g["max_rank"] < NP or vals[g["max_rank"]] != hi:
                wrong.append(f"{key}: {fig} max_rank {g['max_rank']}, values {vals}")
        lo, mean, hi = spread(cum)
        imb = hi / mean if mean > 0 else None
        if (row["imbalance"] is None) != (imb is None) or (
                imb is not None and not close(row["imbalance"], imb)):
            wrong.append(f"{key}: imbalance {row['imbalance']}, expected {imb!r}")
        if not close(row["cost"], hi - mean):
            wrong.append(f"{key}: cost {row['cost']}, expected {hi - mean!r}")
    if wrong:
        fail("fnprof ranks --json disagrees with the ranks' pstats:\n  " + "\n  ".join(wrong))
    rows = {f["name"]: f for f in doc["functions"]}
    total = sum(STEPS * UNITS * (rk + 1) ** 3 for rk in range(NP))
    w = rows.get("work")
    if not w or w["calls"] != total or w["primitive_calls"] != total:
        fail(f"fnprof ranks: work row {w}, expected {total} calls")
    if w["cumtime"]["max_rank"] != NP - 1:
        fail(f"fnprof ranks: work's cumtime max on rank {w['cumtime']['max_rank']}, "
             f"expected {NP - 1} (64x rank 0's calls)")
    for name in ("MPI_Send", "MPI_Barrier", "MPI_Waitall"):
        if rows.get(name, {}).get("calls") != STEPS * NP:
            fail(f"fnprof ranks: {name} row {rows.get(name)}, expected {STEPS * NP} calls")
    # Sorted by cost, largest first (the default).
    costs = [f["cost"] for f in doc["functions"]]
    if costs != sorted(costs, reverse=True):
        fail(f"fnprof ranks --json: not sorted by cost: {costs}")
    r = subprocess.run([args.fnprof, "ranks", "--limit", "0"] + [str(p) for p in paths],
                       capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"fnprof ranks: exit {r.returncode}: {r.stderr}")
    line = [ln for ln in r.stdout.splitlines() if ln.endswith("(work)")]
    if len(line) != 1 or f"rank {NP - 1}" not in line[0]:
        fail(f"fnprof ranks: work's row {line}, expected one naming rank {NP - 1}:\n{r.stdout}")
    # The text row's figures are the JSON's, as printed (6 decimals).
    cols = line[0].split()
    c = w["cumtime"]
    if cols[0] != str(total) or cols[1:4] != [f"{c['min']:.6f}", f"{c['mean']:.6f}",
                                              f"{c['max']:.6f}"]:
        fail(f"fnprof ranks: work's text row {line[0]!r}, expected calls {total} and "
             f"cumtime {c}")


def check_merge(args, paths, per_rank, work):
    out = work / "merged.pstats"
    r = subprocess.run([args.fnprof, "merge", "-o", str(out)] + [str(p) for p in paths],
                       capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"fnprof merge: exit {r.returncode}: {r.stderr}")
    got = counts(pstats.Stats(str(out)).stats)
    for name in PROGRAM_FUNCS | {"MPI_Send", "MPI_Recv", "MPI_Waitall", "MPI_Gather", "MPI_Init"}:
        nc = sum(per_rank[rk][name][0] for rk in range(NP))
        callers = {}
        for rk in range(NP):
            for c, n in per_rank[rk][name][1].items():
                callers[c] = callers.get(c, 0) + n
        if got.get(name, (0, 0, {}))[:2] != (nc, nc) or got[name][2] != {
                c: (n, n) for c, n in callers.items()}:
            fail(f"fnprof merge: {name} {got.get(name)}, expected {nc} calls from {callers}")
    out.unlink()


def case_no_lib(args, work):
    """fnprof run --mpi where libfnprof-mpi.so was not built: a copy of fnprof beside a lib
    folder that has libfnprof.so alone."""
    rel = os.path.relpath(Path(args.lib_dir).resolve(), Path(args.fnprof).resolve().parent)
    bindir = work / "bin"
    libdir = (bindir / rel).resolve()
    bindir.mkdir(parents=True)
    libdir.mkdir(parents=True, exist_ok=True)
    shutil.copy(args.fnprof, bindir / "fnprof")
    os.symlink(Path(args.lib_dir).resolve() / "libfnprof.so", libdir / "libfnprof.so")
    r = subprocess.run([str(bindir / "fnprof"), "run", "--mpi", "-o", str(work / "x.prof"),
                        "--", "true"], capture_output=True, text=True)
    lines = r.stderr.splitlines()
    if (r.returncode != 1 or len(lines) != 1 or not lines[0].startswith("fnprof: run: --mpi: ")
            or "libfnprof-mpi.so is missing" not in lines[0]):
        fail(f"fnprof run --mpi without the library: exit {r.returncode}, stderr {r.stderr!r}")
    if (work / "x.prof").exists():
        fail("fnprof run --mpi without the library ran the program")
    # The usage names the option, and --help describes it.
    r = subprocess.run([args.fnprof, "run", "--help"], capture_output=True, text=True)
    if (r.returncode != 0 or "[--mpi]" not in r.stdout.splitlines()[0]
            or "\n      --mpi " not in r.stdout):
        fail(f"fnprof run --help does not show --mpi: {r.stdout!r}")


def case_mismatch(args, work, prog):
    """fnprof run --mpi on a program of this MPI where only the other MPI's wrappers were
    built (a copy of fnprof beside libfnprof.so and libfnprof-mpi.so alone, the latter
    built for Open MPI): one line naming both, exit 1, the program not run."""
    lib = Path(args.lib_dir).resolve()
    rel = os.path.relpath(lib, Path(args.fnprof).resolve().parent)
    bindir = work / "bin"
    libdir = (bindir / rel).resolve()
    bindir.mkdir(parents=True)
    libdir.mkdir(parents=True, exist_ok=True)
    shutil.copy(args.fnprof, bindir / "fnprof")
    for name in ("libfnprof.so", "libfnprof-mpi.so"):
        os.symlink(lib / name, libdir / name)
    try:
        # Refused, the program never starts; run, one rank of imbalance.c waits for itself.
        r = subprocess.run([str(bindir / "fnprof"), "run", "--mpi", "-o", str(work / "x.prof"),
                            "--", str(prog)], capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        fail("fnprof run --mpi ran the MPICH program with Open MPI's wrappers (still running "
             "after 30 s)")
    lines = r.stderr.splitlines()
    want = (f"fnprof: run: --mpi: {prog} links MPICH (libmpich.so.12), and the wrappers "
            "built here are for Open MPI (libmpi.so.40): libfnprof-mpich.so is missing")
    if r.returncode != 1 or len(lines) != 1 or not lines[0].startswith(want) or r.stdout:
        fail(f"fnprof run --mpi, MPICH program, Open MPI wrappers only: exit {r.returncode}, "
             f"stdout {r.stdout!r}, stderr {r.stderr!r}; expected one line {want}...")
    if list(work.glob("x.prof*")):
        fail("fnprof run --mpi ran the program with the other MPI's wrappers")
    print("ok: mismatch: refused in one line")
    return 0


def case_more(args, work, base, env, fnprof_lib, mpi_lib, keep):
    """The wrappers beyond the classic calls (more_calls.c): each count and caller exact."""
    prog = build(args, work, False, "more_calls")
    cmd = base + [*xenv(args, "PROF_OUTPUT", "out.%r.prof"),
                  *xenv(args, "LD_PRELOAD", f"{fnprof_lib}:{mpi_lib}"),
                  str(prog), "more_calls.dat"]
    run(args, cmd, work, env, want=f"more_calls: size {NP} checks {4 * NP} of {4 * NP}\n")
    names = [f"out.{rk}.prof" for rk in range(NP)]
    paths = check_files(work, names, keep | {prog.name, "more_calls.dat"})
    for rk in range(NP):
        check_rank(paths[rk], rk, expected_more(), source="more_calls")
    print(f"ok: more: {NP} ranks, {len(expected_more())} functions each exact")
    return 0


def case_alone(args, work, base, env, prog, mpi_lib):
    """libfnprof-mpi.so preloaded alone into a program not linked with fnprof: libfnprof.so
    comes in as the wrappers' dependency, after libc, whose empty hooks the program's calls
    and the wrappers' reach. Each rank says so in one line naming libc, writes nothing, and
    the program's exit status stays 0."""
    cmd = base + [*xenv(args, "PROF_OUTPUT", "out.%r.prof"),
                  *xenv(args, "LD_PRELOAD", str(mpi_lib)), str(prog)]
    r = run(args, cmd, work, env)
    lines = r.stderr.splitlines()
    head = "fnprof: no instrumented call was recorded: the program's calls reach the hooks of "
    for rk in range(NP):
        tail = f"/out.{rk}.prof not written"
        mine = [ln for ln in lines if ln.endswith(tail)]
        if (len(mine) != 1 or not mine[0].startswith(head) or "libc.so" not in mine[0]
                or "not fnprof's; preload libfnprof.so (LD_PRELOAD=" not in mine[0]
                or "libfnprof.so" not in mine[0].split("LD_PRELOAD=", 1)[1]):
            fail(f"rank {rk}: expected one line {head}...libc.so...{tail}, stderr:\n{r.stderr}")
    if len(lines) != NP:
        fail(f"expected {NP} lines on stderr, one a rank:\n{r.stderr}")
    check_files(work, [], {prog.name})
    print(f"ok: alone: {NP} ranks, each named libc's hooks, no file")
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--case", required=True)
    ap.add_argument("--fnprof", required=True)
    ap.add_argument("--lib-dir", required=True)
    ap.add_argument("--mpicc", default="")
    ap.add_argument("--mpiexec", default="")
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--flavour", choices=("openmpi", "mpich"), default="openmpi",
                    help="the launcher's options: Open MPI's mpirun or MPICH's Hydra")
    ap.add_argument("--mpi-lib", default="libfnprof-mpi.so",
                    help="the wrappers built for this MPI, in --lib-dir")
    ap.add_argument("--skip", default="", help="skip with this reason (MPI not found)")
    args = ap.parse_args()
    if args.skip:
        print(f"SKIPPED: {args.skip}")
        return SKIP
    work = Path(args.workdir)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    if args.case == "no_lib":
        case_no_lib(args, work)
        print("ok: no_lib")
        return 0
    for tool in (args.mpicc, args.mpiexec):
        if not tool or not shutil.which(tool):
            pkgs = "mpich libmpich-dev" if args.flavour == "mpich" else "openmpi-bin libopenmpi-dev"
            print(f"SKIPPED: {tool or 'mpicc/mpirun'} not found (install {pkgs})")
            return SKIP

    lib = Path(args.lib_dir).resolve()
    fnprof_lib, mpi_lib = lib / "libfnprof.so", lib / args.mpi_lib
    linked = args.case == "linked"
    fork = args.case == "fork"
    prog = build(args, work, linked)
    keep = {prog.name}
    env = mpi_env()
    base = mpirun_cmd(args.mpiexec, NP, yield_when_idle=True, flavour=args.flavour)
    count_only = False
    preload = f"{fnprof_lib}:{mpi_lib}"
    want_funcs = {rk: expected(rk, fork) for rk in range(NP)}
    prog_args = [str(prog)]
    if args.case in ("env_rank", "count", "filter"):
        cmd = base + [*xenv(args, "PROF_OUTPUT", "out.%r.prof"), *xenv(args, "LD_PRELOAD", preload)]
        names = [f"out.{rk}.prof" for rk in range(NP)]
        if args.case == "count":
            cmd += xenv(args, "PROF_TIMER", "none")
            count_only = True
        if args.case == "filter":
            flt = work / "filter.txt"
            flt.write_text("SCOREP_REGION_NAMES_BEGIN\n  EXCLUDE MPI_Barrier work\n"
                           "SCOREP_REGION_NAMES_END\n")
            keep.add(flt.name)
            cmd += xenv(args, "PROF_FILTER", str(flt))
            for rk in range(NP):
                del want_funcs[rk]["MPI_Barrier"], want_funcs[rk]["work"]
    elif args.case == "env_plain":
        cmd = base + [*xenv(args, "PROF_OUTPUT", "out.prof"), *xenv(args, "LD_PRELOAD", preload)]
        names = [f"out.prof.rank{rk}" for rk in range(NP)]
    elif args.case == "linked":
        # Linked with -lfnprof: the hooks come from the program's own link; only the
        # wrappers are preloaded. PROF_OUTPUT exported to mpirun itself, as a Slurm user
        # exports it before srun: the launcher, not linked with fnprof, writes nothing.
        env["PROF_OUTPUT"] = "out.%r.prof"
        cmd = base + xenv(args, "LD_PRELOAD", str(mpi_lib))
        names = [f"out.{rk}.prof" for rk in range(NP)]
    elif args.case == "exported":
        # Both variables in mpirun's own environment: mpirun itself (fnprof preloaded, but
        # not instrumented) owns the name first, and the ranks below it, each with its
        # rank, must still name their files by rank and not as its children (.<pid>).
        env["PROF_OUTPUT"] = "out.prof"
        env["LD_PRELOAD"] = preload
        cmd = base
        names = [f"out.prof.rank{rk}" for rk in range(NP)]
    elif args.case == "run_rank":
        cmd = base + [args.fnprof, "run", "--mpi", "-o", "out.%r.prof", "--"]
        names = [f"out.{rk}.prof" for rk in range(NP)]
    elif args.case == "libcalls":
        cmd = base + [args.fnprof, "run", "--mpi", "--libcalls", "-o", "out.%r.prof", "--"]
        names = [f"out.{rk}.prof" for rk in range(NP)]
    elif args.case == "run_plain":
        cmd = base + [args.fnprof, "run", "--mpi", "-q", "-o", "out.prof", "--"]
        names = [f"out.prof.rank{rk}" for rk in range(NP)]
    elif args.case == "reversed":
        # libfnprof.so after the wrappers: preloaded, it still comes before libc in the
        # lookup, so its hooks answer; the order among the preloaded libraries is free.
        cmd = base + [*xenv(args, "PROF_OUTPUT", "out.%r.prof"),
                      *xenv(args, "LD_PRELOAD", f"{mpi_lib}:{fnprof_lib}")]
        names = [f"out.{rk}.prof" for rk in range(NP)]
    elif args.case == "more":
        return case_more(args, work, base, env, fnprof_lib, mpi_lib, keep)
    elif args.case == "mismatch":
        return case_mismatch(args, work, prog)
    elif args.case == "alone":
        return case_alone(args, work, base, env, prog, mpi_lib)
    elif args.case == "fork":
        cmd = base + [args.fnprof, "run", "--mpi", "-o", "out.prof", "--"]
        names = [f"out.prof.rank{rk}" for rk in range(NP)]
        prog_args.append("--fork")
    else:
        fail(f"unknown case {args.case}")
    r = run(args, cmd + prog_args, work, env)
    for ln in r.stderr.splitlines():
        if ln and not ln.startswith("fnprof: "):
            fail(f"stderr line not from fnprof: {ln!r}\n{r.stderr}")
    if args.case == "run_plain" and r.stderr:
        fail(f"fnprof run -q wrote to stderr: {r.stderr!r}")
    paths = check_files(work, names, keep)
    for rk in range(NP):
        check_rank(paths[rk], rk, want_funcs[rk], count_only, libcalls=args.case == "libcalls")
        if args.case == "libcalls":
            check_libcalls(paths[rk], rk)
    if args.case == "env_rank" or args.case == "run_plain":
        check_ranks_cmd(args, paths)
        check_merge(args, paths, want_funcs, work)
    print(f"ok: {args.case}: {NP} ranks, {', '.join(names)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
# SPDX-License-Identifier: MIT
