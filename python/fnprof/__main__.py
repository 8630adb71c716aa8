# SPDX-License-Identifier: MIT
"""python3 -m fnprof [-o OUT] [-s SORT] [-m module | script.py] [args]: cProfile's command.

The program runs in a child python3 with libfnprof.so preloaded, so that the native
functions of extensions built with -finstrument-functions (linked with libfnprof or not)
reach fnprof's hooks, and with PROF_OUTPUT set, so that the runtime records them and writes
the profile when the program exits: to OUT with -o (pstats with fnprof's tree, which every
fnprof command reads), else to a temporary file that this process prints as cProfile
prints its report. The exit status, and a death by signal, are the program's.
"""

import importlib.machinery
import io
import os
import runpy
import shutil
import signal
import subprocess
import sys
import tempfile
from optparse import OptionParser

# Set in the child's environment by the parent, and taken out of it by the child.
CHILD = "_FNPROF_PYTHON_CHILD"


def _parser():
    import pstats
    usage = "python3 -m fnprof [-o output_file_path] [-s sort] [-m module | scriptfile] [arg] ..."
    parser = OptionParser(usage=usage)
    parser.allow_interspersed_args = False
    parser.add_option("-o", "--outfile", dest="outfile",
                      help="Save stats to <outfile>", default=None)
    parser.add_option("-s", "--sort", dest="sort",
                      help="Sort order when printing to stdout, based on pstats.Stats class",
                      default=2, choices=sorted(pstats.Stats.sort_arg_dict_default))
    parser.add_option("-m", dest="module", action="store_true",
                      help="Profile a library module", default=False)
    return parser


def _code_and_globals(options, args):
    """What cProfile's main() runs, and in which globals (sys.argv and sys.path too)."""
    sys.argv[:] = args
    if options.module:
        code = "run_module(modname, run_name='__main__')"
        return code, {"run_module": runpy.run_module, "modname": args[0]}
    progname = args[0]
    sys.path.insert(0, os.path.dirname(progname))
    with io.open_code(progname) as fp:
        code = compile(fp.read(), progname, "exec")
    spec = importlib.machinery.ModuleSpec(name="__main__", loader=None, origin=progname)
    return code, {"__spec__": spec, "__file__": spec.origin, "__name__": spec.name,
                  "__package__": None, "__cached__": None}


def _run_child(options, args):
    """In the child: run the program with the hooks on until the process exits; the
    runtime writes PROF_OUTPUT then (threads and atexit handlers included)."""
    import fnprof
    try:
        code, globs = _code_and_globals(options, args)
    except BaseException:
        # A missing script or a syntax error: the traceback, as cProfile's, and no profile
        # (the runtime would add that no call was recorded, which misleads).
        sys.excepthook(*sys.exc_info())
        sys.stderr.flush()
        os._exit(1)
    fnprof._enable()
    try:
        exec(code, globs, None)
    except BrokenPipeError as exc:
        sys.stdout = None
        sys.exit(exc.errno)
    except KeyboardInterrupt:
        # Python ends on it by raising SIGINT again with the default action, which would
        # end the process before the runtime writes: the profile is written here, as
        # cProfile prints its report, and the program then dies as it would.
        fnprof._disable()
        fnprof.dump()
        raise


def _run_here(options, args):
    """libfnprof.so cannot be preloaded (or already is): profile in this process, as
    cProfile does."""
    import fnprof
    code, globs = _code_and_globals(options, args)
    prof = fnprof.Profile()
    try:
        try:
            prof.runctx(code, globs, None)
        finally:
            if options.outfile is not None:
                prof.dump_stats(options.outfile)
            else:
                prof.print_stats(options.sort)
    except BrokenPipeError as exc:
        sys.stdout = None
        sys.exit(exc.errno)


def _call(child, env):
    """Runs the child to its end and returns its status. The terminal's ^C reaches it
    directly: this process ignores it with a handler of its own, which exec resets, so that
    the child starts with SIGINT as this process did (a SIG_IGN inherited would leave the
    program deaf to ^C). A SIGTERM sent to this process alone (kill PID) goes on to the
    child, which would otherwise run on, orphaned."""
    handlers = {}
    with subprocess.Popen(child, env=env) as proc:
        def forward(signum, frame):
            proc.send_signal(signum)
        try:
            if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
                handlers[signal.SIGINT] = signal.signal(signal.SIGINT, lambda s, f: None)
            if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
                handlers[signal.SIGTERM] = signal.signal(signal.SIGTERM, forward)
            return proc.wait()
        finally:
            for signum, old in handlers.items():
                signal.signal(signum, old)


def _exit_as(status):
    """Ends this process as the child ended: its status, or its signal."""
    if status < 0:
        sys.stdout.flush()
        signal.signal(-status, signal.SIG_DFL)
        os.kill(os.getpid(), -status)
    sys.exit(status if status >= 0 else 128 - status)


def main():
    parser = _parser()
    if not sys.argv[1:]:
        parser.print_usage()
        sys.exit(2)
    options, args = parser.parse_args()
    if not args:
        parser.print_usage()
        return parser
    if options.outfile is not None:
        options.outfile = os.path.abspath(options.outfile)

    if os.environ.pop(CHILD, None) is not None:
        return _run_child(options, args)

    from . import _fnprof
    lib = _fnprof.library()
    preloaded = "libfnprof" in os.environ.get("LD_PRELOAD", "")
    if not lib or preloaded or any(c in lib for c in " :"):
        return _run_here(options, args)

    env = dict(os.environ)
    env["LD_PRELOAD"] = lib + (":" + env["LD_PRELOAD"] if env.get("LD_PRELOAD") else "")
    env[CHILD] = "1"
    child = [sys.executable, "-m", "fnprof"] + sys.argv[1:]
    if options.outfile is not None:
        env["PROF_OUTPUT"] = options.outfile
        sys.stdout.flush()
        sys.stderr.flush()
        os.execve(sys.executable, child, env)

    tmp = tempfile.mkdtemp(prefix="fnprof-")
    try:
        out = os.path.join(tmp, "out.prof")
        env["PROF_OUTPUT"] = out
        env["PROF_QUIET"] = "1"
        status = _call(child, env)
        if os.path.exists(out):
            import pstats
            sort = options.sort if isinstance(options.sort, tuple) else (options.sort,)
            try:
                stats = pstats.Stats(out)
                stats.files = []  # cProfile's report names no file (this one is temporary)
                stats.strip_dirs().sort_stats(*sort).print_stats()
            except BrokenPipeError as exc:
                sys.stdout = None
                sys.exit(exc.errno)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    _exit_as(status)


if __name__ == "__main__":
    main()
