#!/usr/bin/env python3
"""The live controls (tests/live/README.md): PROF_TOGGLE_SIGNAL and fnprof record --pid.
One case a run, the ctest live.<case>[.<variant>]:

    run_live.py --case toggle --cc gcc --opt=-O2 --lib-dir build/lib --bin-dir build/bin \\
                --source-root . --workdir /tmp/live

Each case builds a program of progs/ with -finstrument-functions linked to the build's
libfnprof, runs it, and checks what must hold: exact call counts where the program makes
them known, one `fnprof:` line where a setting is refused, fnprof record's exit status and
its one line. Exit 0 pass, 1 fail, 2 broken set-up, 77 skipped. python3 standard library
only.
"""

import argparse
import glob
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "e2e"))
sys.dont_write_bytecode = True

sys.path.insert(0, os.path.join(os.path.dirname(HERE), "robust"))

import compare  # noqa: E402  (e2e: load_pstats, check_invariants)
import run_robust  # noqa: E402  (robust: the sanitizer builds of the runtime, their probe)
from run_case import clean_env  # noqa: E402  (e2e: an environment without PROF_ and friends)

PROGS = os.path.join(HERE, "progs")
SKIP = 77
TIMEOUT = 120
ARMED = {"PROF_TOGGLE_SIGNAL": "USR1", "PROF_DUMP_SIGNAL": "USR2"}


class Failure(Exception):
    """fnprof got something wrong: the message says what."""


class Skip(Exception):
    """The case cannot run here: the message says why."""


def show(cmd, env_extra=None):
    text = " ".join(shlex.quote(c) for c in cmd)
    if env_extra:
        text = " ".join("%s=%s" % (k, shlex.quote(v)) for k, v in env_extra.items()) + " " + text
    print("$ " + text, flush=True)


def expect(cond, message):
    if not cond:
        raise Failure(message)


def fnprof_lines(text):
    return [ln for ln in text.splitlines() if ln.startswith("fnprof:")]


class Ctx:
    def __init__(self, args):
        self.args = args
        self.workdir = os.path.abspath(args.workdir)
        self.lib_dir = os.path.abspath(args.lib_dir)
        self.fnprof = os.path.join(os.path.abspath(args.bin_dir), "fnprof")
        shutil.rmtree(self.workdir, ignore_errors=True)
        os.makedirs(self.workdir)
        # --mode tsan, asan: the program and the runtime's sources (compiled by the robust
        # suite's fixture into --runtime-objs) under the sanitizer; any report fails the run.
        self.prefix, self.objs, self.san_env = [], [], {}
        if args.mode != "link":
            try:
                self.prefix = run_robust.sanitizer_prefix(args.cc, args.mode, self.workdir)
            except run_robust.Skip as e:
                raise Skip(str(e))
            self.objs = sorted(glob.glob(os.path.join(os.path.abspath(args.runtime_objs), "*.o")))
            if not self.objs:
                raise RuntimeError("no runtime objects in %s: run the fixture e2e.robust."
                                   "runtime.%s first" % (args.runtime_objs, args.mode))
            self.san_env = run_robust.SAN_OPTIONS[args.mode]

    def path(self, *parts):
        return os.path.join(self.workdir, *parts)

    def build(self, prog):
        out = self.path(prog)
        cmd = [self.args.cc, "-g", self.args.opt, "-finstrument-functions",
               "-I", os.path.join(self.args.source_root, "include"), "-I", PROGS,
               os.path.join(PROGS, prog + ".c"), "-o", out, "-pthread"]
        if self.objs:
            cmd += ["-fsanitize=" + run_robust.SAN_FLAG[self.args.mode],
                    "-fno-omit-frame-pointer"] + self.objs
            cmd += ["-ldwarf", "-lelf", "-lz", "-lstdc++", "-ldl"]
        else:
            cmd += ["-L", self.lib_dir, "-Wl,-rpath," + self.lib_dir, "-lfnprof"]
        show(cmd)
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if p.returncode != 0:
            print(p.stdout)
            raise RuntimeError("cannot build %s" % prog)
        return out

    def env(self, extra):
        env = clean_env()
        env.update(self.san_env)
        env.update(extra or {})
        return env

    def program(self, cmd):
        """cmd, a test program's, as it must start here (setarch -R for TSan on some
        kernels)."""
        return self.prefix + cmd

    def run(self, cmd, env_extra=None, timeout=TIMEOUT, **kw):
        show(cmd, env_extra)
        try:
            return subprocess.run(cmd, env=self.env(env_extra), cwd=self.workdir, text=True,
                                  stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, timeout=timeout, **kw)
        except subprocess.TimeoutExpired:
            raise Failure("%s: still running after %d s (a hang)" % (cmd[0], timeout))

    def start(self, cmd, env_extra=None, stderr_path=None):
        show(cmd, env_extra)
        err = open(stderr_path, "w") if stderr_path else subprocess.DEVNULL
        return subprocess.Popen(cmd, env=self.env(env_extra), cwd=self.workdir, text=True,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err)

    def record(self, pid, out, seconds="0.5", extra=(), **kw):
        return self.run([self.fnprof, "record", "--pid", str(pid), "--seconds", seconds,
                         "-o", out] + list(extra), **kw)


