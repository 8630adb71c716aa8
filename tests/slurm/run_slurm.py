#!/usr/bin/env python3
"""A real Slurm (docs/mpi.md, "Under Slurm"): a single-node cluster of the test's own, srun.

Starts munged (a key of its own, its socket, pid, log and seed files in a scratch folder),
slurmctld and slurmd (a slurm.conf written here: this host as the controller and the one
node, its CPUs as nproc counts them, both ports free ones on loopback, state, spool, pid
and log files in the scratch folder, SlurmUser root), waits for sinfo to call the node
idle, and runs three job steps of four tasks:

  - srun -n 4 --mpi=pmix fnprof run --mpi -o out.%r.prof -- ./imbalance
    Open MPI's ranks started by slurmd through PMIx (no mpirun), tests/mpi/imbalance.c:
    four files out.0.prof ... out.3.prof, each rank's counts exact (tests/mpi/run_mpi.py's
    checks), fnprof ranks and fnprof merge over them;
  - srun -n 4 --mpi=pmix --export=ALL,PROF_OUTPUT=out.%r.prof,LD_PRELOAD=<lib>/libfnprof.so:
    <lib>/libfnprof-mpi.so ./imbalance (the same checks: docs/mpi.md's line without fnprof run)
  - srun -n 4 env PROF_OUTPUT=out.%r.prof ./tasks
    a serial program linked with -lfnprof (tests/slurm/tasks.c): the rank is Slurm's
    SLURM_PROCID, the size SLURM_STEP_NUM_TASKS; four files, each the counts of its own task.

A node with fewer than four CPUs gets --overcommit on every srun (four tasks share them).
The cluster is stopped whatever happens: try/finally, an atexit, SIGTERM handled, and the
daemons die with this script (PR_SET_PDEATHSIG) if it is killed. Stopping kills the
processes of the pid files and every process whose environment names this cluster's
slurm.conf (slurmstepd and its tasks), nothing else.

    run_slurm.py --fnprof BIN --lib-dir DIR --mpicc MPICC --cc CC --workdir W

Exit 77 (ctest's skip) with the reason when not root or Slurm, munge or mpicc is missing.
python3 standard library only.
"""
import argparse
import atexit
import ctypes
import json
import os
import pstats
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "mpi"))
sys.path.insert(0, str(HERE.parent / "e2e"))
import fnptree  # noqa: E402
import run_mpi  # noqa: E402
from run_case import clean_env  # noqa: E402

SKIP = 77
NP = run_mpi.NP
TASK_UNITS = 10  # tasks.c's UNITS: task r calls work() TASK_UNITS * (r + 1) times
DAEMONS = ("munged", "slurmctld", "slurmd", "srun", "sinfo", "munge", "unmunge")


