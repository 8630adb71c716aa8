"""Shared helpers of the hostile suite (tests/hostile/README.md): one case script each,
named case_<what>.py, registered by tests/hostile.cmake as the ctest hostile.<what>.

A case script is run as

    case_x.py --lib-dir build/lib --bin-dir build/bin --source-root . --workdir /tmp/x

and exits 0 (pass), 1 (fail: fnprof harmed its host or lost a profile), 2 (broken set-up),
77 (skipped, with the reason on stdout: e.g. a case that needs root run as a user).
python3 standard library only.
"""

import argparse
import os
import shlex
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "e2e"))
sys.dont_write_bytecode = True

from run_case import clean_env  # noqa: E402  (e2e: an environment without PROF_ and friends)

PROGS = os.path.join(HERE, "progs")
SKIP = 77
TIMEOUT = 120


class Failure(Exception):
    """fnprof harmed the host or lost a profile: the message says how."""


class Skip(Exception):
    """The case cannot run here: the message says why."""


class Context:
    """What a case needs: where fnprof's libraries and command are, a scratch folder."""

    def __init__(self, args):
        self.lib_dir = os.path.abspath(args.lib_dir)
        self.bin_dir = os.path.abspath(args.bin_dir)
        self.source_root = os.path.abspath(args.source_root)
        self.workdir = os.path.abspath(args.workdir)
        self.fnprof = os.path.join(self.bin_dir, "fnprof")
        self.libfnprof = os.path.join(self.lib_dir, "libfnprof.so")
        shutil.rmtree(self.workdir, ignore_errors=True)
        os.makedirs(self.workdir)

    def path(self, *parts):
        return os.path.join(self.workdir, *parts)

    def build(self, prog, out=None, cc="gcc", opt="-O0", extra=(), fnprof=True):
        """Compiles progs/<prog> (or an absolute source path) with -finstrument-functions and
        links -lfnprof with an rpath (fnprof=False: a plain build). Returns the binary."""
        src = prog if os.path.isabs(prog) else os.path.join(PROGS, prog)
        out = out or self.path(os.path.splitext(os.path.basename(prog))[0])
        cmd = [cc, "-g", opt, "-I", os.path.join(self.source_root, "include")]
        if fnprof:
            cmd += ["-finstrument-functions"]
        cmd += [src, "-o", out] + list(extra) + ["-pthread"]
        if fnprof:
            cmd += ["-L", self.lib_dir, "-Wl,-rpath," + self.lib_dir, "-lfnprof"]
        show(cmd)
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if p.returncode != 0:
            print(p.stdout)
            raise RuntimeError("cannot build %s" % prog)
        return out

    def run(self, cmd, env_extra=None, timeout=TIMEOUT, check_hang=True, **kw):
        """Runs cmd in the scratch folder with a clean environment plus env_extra.
        Returns the CompletedProcess (bytes). A run past timeout is a Failure: a hang."""
        env = clean_env()
        env.update(env_extra or {})
        show(cmd, env_extra)
        kw.setdefault("stdout", subprocess.PIPE)
        kw.setdefault("stderr", subprocess.PIPE)
        kw.setdefault("stdin", subprocess.DEVNULL)
        kw.setdefault("cwd", self.workdir)
        try:
            return subprocess.run(cmd, env=env, timeout=timeout, **kw)
        except subprocess.TimeoutExpired:
            raise Failure("%s: still running after %d s (a hang)" % (cmd[0], timeout))


def show(cmd, env_extra=None):
    text = " ".join(shlex.quote(c) for c in cmd)
    if env_extra:
        text = " ".join("%s=%s" % (k, shlex.quote(v)) for k, v in env_extra.items()) + " " + text
    print("$ " + text, flush=True)


def need_root(what):
    """Skips the case unless run as root (CI runs as root)."""
    if os.geteuid() != 0:
        raise Skip("%s needs root (run as uid %d)" % (what, os.geteuid()))


def expect(cond, message):
    if not cond:
        raise Failure(message)


def fnprof_lines(stderr):
    """The lines fnprof wrote to stderr (bytes or str), as str."""
    if isinstance(stderr, bytes):
        stderr = stderr.decode("utf-8", "replace")
    return [ln for ln in stderr.splitlines() if ln.startswith("fnprof:")]


def main(case):
    """Runs case(ctx) with the command line's arguments; maps its outcome to an exit status."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib-dir", required=True)
    ap.add_argument("--bin-dir", required=True)
    ap.add_argument("--source-root", required=True)
    ap.add_argument("--workdir", required=True)
    args = ap.parse_args()
    try:
        case(Context(args))
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
# SPDX-License-Identifier: MIT