def load(path, what):
    stats, problems = compare.load_pstats(path)
    expect(stats is not None, "%s: %s" % (what, "; ".join(problems)))
    problems += compare.check_invariants(stats)
    expect(not problems, "%s: %s" % (what, "; ".join(problems)))
    return stats


def ncalls(stats):
    """{function name: ncalls} (the synthetic root left out)."""
    return {k[2]: v[1] for k, v in stats.items() if k[0] != "~"}


def expect_calls(stats, want, what, others_absent=True, prefixes=()):
    """want: {name: ncalls}; names under prefixes and not in want must be absent."""
    got = ncalls(stats)
    for name, n in want.items():
        expect(got.get(name) == n, "%s: %s has %s calls, want %d (all: %s)"
               % (what, name, got.get(name), n, sorted(got.items())))
    if others_absent:
        extra = [n for n in got if n not in want and n.startswith(prefixes)]
        expect(not extra, "%s: recorded %s, which ran while paused" % (what, extra))


# ---- PROF_TOGGLE_SIGNAL ----------------------------------------------------------------

def phases(ctx, env_extra, arg, want_parent, want_child, lines=()):
    exe = ctx.build("toggle_phases")
    plain = ctx.run(ctx.program([exe, "0"]))  # unprofiled: the output the program has without fnprof
    expect(plain.returncode == 0 and not plain.stderr, "the program without PROF_OUTPUT: "
           "status %d, stderr %r" % (plain.returncode, plain.stderr))
    out = ctx.path("out.prof")
    for f in glob.glob(out + "*"):
        os.unlink(f)
    env = dict(env_extra, PROF_OUTPUT=out, PROF_START="paused")
    p = ctx.run(ctx.program([exe, arg]), env)
    expect(p.returncode == 0, "status %d: %s%s" % (p.returncode, p.stdout, p.stderr))
    expect(p.stdout == plain.stdout, "stdout %r, without fnprof %r" % (p.stdout, plain.stdout))
    got = [ln for ln in fnprof_lines(p.stderr) if not ln.startswith("fnprof: wrote")]
    expect(got == list(lines), "stderr's fnprof lines %s, want %s" % (got, list(lines)))
    prefixes = ("leaf_", "phase_")
    expect_calls(load(out, "parent"), want_parent, "parent", prefixes=prefixes)
    children = [f for f in glob.glob(out + ".*") if f.rsplit(".", 1)[1].isdigit()]
    if want_child is None:
        return
    expect(len(children) == 1, "child profiles %s, want one" % children)
    expect_calls(load(children[0], "child"), want_child, "child", prefixes=prefixes)


def both(**calls):
    out = {}
    for x, n in calls.items():
        out["phase_" + x] = 1
        out["leaf_" + x] = n
    return out


PARENT = both(b=2000, d=4000, g=7000, k=1100)
CHILD = both(h=800, j=1000)


def case_toggle(ctx):
    """PROF_TOGGLE_SIGNAL=USR1 (and PROF_DUMP_SIGNAL=USR2 beside it): the program toggles
    itself between phases, mixes in fnprof_resume/fnprof_pause, forks: exact counts."""
    phases(ctx, ARMED, str(int(signal.SIGUSR1)), PARENT, CHILD)


def case_toggle_names(ctx):
    """Every way to name the signal PROF_DUMP_SIGNAL takes: SIGUSR1, a number, RTMIN+2,
    without PROF_DUMP_SIGNAL."""
    rt = int(signal.SIGRTMIN) + 2
    for name, sig in (("SIGUSR1", signal.SIGUSR1), ("12", signal.SIGUSR2), ("RTMIN+2", rt)):
        phases(ctx, {"PROF_TOGGLE_SIGNAL": name}, str(int(sig)), PARENT, CHILD)