def fail(msg):
    sys.exit(f"FAIL: {msg}")


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def die_with_parent():
    """In the daemon's child before exec: SIGTERM when this script dies, even by SIGKILL
    (ctest's timeout), so that no daemon outlives the test."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class Cluster:
    def __init__(self, scratch):
        self.dir = scratch
        self.conf = scratch / "slurm.conf"
        self.sock = scratch / "munge.socket"
        self.procs = []
        self.env = {k: v for k, v in clean_env().items() if not k.startswith("SLURM_")}
        self.env["SLURM_CONF"] = str(self.conf)
        self.host = socket.gethostname().split(".")[0]
        self.cpus = os.cpu_count() or 1

    def write_conf(self):
        d = self.dir
        for sub in ("state", "spool"):
            (d / sub).mkdir()
        lines = [
            "ClusterName=fnproftest",
            f"SlurmctldHost={self.host}(127.0.0.1)",
            f"SlurmctldPort={free_port()}",
            f"SlurmdPort={free_port()}",
            "AuthType=auth/munge",
            f"AuthInfo=socket={self.sock}",
            "CredType=cred/munge",
            "SlurmUser=root",
            "SlurmdUser=root",
            f"StateSaveLocation={d / 'state'}",
            f"SlurmdSpoolDir={d / 'spool'}",
            f"SlurmctldPidFile={d / 'slurmctld.pid'}",
            f"SlurmdPidFile={d / 'slurmd.pid'}",
            f"SlurmctldLogFile={d / 'slurmctld.log'}",
            f"SlurmdLogFile={d / 'slurmd.log'}",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "MpiDefault=none",
            "SwitchType=switch/none",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            "JobCompType=jobcomp/none",
            "SchedulerType=sched/builtin",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_CPU",
            "ReturnToService=2",
            "SlurmctldTimeout=30",
            "SlurmdTimeout=30",
            "InactiveLimit=0",
            "KillWait=2",
            f"NodeName={self.host} NodeAddr=127.0.0.1 CPUs={self.cpus} State=UNKNOWN",
            f"PartitionName=test Nodes={self.host} Default=YES MaxTime=INFINITE State=UP",
        ]
        self.conf.write_text("\n".join(lines) + "\n")

    def spawn(self, cmd):
        log = open(self.dir / f"{Path(cmd[0]).name}.out", "w")
        p = subprocess.Popen(cmd, env=self.env, stdin=subprocess.DEVNULL, stdout=log,
                             stderr=subprocess.STDOUT, preexec_fn=die_with_parent)
        self.procs.append(p)
        return p

    def start(self):
        d = self.dir
        key = d / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o600)
        self.spawn(["munged", "--foreground", f"--key-file={key}", f"--socket={self.sock}",
                    f"--pid-file={d / 'munged.pid'}", f"--log-file={d / 'munged.log'}",
                    f"--seed-file={d / 'munged.seed'}"])
        self.wait("munged answers", self.munge_ok, 20)
        self.write_conf()
        self.spawn(["slurmctld", "-D", "-i", "-f", str(self.conf)])
        self.spawn(["slurmd", "-D", "-N", self.host, "-f", str(self.conf)])
        self.wait(f"node {self.host} idle", lambda: self.node_state() == "idle", 60)

    def munge_ok(self):
        if not self.sock.exists():
            return False
        cred = subprocess.run(["munge", "-n", "-S", str(self.sock)], capture_output=True)
        return cred.returncode == 0 and subprocess.run(
            ["unmunge", "-S", str(self.sock)], input=cred.stdout,
            capture_output=True).returncode == 0

    def node_state(self):
        r = subprocess.run(["sinfo", "-h", "-N", "-o", "%T"], env=self.env,
                           capture_output=True, text=True, timeout=20)
        return r.stdout.strip() if r.returncode == 0 else ""

    def wait(self, what, ready, seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            for p in self.procs:
                if p.poll() is not None:
                    fail(f"{p.args[0]} exited {p.returncode} before {what}\n{self.logs()}")
            if ready():
                return
            time.sleep(0.5)
        fail(f"no {what} after {seconds} s (sinfo: {self.node_state()!r})\n{self.logs()}")

    def logs(self):
        out = []
        for f in sorted(self.dir.glob("*.log")) + sorted(self.dir.glob("*.out")):
            tail = f.read_text(errors="replace").splitlines()[-15:]
            out.append(f"--- {f.name}\n" + "\n".join(tail))
        return "\n".join(out)

    def ours(self):
        """pids of the processes that belong to this cluster: those of the pid files and
        every one whose environment names this slurm.conf (slurmstepd, the tasks)."""
        mark = f"SLURM_CONF={self.conf}".encode()
        pids = set()
        for f in self.dir.glob("*.pid"):
            try:
                pids.add(int(f.read_text().split()[0]))
            except (OSError, ValueError, IndexError):
                pass
        for p in Path("/proc").iterdir():
            if p.name.isdigit() and int(p.name) != os.getpid():
                try:
                    if mark in (p / "environ").read_bytes().split(b"\0"):
                        pids.add(int(p.name))
                except OSError:
                    pass
        return pids

    def stop(self):
        for sig in (signal.SIGTERM, signal.SIGKILL):
            pids = self.ours() | {p.pid for p in self.procs if p.poll() is None}
            for pid in pids:
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass
            end = time.monotonic() + 10
            while time.monotonic() < end and any(p.poll() is None for p in self.procs):
                time.sleep(0.1)
            if not self.ours() and all(p.poll() is not None for p in self.procs):
                break
        self.procs = [p for p in self.procs if p.poll() is None]


DOCS = HERE.parent.parent / "docs" / "mpi.md"
DOCS_NAMES = {"./imbalance": "./app", "./tasks": "./serial"}
LIB_DIR = ""  # fnprof's libraries, shown as $lib (`lib=$(fnprof --libdir)`) in the docs


def check_docs_line(cmd):
    """docs/mpi.md's Slurm section shows the command run here, with fnprof by its name, the
    programs as ./app and ./serial, and without the --overcommit of a small node."""
    words = [DOCS_NAMES.get(w, "fnprof" if w.endswith("/fnprof") else w) for w in cmd
             if w != "--overcommit"]
    if LIB_DIR:
        words = [w.replace(LIB_DIR + "/", "$lib/") for w in words]
    line = " ".join(words)
    if not any(ln.startswith(line + " ") or ln == line
               for ln in DOCS.read_text().splitlines()):
        fail(f"docs/mpi.md has no line {line!r}: the docs' Slurm lines are this test's")


def srun(cluster, opts, prog, cwd, timeout=180):
    """srun -n 4 OPTS [--overcommit] PROG...: docs/mpi.md shows these commands."""
    cmd = ["srun", "-n", str(NP)] + opts
    if cluster.cpus < NP:
        cmd.append("--overcommit")
    cmd += prog
    env = dict(cluster.env)
    # Open MPI on one node: shared memory and self (tests/mpi/mpilaunch.py says why), plain
    # copies, and waiting ranks that yield the CPU to the working one.
    env.update(OMPI_MCA_btl="self,vader", OMPI_MCA_btl_vader_single_copy_mechanism="none",
               OMPI_MCA_mpi_yield_when_idle="1")
    print("running: " + " ".join(cmd), flush=True)
    check_docs_line(cmd)
    try:
        r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        fail(f"{' '.join(cmd)}: no end after {timeout} s\n{cluster.logs()}")
    if r.returncode != 0:
        fail(f"{' '.join(cmd)}: exit {r.returncode}\nstdout: {r.stdout}\nstderr: {r.stderr}\n"
             f"{cluster.logs()}")
    for ln in r.stderr.splitlines():
        if ln and not ln.startswith("fnprof: "):
            fail(f"stderr line not from fnprof: {ln!r}\n{r.stderr}")
    return r


def mpi_plugin(cluster):
    """pmix where Slurm has it (Open MPI 4 asks its launcher for PMIx); else none."""
    r = subprocess.run(["srun", "--mpi=list"], env=cluster.env, capture_output=True,
                       text=True)
    listed = (r.stdout + r.stderr).split()
    return "pmix" if "pmix" in listed else ""


def step_mpi(args, cluster, work, exported=False):
    """The MPI program's four ranks under fnprof run --mpi, or (exported) with fnprof's two
    libraries and PROF_OUTPUT given to the tasks by srun's --export."""
    work.mkdir()
    prog = run_mpi.build(args, work, False)
    plugin = mpi_plugin(cluster)
    if not plugin:
        fail("srun --mpi=list names no pmix: Open MPI's ranks cannot be started by srun")
    if exported:
        lib = Path(LIB_DIR)
        preload = f"{lib / 'libfnprof.so'}:{lib / 'libfnprof-mpi.so'}"
        r = srun(cluster, [f"--mpi={plugin}",
                           f"--export=ALL,PROF_OUTPUT=out.%r.prof,LD_PRELOAD={preload}"],
                 [f"./{prog.name}"], work)
    else:
        r = srun(cluster, [f"--mpi={plugin}"],
                 [args.fnprof, "run", "--mpi", "-o", "out.%r.prof", "--", f"./{prog.name}"],
                 work)
    want = f"imbalance: size {NP} tokens {run_mpi.STEPS * (NP - 1)} left "
    if not r.stdout.startswith(want):
        fail(f"program output {r.stdout!r}, expected it to start {want!r}")
    names = [f"out.{rk}.prof" for rk in range(NP)]
    paths = run_mpi.check_files(work, names, {prog.name})
    want_funcs = {rk: run_mpi.expected(rk) for rk in range(NP)}
    for rk in range(NP):
        run_mpi.check_rank(paths[rk], rk, want_funcs[rk])
    run_mpi.check_ranks_cmd(args, paths)
    run_mpi.check_merge(args, paths, want_funcs, work)
    print(f"ok: srun --mpi={plugin}{' --export' if exported else ''}: {NP} ranks, "
          f"{', '.join(names)}")


