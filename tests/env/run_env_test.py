#!/usr/bin/env python3
"""End-to-end checks of what PROF_OUTPUT and friends do, on a program that chdirs and
calls exit() deep in its stack (exit_deep.c). Each check names what a wrong runtime gets
wrong; the first failure exits 1 with a message."""
import argparse
import os
import pstats
import resource
import shutil
import signal
import subprocess
import sys
import tempfile

ap = argparse.ArgumentParser()
ap.add_argument("--prog", required=True, help="exit_deep built with -finstrument-functions")
ap.add_argument("--lib", required=True, help="libfnprof.so")
ap.add_argument("--linked", required=True, help="exit_deep linked with -lfnprof (absolute rpath)")
args = ap.parse_args()


def run(env_extra, cwd, prog=None, preexec=None, preload=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROF_")}
    if prog is None if preload is None else preload:
        env["LD_PRELOAD"] = args.lib
    env.update(env_extra)
    return subprocess.run([prog or args.prog], cwd=cwd, env=env, capture_output=True,
                          text=True, preexec_fn=preexec)


def file_limit(size):
    """preexec_fn: files at most size bytes, and SIGXFSZ ignored so that a bigger write
    fails with EFBIG (a full disk, simulated)."""
    def setup():
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    return setup


def as_nobody():
    os.setgroups([])
    os.setgid(65534)
    os.setuid(65534)


def unwritable(what, r, path, cause, d, before, good=None):
    """One fnprof line naming path and cause, the exit status kept, nothing left behind,
    and a good file already at path untouched."""
    lines = r.stderr.splitlines()
    if r.returncode != 3 or len(lines) != 1 or not lines[0].startswith("fnprof: ") \
            or path not in lines[0] or cause not in lines[0]:
        fail(f"{what}: want one line naming {path} and {cause!r}", r)
    if set(os.listdir(d)) != before:
        fail(f"{what}: files left behind: {set(os.listdir(d)) ^ before}")
    if good is not None and open(path, "rb").read() != good:
        fail(f"{what}: the good profile at {path} was replaced")


def fail(msg, r=None):
    if r is not None:
        msg += f"\n  exit {r.returncode}\n  stdout {r.stdout!r}\n  stderr {r.stderr!r}"
    sys.exit("FAIL: " + msg)


def by_name(path):
    return {k[2]: v for k, v in pstats.Stats(path).stats.items()}


with tempfile.TemporaryDirectory() as d:
    # Relative path, taken against the start directory although the program chdirs.
    os.makedirs(f"{d}/rel")
    r = run({"PROF_OUTPUT": "rel/out.prof"}, d)
    if r.returncode != 3:
        fail("exit status changed", r)
    f = by_name(f"{d}/rel/out.prof")
    if f["work"][:2] != (1, 5) or f["main"][:2] != (1, 1) or f["leave_now"][:2] != (1, 1):
        fail(f"open calls at exit() not counted: {f}")
    if not (f["main"][3] >= f["work"][3] >= f["leave_now"][3] > 0):
        fail(f"open calls' times not nested: {f}")
    lines = r.stderr.splitlines()
    if len(lines) != 1 or not lines[0].startswith("fnprof: wrote "):
        fail("expected exactly one 'fnprof: wrote' line", r)

    # PROF_QUIET=1: nothing on stderr; %p: the pid; %% a percent sign.
    r = run({"PROF_OUTPUT": f"{d}/p%p%%.prof", "PROF_QUIET": "1"}, d)
    pid = r.stdout.split()[1]
    if r.stderr or not os.path.exists(f"{d}/p{pid}%.prof"):
        fail("PROF_QUIET or %p expansion", r)

    # Unwritable: a missing directory. One line naming the path and the cause; status kept;
    # nothing else created.
    before = set(os.listdir(d))
    r = run({"PROF_OUTPUT": f"{d}/missing/out.prof"}, d)
    lines = r.stderr.splitlines()
    if r.returncode != 3 or len(lines) != 1 or not lines[0].startswith("fnprof: ") \
            or "missing/out.prof" not in lines[0] or "No such file" not in lines[0]:
        fail("unwritable PROF_OUTPUT", r)
    if set(os.listdir(d)) != before:
        fail("files left behind by a failed write")

    # A directory that is a regular file: the cause is named.
    open(f"{d}/afile", "w").close()
    r = run({"PROF_OUTPUT": f"{d}/afile/out.prof"}, d)
    if r.returncode != 3 or "Not a directory" not in r.stderr:
        fail("PROF_OUTPUT under a file", r)

    # A full disk, simulated by a file-size limit: the good profile already there stays.
    good_path = f"{d}/rel/out.prof"
    good = open(good_path, "rb").read()
    before = set(os.listdir(f"{d}/rel"))
    r = run({"PROF_OUTPUT": good_path}, d, preexec=file_limit(64))
    unwritable("write error (file size limit)", r, good_path, "File too large", f"{d}/rel",
               before, good)

    # Unset or empty: inert, silent, no file.
    for env in ({}, {"PROF_OUTPUT": ""}):
        before = set(os.listdir(d))
        r = run(env, d)
        if r.returncode != 3 or r.stderr or set(os.listdir(d)) != before:
            fail(f"inert run with {env} was not silent", r)

    # PROF_DEBUG_DIR: a stripped copy names its functions from DWARF only when the debug
    # file is found, under <dir>/.build-id/xx/rest.debug.
    sdir = f"{d}/stripped"
    os.makedirs(sdir)
    note = subprocess.run(["readelf", "-n", args.prog], capture_output=True, text=True).stdout
    build_id = note.split("Build ID: ")[1].split()[0]
    dbg = f"{d}/debugroot/.build-id/{build_id[:2]}/{build_id[2:]}.debug"
    os.makedirs(os.path.dirname(dbg))
    subprocess.run(["objcopy", "--only-keep-debug", args.prog, dbg], check=True)
    bare = f"{sdir}/exit_deep"
    subprocess.run(["objcopy", "--strip-all", args.prog, bare], check=True)
    for env, want_dwarf in (({}, False), ({"PROF_DEBUG_DIR": f"{d}/debugroot"}, True)):
        env["PROF_OUTPUT"] = f"{sdir}/out.prof"
        r = run(env, d, bare, preload=True)
        work = [k for k in pstats.Stats(f"{sdir}/out.prof").stats if k[2] == "work"]
        if want_dwarf != (len(work) == 1 and work[0][0].endswith("exit_deep.c")):
            fail(f"stripped binary with {env}: want DWARF names {want_dwarf}, keys "
                 f"{list(pstats.Stats(f'{sdir}/out.prof').stats)}", r)

    # The rest needs root (CI runs as root): without it the test says so and is skipped.
    if os.geteuid() != 0:
        print("SKIP: the full-disk, read-only and setuid checks need root")
        sys.exit(77)

    # A real full disk: a 16 kB tmpfs.
    mnt = f"{d}/tiny"
    os.makedirs(mnt)
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", mnt],
                      capture_output=True).returncode != 0:
        fail("running as root, yet a 16 kB tmpfs cannot be mounted")
    try:
        with open(f"{mnt}/filler", "wb") as f:
            try:
                f.write(b"x" * 65536)
            except OSError:
                pass
        r = run({"PROF_OUTPUT": f"{mnt}/out.prof"}, d)
        unwritable("full tmpfs", r, f"{mnt}/out.prof", "No space left", mnt, {"filler"})
        subprocess.run(["mount", "-o", "remount,ro", mnt], check=True)
        r = run({"PROF_OUTPUT": f"{mnt}/out.prof"}, d)
        unwritable("read-only file system", r, f"{mnt}/out.prof", "Read-only file system", mnt,
                   {"filler"})
    finally:
        subprocess.run(["umount", mnt])

    # setuid: a setuid-root program run by another user ignores PROF_OUTPUT (secure_getenv);
    # the same program without the bit, run by that user, writes it (so the check can fail).
    sdir = f"{d}/suid"
    os.makedirs(sdir)
    os.chmod(d, 0o755)
    os.chmod(sdir, 0o777)
    prog = f"{sdir}/exit_deep"
    shutil.copy(args.linked, prog)
    os.chmod(prog, 0o755)
    r = run({"PROF_OUTPUT": f"{sdir}/plain.prof"}, sdir, prog, as_nobody)
    if r.returncode != 3 or not os.path.exists(f"{sdir}/plain.prof"):
        fail("the linked program run by nobody wrote no profile: the setuid check tests nothing", r)
    os.chmod(prog, 0o4755)
    r = run({"PROF_OUTPUT": f"{sdir}/suid.prof"}, sdir, prog, as_nobody)
    if r.returncode != 3 or r.stderr or os.path.exists(f"{sdir}/suid.prof"):
        fail("a setuid program honoured PROF_OUTPUT", r)

print("env checks passed")
# SPDX-License-Identifier: MIT