def case_toggle_refused(ctx):
    """A signal fnprof cannot take, or the dump signal's: one line, no toggle; the program
    and its other controls run as without the variable."""
    no_toggle = both(d=4000, e=5000)  # fnprof_resume before d, fnprof_pause before f
    for value in ("KILL", "NOPE", "SEGV"):
        line = ("fnprof: PROF_TOGGLE_SIGNAL=%s: not a signal fnprof can use (a name such as "
                "USR2 or RTMIN+1, or a number; not KILL, STOP or a fault); ignored" % value)
        phases(ctx, {"PROF_TOGGLE_SIGNAL": value}, "0", no_toggle, None, [line])
    line = ("fnprof: PROF_TOGGLE_SIGNAL=SIGUSR2: the signal of PROF_DUMP_SIGNAL=USR2; one "
            "signal cannot do both: the toggle is ignored")
    phases(ctx, {"PROF_TOGGLE_SIGNAL": "SIGUSR2", "PROF_DUMP_SIGNAL": "USR2"}, "0", no_toggle,
           None, [line])


def case_toggle_threads(ctx):
    """300 toggles while 4 threads call a function without a break and 4 others run rounds
    between the toggles: the rounds' calls exact, the busy calls at most those made."""
    exe = ctx.build("toggle_threads")
    out, side = ctx.path("out.prof"), ctx.path("side.txt")
    p = ctx.run(ctx.program([exe, str(int(signal.SIGUSR1)), side]), dict(ARMED, PROF_OUTPUT=out))
    expect(p.returncode == 0, "status %d: %s%s" % (p.returncode, p.stdout, p.stderr))
    words = open(side).read().split()
    recorded, busy = int(words[1]), int(words[3])
    expect(recorded == 150, "rounds recorded %d, want 150 (every other of 300)" % recorded)
    stats = load(out, "toggle_threads")
    got = ncalls(stats)
    expect(got.get("counted_leaf") == recorded * 4 * 500,
           "counted_leaf: %s calls, want %d" % (got.get("counted_leaf"), recorded * 4 * 500))
    expect(0 < got.get("busy_leaf", 0) <= busy,
           "busy_leaf: %s calls recorded of %d made" % (got.get("busy_leaf"), busy))


# ---- fnprof record --pid -----------------------------------------------------------------

def read_segments(path):
    """The server's log: [(name before, name after, handle, work)]."""
    segs = []
    for line in open(path):
        w = line.split()
        if len(w) == 6:
            segs.append((w[0], w[1], int(w[3]), int(w[5])))
    return segs


def start_server(ctx, env_extra, fork=False):
    """The server, its log and its stop file; srv.served is the pid that serves (the
    child, with fork)."""
    exe = ctx.build("server")
    log, stop = ctx.path("server.log"), ctx.path("stop")
    for f in (log, stop):
        if os.path.exists(f):
            os.unlink(f)
    srv = ctx.start(ctx.program([exe, log, stop] + (["fork"] if fork else [])), env_extra,
                    stderr_path=ctx.path("server.err"))
    for _ in range(1000):
        first = open(log).readline().split() if os.path.exists(log) else []
        if len(first) == 2 and first[0] == "ready":
            srv.served = int(first[1])
            expect((srv.served == srv.pid) != fork, "the server's pid %d, serving %d"
                   % (srv.served, srv.served))
            return srv, log, stop
        time.sleep(0.01)
    srv.kill()
    raise Failure("the server did not start")


def stop_server(srv, stop):
    open(stop, "w").close()
    try:
        out, _ = srv.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        srv.kill()
        raise Failure("the server did not stop")
    err = os.path.join(os.path.dirname(stop), "server.err")
    expect(srv.returncode == 0, "the server: status %d: %s%s"
           % (srv.returncode, out, open(err).read()[-3000:] if os.path.exists(err) else ""))
    expect(out == "served 1\n", "the server printed %r" % out)


