"""What the file cases (case_files_*.py) share: a device node of their own that stands in
for /dev/null (a case that fails then replaces its node, never the machine's), a symlink
of their own to /proc/self/fd/1 that stands in for /dev/stdout, a FIFO read without
blocking, and the temporaries fnprof must never leave behind."""

import os
import stat
import threading
import time

from hostile import Failure, expect, fnprof_lines, need_root

OUTPUT = b"files_work: done\n"  # what progs/files_work.c prints
STATUS = 3  # and its exit status, unless told otherwise


def null_device(ctx, name="null"):
    """A character device 1,3 (what /dev/null is) in the scratch folder."""
    need_root("a device node of its own (mknod)")
    path = ctx.path(name)
    os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    return path


def lstat(path):
    try:
        return os.lstat(path)
    except FileNotFoundError:
        raise Failure("%s is gone" % path)


def expect_device(path):
    st = lstat(path)
    expect(stat.S_ISCHR(st.st_mode) and st.st_rdev == os.makedev(1, 3),
           "%s is no longer the character device 1,3: mode %o, rdev %x"
           % (path, st.st_mode, st.st_rdev))


def expect_fifo(path):
    st = lstat(path)
    expect(stat.S_ISFIFO(st.st_mode), "%s is no longer a FIFO: mode %o" % (path, st.st_mode))


def stdout_link(ctx, name="stdout"):
    """What /dev/stdout is: a symlink to /proc/self/fd/1."""
    path = ctx.path(name)
    os.symlink("/proc/self/fd/1", path)
    return path


def expect_link(path, target):
    expect(os.path.islink(path) and os.readlink(path) == target,
           "%s is no longer a symlink to %s" % (path, target))


def leftovers(folder):
    """Names fnprof's temporaries have had: NAME.fnprof-XXXXXX, NAME.raw.tmp-PID."""
    return sorted(n for n in os.listdir(folder) if ".fnprof-" in n or ".tmp-" in n)


def expect_no_temporary(folder):
    left = leftovers(folder)
    expect(not left, "temporary files left in %s: %s" % (folder, left))


def expect_unharmed(p, status=STATUS, output=OUTPUT):
    """The program's own output and exit status, as without fnprof."""
    expect(p.returncode == status,
           "exit status %d, not %d: %s" % (p.returncode, status, p.stderr.decode(errors="replace")))
    expect(p.stdout == output, "the program's output changed: %r" % p.stdout[:200])


def errors(stderr):
    """fnprof's lines other than its 'wrote ...' notes."""
    return [ln for ln in fnprof_lines(stderr) if not ln.startswith("fnprof: wrote ")]


def expect_one_line(stderr, words):
    lines = errors(stderr)
    expect(len(lines) == 1 and words in lines[0],
           "expected one line saying %r on stderr, got %r" % (words, lines))


def expect_quiet(stderr):
    lines = errors(stderr)
    expect(not lines, "unexpected lines on stderr: %r" % lines)


class Checks:
    """Runs each part of a case even when one fails, so that a failure lists every part
    that failed (the proof that each failed before the fix), then fails once."""

    def __init__(self):
        self.failed = []

    def part(self, name, fn, *args):
        try:
            fn(*args)
            print("ok: %s" % name, flush=True)
        except Failure as e:
            print("FAILED: %s: %s" % (name, e), flush=True)
            self.failed.append(name)

    def done(self):
        if self.failed:
            raise Failure("%d part(s) failed: %s" % (len(self.failed), "; ".join(self.failed)))


class FifoReader:
    """A FIFO with a reader: the read end is open (non-blocking, so that it is open before
    the writer comes) and read by a thread as bytes arrive; take() once the writer is done
    returns them all."""

    def __init__(self, path):
        self.fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        self.data = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._read)
        self.thread.start()

    def _read(self):
        while True:
            try:
                chunk = os.read(self.fd, 65536)
            except BlockingIOError:
                chunk = b""
            if chunk:
                self.data.append(chunk)
            elif self.stop.is_set():
                return  # the writer is gone: what it wrote has been read
            else:
                time.sleep(0.005)

    def take(self):
        self.stop.set()
        self.thread.join()
        os.close(self.fd)
        return b"".join(self.data)
# SPDX-License-Identifier: MIT