def task_counts(rank):
    n = TASK_UNITS * (rank + 1)
    return {"main": (1, {}), "compute": (1, {"main": 1}), "work": (n, {"compute": n})}


def step_tasks(args, cluster, work):
    work.mkdir()
    prog = work / "tasks"
    cmd = [args.cc, "-g", "-O2", "-finstrument-functions", str(HERE / "tasks.c"), "-o",
           str(prog), f"-L{args.lib_dir}", f"-Wl,-rpath,{args.lib_dir}", "-lfnprof"]
    b = subprocess.run(cmd, capture_output=True, text=True)
    if b.returncode != 0:
        fail(f"{' '.join(cmd)}: exit {b.returncode}\n{b.stderr}")
    r = srun(cluster, [], ["env", "PROF_OUTPUT=out.%r.prof", "./tasks"], work)
    lines = sorted(r.stdout.splitlines())
    if [ln.split(" checksum")[0] for ln in lines] != [
            f"tasks: task {rk} units {TASK_UNITS * (rk + 1)}" for rk in range(NP)]:
        fail(f"the tasks' output {r.stdout!r}, expected one line from each of {NP} tasks")
    names = [f"out.{rk}.prof" for rk in range(NP)]
    paths = run_mpi.check_files(work, names, {prog.name})
    for rk in range(NP):
        stats, tree, meta = fnptree.read_all(paths[rk])
        meta = dict(meta)
        if meta.get("rank") != str(rk) or meta.get("size") != str(NP):
            fail(f"{paths[rk]}: metadata rank {meta.get('rank')!r} size "
                 f"{meta.get('size')!r}, expected {rk} and {NP}")
        if tree is None or fnptree.check(stats, tree):
            fail(f"{paths[rk]}: no tree, or tree and dict disagree")
        got = {n: v for n, v in fnptree.name_counts(stats).items() if not n.startswith("<")}
        want = {n: (c, c, {k: (v, v) for k, v in by.items()})
                for n, (c, by) in task_counts(rk).items()}
        if got != want:
            fail(f"{paths[rk]} (task {rk}): counts {got}, expected {want}")
    total = sum(TASK_UNITS * (rk + 1) for rk in range(NP))
    rj = subprocess.run([args.fnprof, "ranks", "--json"] + [str(p) for p in paths],
                        capture_output=True, text=True)
    if rj.returncode != 0:
        fail(f"fnprof ranks: exit {rj.returncode}: {rj.stderr}")
    doc = json.loads(rj.stdout)
    rows = {f["name"]: f for f in doc["functions"]}
    if (sorted(x["rank"] for x in doc["ranks"]) != list(range(NP))
            or rows["work"]["calls"] != total or rows["work"]["cumtime"]["max_rank"] != NP - 1):
        fail(f"fnprof ranks: ranks {doc['ranks']}, work {rows.get('work')}, expected "
             f"{total} calls, the most on rank {NP - 1}")
    merged = work / "merged.pstats"
    rm = subprocess.run([args.fnprof, "merge", "-o", str(merged)] + [str(p) for p in paths],
                        capture_output=True, text=True)
    if rm.returncode != 0:
        fail(f"fnprof merge: exit {rm.returncode}: {rm.stderr}")
    got = fnptree.name_counts(pstats.Stats(str(merged)).stats)
    if got.get("work") != (total, total, {"compute": (total, total)}) or got["main"][:2] != (
            NP, NP):
        fail(f"fnprof merge: work {got.get('work')} main {got.get('main')}, expected work "
             f"{total} calls from compute, main {NP}")
    print(f"ok: srun env PROF_OUTPUT: {NP} tasks, {', '.join(names)}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fnprof", required=True)
    ap.add_argument("--lib-dir", required=True)
    ap.add_argument("--mpicc", default="")
    ap.add_argument("--cc", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--skip", default="", help="skip with this reason (MPI not built)")
    args = ap.parse_args()
    if args.skip:
        print(f"SKIPPED: {args.skip}")
        return SKIP
    args.fnprof = str(Path(args.fnprof).resolve())  # the tasks start in their own folder
    global LIB_DIR
    LIB_DIR = str(Path(args.lib_dir).resolve())
    if os.geteuid() != 0:
        print("SKIPPED: the cluster's daemons run as root (SlurmUser=root): run as root, "
              "as CI does")
        return SKIP
    missing = [t for t in DAEMONS if not shutil.which(t)]
    if missing:
        print(f"SKIPPED: {', '.join(missing)} not found (install slurm-wlm munge: "
              "scripts/install-deps)")
        return SKIP
    if not args.mpicc or not shutil.which(args.mpicc):
        print("SKIPPED: no mpicc (install openmpi-bin libopenmpi-dev)")
        return SKIP
    work = Path(args.workdir)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    # The scratch folder is short-named under /tmp: munge's socket path must fit a
    # sockaddr_un (108 bytes), which a build tree's path may not.
    # munged wants its socket's folder open to all (execute), its key 0600.
    scratch = Path(tempfile.mkdtemp(prefix="fnprof-slurm-"))
    scratch.chmod(0o755)
    cluster = Cluster(scratch)
    atexit.register(cluster.stop)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("FAIL: terminated"))
    try:
        cluster.start()
        print(f"cluster: node {cluster.host} idle, {cluster.cpus} CPUs, {scratch}", flush=True)
        step_mpi(args, cluster, work / "mpi")
        step_mpi(args, cluster, work / "export", exported=True)
        step_tasks(args, cluster, work / "tasks")
    finally:
        cluster.stop()
        left = cluster.ours()
        if left or cluster.procs:
            print(f"FAIL: processes left after the stop: {sorted(left)}", file=sys.stderr)
            sys.exit(1)
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
# SPDX-License-Identifier: MIT