def record_windows(ctx, paused, nrecords=2, fork=False):
    """Records the server nrecords times; checks each window against the server's count.
    fork: the server's forked child serves, and writes PROF_OUTPUT.<pid>."""
    out = ctx.path("srv.prof")
    env = dict(ARMED, PROF_OUTPUT=out)
    if paused:
        env["PROF_START"] = "paused"
    srv, log, stop = start_server(ctx, env, fork)
    if fork:
        out = "%s.%d" % (out, srv.served)
    windows = []
    try:
        for k in range(nrecords):
            w = ctx.path("w%d.prof" % k)
            p = ctx.record(srv.served, w)
            expect(p.returncode == 0, "record %d: status %d: %s" % (k, p.returncode, p.stderr))
            lines = fnprof_lines(p.stderr)
            expect(len(lines) == 1 and lines[0].startswith("fnprof: record: wrote %s: " % w),
                   "record %d: stderr %r" % (k, p.stderr))
            expect(not os.path.exists(out + ".window"), "the window's file was left behind")
            windows.append(w)
    finally:
        stop_server(srv, stop)
    segs = read_segments(log)
    # A record's requests: mark, toggle, toggle, window when it found the server paused;
    # mark, window when recording. A line's calls are those made under its name before.
    per_record = 4 if paused else 2
    expect(len(segs) == per_record * nrecords,
           "the server saw %d requests, want %d: %s" % (len(segs), per_record * nrecords, segs))
    total_h = total_w = 0
    for k, w in enumerate(windows):
        mine = segs[k * per_record:(k + 1) * per_record]
        want_h = sum(s[2] for s in mine[1:] if s[0][7] == "R")
        want_w = sum(s[3] for s in mine[1:] if s[0][7] == "R")
        states = "".join(s[1][7] for s in mine)
        expect(states == ("PRPP" if paused else "RR"),
               "record %d: states after each request %s" % (k, states))
        expect(want_h > 0, "record %d: the server handled nothing in the window" % k)
        total_h, total_w = total_h + want_h, total_w + want_w
        want = {"handle": want_h, "work": want_w}
        if not paused:
            want.update(main=1, serve=1)  # open at the mark: one call each, as after a reset
        expect_calls(load(w, "window %d" % k), want, "window %d" % k)
    final = load(out, "the server's profile at exit")
    got = ncalls(final)
    if paused:
        expect(got.get("handle") == total_h and got.get("work") == total_w,
               "at exit: handle %s work %s, want the windows' %d %d"
               % (got.get("handle"), got.get("work"), total_h, total_w))


def case_record(ctx):
    """A server started armed and paused, recorded twice: each window holds exactly the
    calls the server made in it (not the first's in the second); the server is left
    paused; its exit profile holds both windows."""
    record_windows(ctx, True)


def case_record_running(ctx):
    """A server started armed and recording: no toggle, the window from the mark on."""
    record_windows(ctx, False)


def case_record_forked(ctx):
    """The child a server forked at start, recorded twice: its windows go to its own file
    (PROF_OUTPUT.<pid>.window), which fnprof record finds."""
    record_windows(ctx, True, fork=True)


def expect_refused(p, status, text, what):
    lines = fnprof_lines(p.stderr)
    expect(p.returncode == status, "%s: status %d, want %d: %s" % (what, p.returncode, status,
                                                                  p.stderr))
    expect(len(lines) == 1 and text in lines[0] and not p.stdout,
           "%s: stderr %r, want one line with %r" % (what, p.stderr, text))


