# SPDX-License-Identifier: MIT
"""fnprof for Python: Python and the native code it calls in one exact profile.

Profile is cProfile.Profile's interface (pstats.Stats(prof) works); region, step, pause,
resume, reset, dump and add_metadata are fnprof.h's C API. The functions of a Python
program are keyed as cProfile keys them, builtins too; the native functions of extensions
built with -finstrument-functions nest under the Python calls that reached them when
libfnprof.so is preloaded (python3 -m fnprof arranges that). See docs/python.md.
"""

import marshal
import os
import sys
import tempfile
import threading


def _command_parent():
    """Whether this is python3 -m fnprof's own process, which re-runs the program in a
    child (fnprof/__main__.py) and must record nothing itself."""
    argv = getattr(sys, "orig_argv", [])
    return "_FNPROF_PYTHON_CHILD" not in os.environ and \
        any(a == "-m" and b == "fnprof" for a, b in zip(argv, argv[1:]))


# _fnprof loads libfnprof.so, whose start reads PROF_*: in the command's own process they
# are the child's (PROF_MEMORY would track this process's allocations and say it cannot
# see them all), so the library loads without them.
if _command_parent():
    _hidden = {k: os.environ.pop(k) for k in list(os.environ) if k.startswith("PROF_")}
    try:
        from . import _fnprof
    finally:
        os.environ.update(_hidden)
        del _hidden
else:
    from . import _fnprof

__all__ = ["Profile", "region", "step", "pause", "resume", "reset", "dump", "add_metadata",
           "run", "runctx"]

#: fnprof.region(name): a named region, as a context manager (keyed by the line that
#: opens it) or a decorator; recorded like FNPROF_REGION in C.
region = _fnprof.region
step = _fnprof.step
pause = _fnprof.pause
resume = _fnprof.resume
reset = _fnprof.reset
add_metadata = _fnprof.add_metadata


def dump(path=None):
    """Writes the profile recorded so far (every thread, native calls included) to path,
    or to PROF_OUTPUT's path when None; recording goes on."""
    _fnprof.dump(None if path is None else os.fspath(path))


# A child of multiprocessing's fork start method ends with os._exit, which writes nothing
# (docs/processes.md: no code of the process runs); its bootstrap runs the after-fork
# callbacks of multiprocessing.util, then, when the target returns, the finalizers.
# The last finalizer writes the child's profile where its exit would have: PROF_OUTPUT.<pid>.
# A child of os.fork itself exits through the runtime's exit as a C program's does.
def _forked_child():
    util = sys.modules.get("multiprocessing.util")
    if util is not None and os.environ.get("PROF_OUTPUT"):
        util.register_after_fork(_forked_child, _multiprocessing_child)


def _multiprocessing_child(_):
    sys.modules["multiprocessing.util"].Finalize(None, _write_child, exitpriority=-(1 << 30))


def _write_child():
    try:
        _fnprof.dump(None)
    except (OSError, RuntimeError) as exc:
        print("fnprof: the multiprocessing child's profile: %s" % exc, file=sys.stderr)


os.register_at_fork(after_in_child=_forked_child)


# threading.setprofile outside the hooks' time, so that it is no call of the profile.
def _enable():
    if sys.version_info < (3, 12):
        threading.setprofile(_fnprof.thread_hook)
    _fnprof.enable()


def _disable():
    _fnprof.disable()
    if sys.version_info < (3, 12):
        threading.setprofile(None)


class Profile:
    """cProfile.Profile's interface over fnprof's one profile of the process.

    Unlike cProfile, every thread is profiled (started before or after enable), and the
    stats are the process's: what was recorded since recording began (or since reset()),
    native calls included. One Profile is enabled at a time.
    """

    def __init__(self, timer=None, timeunit=0.0, subcalls=True, builtins=True):
        if timer is not None:
            raise ValueError("fnprof.Profile: fnprof keeps its own clock (PROF_TIMER)")
        self.stats = {}

    def enable(self, subcalls=True, builtins=True):
        if _fnprof.is_enabled():
            raise ValueError("Another profiling tool is already active")
        _enable()

    def disable(self):
        _disable()

    def create_stats(self):
        self.disable()
        self.snapshot_stats()

    def snapshot_stats(self):
        fd, path = tempfile.mkstemp(prefix="fnprof-", suffix=".prof")
        os.close(fd)
        try:
            _fnprof.dump(path)
            with open(path, "rb") as f:
                self.stats = marshal.load(f)
        finally:
            os.unlink(path)

    def dump_stats(self, file):
        """Writes fnprof's profile (pstats, with its tree) to file."""
        self.disable()
        _fnprof.dump(os.fspath(file))

    def print_stats(self, sort=-1):
        import pstats
        if not isinstance(sort, tuple):
            sort = (sort,)
        pstats.Stats(self).strip_dirs().sort_stats(*sort).print_stats()

    def run(self, cmd):
        import __main__
        return self.runctx(cmd, __main__.__dict__, __main__.__dict__)

    def runctx(self, cmd, globals, locals):
        self.enable()
        try:
            exec(cmd, globals, locals)
        finally:
            self.disable()
        return self

    def runcall(self, func, /, *args, **kw):
        self.enable()
        try:
            return func(*args, **kw)
        finally:
            self.disable()

    def __enter__(self):
        self.enable()
        return self

    def __exit__(self, *exc_info):
        self.disable()


def run(statement, filename=None, sort=-1):
    """As cProfile.run."""
    import __main__
    return runctx(statement, __main__.__dict__, __main__.__dict__, filename, sort)


def runctx(statement, globals, locals, filename=None, sort=-1):
    """As cProfile.runctx."""
    prof = Profile()
    try:
        prof.runctx(statement, globals, locals)
    except SystemExit:
        pass
    finally:
        if filename is not None:
            prof.dump_stats(filename)
        else:
            prof.print_stats(sort)