def case_record_refused(ctx):
    """Processes fnprof record cannot record, each with its one line and status 3: not
    armed (each variable), fnprof not loaded, no such process, pid 1 for another user; a
    process that dies in the window: status 1; usage: 2."""
    out = ctx.path("x.prof")
    for env, missing in (({}, "PROF_OUTPUT, PROF_TOGGLE_SIGNAL and PROF_DUMP_SIGNAL are"),
                         ({"PROF_OUTPUT": out, "PROF_DUMP_SIGNAL": "USR2"},
                          "PROF_TOGGLE_SIGNAL is"),
                         ({"PROF_OUTPUT": out, "PROF_TOGGLE_SIGNAL": "USR1"},
                          "PROF_DUMP_SIGNAL is")):
        srv, log, stop = start_server(ctx, env)
        try:
            p = ctx.record(srv.served, out)
        finally:
            stop_server(srv, stop)
        expect_refused(p, 3, "%d is not armed: %s not set in its environment" % (srv.served, missing),
                       "unarmed %s" % sorted(env))
    srv, log, stop = start_server(ctx, dict(ARMED, PROF_OUTPUT=out, PROF_TOGGLE_SIGNAL="USR2"))
    try:
        p = ctx.record(srv.served, out)
    finally:
        stop_server(srv, stop)
    expect_refused(p, 3, "PROF_TOGGLE_SIGNAL and PROF_DUMP_SIGNAL name the same signal",
                   "one signal for both")
    sleeper = ctx.start(["sleep", "60"])
    try:
        p = ctx.record(sleeper.pid, out)
    finally:
        sleeper.kill()
        sleeper.wait()
    expect_refused(p, 3, "fnprof is not loaded in %d" % sleeper.pid, "sleep")
    dead = subprocess.Popen(["true"])
    dead.wait()
    p = ctx.record(dead.pid, out)
    expect_refused(p, 3, "no process %d is running" % dead.pid, "a dead pid")
    # pid 1 as a user who does not own it: as root, run record as nobody.
    kw, uid = {}, os.geteuid()
    if uid == 0:
        kw["preexec_fn"] = lambda: (os.setgroups([]), os.setgid(65534), os.setuid(65534))
        uid = 65534
    if os.stat("/proc/1").st_uid != uid:  # not in a container whose init is ours
        p = ctx.record(1, "/tmp/fnprof-live-never.prof", **kw)
        expect_refused(p, 3, "1 is not yours to signal", "pid 1 as uid %d" % uid)
    # The process dies in the window.
    srv, log, stop = start_server(ctx, dict(ARMED, PROF_OUTPUT=out, PROF_START="paused"))
    rec = subprocess.Popen([ctx.fnprof, "record", "--pid", str(srv.served), "--seconds", "30",
                            "-o", out + ".w"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, env=ctx.env({}))
    time.sleep(1)
    srv.kill()
    srv.wait()
    _, err = rec.communicate(timeout=TIMEOUT)
    rec_p = subprocess.CompletedProcess(rec.args, rec.returncode, "", err)
    expect_refused(rec_p, 1, "%d ended during the window" % srv.served, "a process killed")
    expect(not os.path.exists(out + ".w"), "a window written for a dead process")
    p = ctx.run([ctx.fnprof, "record", "-o", out])
    expect_refused(p, 2, "no --pid", "usage")


def case_record_interrupted(ctx):
    """SIGINT ends the window early: the window is still written, status 0, and the
    process is left paused."""
    out = ctx.path("srv.prof")
    srv, log, stop = start_server(ctx, dict(ARMED, PROF_OUTPUT=out, PROF_START="paused"))
    try:
        w = ctx.path("w.prof")
        cmd = [ctx.fnprof, "record", "--pid", str(srv.served), "--seconds", "60", "-o", w]
        show(cmd)
        rec = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=ctx.env({}))
        for _ in range(1000):  # until the toggle is done: 2 requests in the log
            if len(read_segments(log)) >= 2:
                break
            time.sleep(0.01)
        time.sleep(0.3)
        rec.send_signal(signal.SIGINT)
        _, err = rec.communicate(timeout=TIMEOUT)
        expect(rec.returncode == 0, "status %d: %s" % (rec.returncode, err))
        expect("ended early" in err, "the line does not say the window ended early: %r" % err)
    finally:
        stop_server(srv, stop)
    segs = read_segments(log)
    expect("".join(s[1][7] for s in segs) == "PRPP", "states %s" % segs)
    expect_calls(load(w, "window"), {"handle": segs[2][2], "work": segs[2][3]}, "window")


CASES = {
    "toggle": case_toggle,
    "toggle_names": case_toggle_names,
    "toggle_refused": case_toggle_refused,
    "toggle_threads": case_toggle_threads,
    "record": case_record,
    "record_running": case_record_running,
    "record_forked": case_record_forked,
    "record_refused": case_record_refused,
    "record_interrupted": case_record_interrupted,
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--case", required=True, choices=sorted(CASES))
    ap.add_argument("--cc", default="gcc")
    ap.add_argument("--opt", default="-O2")
    ap.add_argument("--lib-dir", required=True)
    ap.add_argument("--bin-dir", required=True)
    ap.add_argument("--source-root", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--mode", default="link", choices=("link", "tsan", "asan"))
    ap.add_argument("--runtime-objs", default="")
    args = ap.parse_args()
    try:
        if not shutil.which(args.cc):
            raise Skip("no %s" % args.cc)
        CASES[args.case](Ctx(args))
    except Skip as e:
        print("SKIPPED: %s" % e)
        sys.exit(SKIP)
    except Failure as e:
        print("FAIL: %s" % e)
        sys.exit(1)
    except RuntimeError as e:
        print("BROKEN SET-UP: %s" % e)
        sys.exit(2)
    print("PASS")
    sys.exit(0)


if __name__ == "__main__":
    main()
# SPDX-License-Identifier: MIT
