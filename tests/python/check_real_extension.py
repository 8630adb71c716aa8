#!/usr/bin/env python3
"""A real extension nobody here wrote: markupsafe's C speedups (_speedups.c), from
Debian's sources (apt-get source markupsafe), compiled with fnprof-cc, used by
progs/use_markupsafe.py under python3 -m fnprof.

- Native side: every function of _speedups.c (and the header inlines it calls), its calls against an exact counting hook
  (progs/count_calls.c, preloaded in a second run without fnprof).
- Python side: every function of the script and of markupsafe/__init__.py, calls,
  primitive calls and calls per caller against cProfile's; a call from a native function
  counts as from the nearest frame above it that is not native (the tree's paths), as
  cProfile, which sees no native frames, names it.
- Nesting: Link.__html__, called back by the C escape, sits under the native escape.

The sources are fetched once into WORK_DIR/src. Skipped (77) when apt-get source cannot
fetch them.

usage: check_real_extension.py BUILD_DIR WORK_DIR
"""
import glob
import importlib.machinery
import marshal
import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import fnptree  # noqa: E402  pylint: disable=wrong-import-position

HERE = os.path.dirname(os.path.abspath(__file__))
PROGS = os.path.join(HERE, "progs")
BUILD = os.path.abspath(sys.argv[1])
WORK = os.path.abspath(sys.argv[2])
SKIP = 77


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def skip(msg):
    print("SKIP:", msg)
    sys.exit(SKIP)


def sources():
    """markupsafe's source tree under WORK/src: apt-get source's, or, where the mirror
    serves the upstream tarball but not Debian's packaging (a 404 seen here), the
    .orig.tar.gz apt-get fetched: the upstream sources Debian ships, unpacked as they are."""
    src = os.path.join(WORK, "src")
    os.makedirs(src, exist_ok=True)
    found = glob.glob(os.path.join(src, "*", "src", "markupsafe", "_speedups.c"))
    if found:
        return os.path.dirname(found[0])
    if not shutil.which("apt-get"):
        skip("no apt-get: cannot fetch Debian's markupsafe sources")
    r = subprocess.run(["apt-get", "source", "-qq", "markupsafe"], cwd=src,
                       capture_output=True, text=True, timeout=300)
    orig = glob.glob(os.path.join(src, "markupsafe_*.orig.tar.*"))
    if r.returncode and not orig:
        last = (r.stderr.strip().splitlines() or ["?"])[-1]
        skip("apt-get source markupsafe failed (deb-src entries? network? "
             "scripts/enable-deb-src adds them): %s" % last)
    found = glob.glob(os.path.join(src, "*", "src", "markupsafe", "_speedups.c"))
    if not found:
        with tarfile.open(orig[0]) as t:
            t.extractall(src)
        found = glob.glob(os.path.join(src, "*", "src", "markupsafe", "_speedups.c"))
    if not found:
        fail("no src/markupsafe/_speedups.c in %s" % src)
    return os.path.dirname(found[0])


def run(args, cwd, env, what):
    r = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    if r.returncode:
        fail("%s: exit %d\n%s%s" % (what, r.returncode, r.stdout, r.stderr))
    return r


def load(path):
    with open(path, "rb") as f:
        return marshal.load(f)


def main():
    pkg = sources()
    print("markupsafe sources:", pkg)
    tmp = os.path.join(WORK, "run")
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    shutil.copytree(pkg, os.path.join(tmp, "markupsafe"))
    shutil.copy(os.path.join(PROGS, "use_markupsafe.py"), tmp)
    for old in glob.glob(os.path.join(tmp, "markupsafe", "*.so")):
        os.remove(old)
    so = os.path.join(tmp, "markupsafe", "_speedups" + importlib.machinery.EXTENSION_SUFFIXES[0])
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("PROF_") and k != "LD_PRELOAD"}
    env.update(PYTHONPATH=os.path.join(BUILD, "python") + os.pathsep + tmp,
               XDG_CACHE_HOME=os.path.join(WORK, "cache"))
    cc = [os.path.join(BUILD, "bin", "fnprof-cc"), "-O2", "-g", "-fPIC", "-shared",
          "-I" + sysconfig.get_paths()["include"],
          os.path.join(tmp, "markupsafe", "_speedups.c"), "-o", so]
    run(cc, tmp, env, " ".join(cc))
    counter = os.path.join(tmp, "count_calls.so")
    run([os.environ.get("CC", "cc"), "-O2", "-fPIC", "-shared",
         os.path.join(PROGS, "count_calls.c"), "-o", counter, "-ldl"], tmp, env, "count_calls.c")

    py = sys.executable
    out = run([py, "-m", "fnprof", "-o", "f.prof", "use_markupsafe.py"], tmp, env,
              "python3 -m fnprof").stdout
    run([py, "-m", "cProfile", "-o", "c.prof", "use_markupsafe.py"], tmp, env, "cProfile")
    plain = run([py, "use_markupsafe.py"], tmp, dict(env, LD_PRELOAD=counter,
                                                     COUNT_OUTPUT=os.path.join(tmp, "counts")),
                "the counting run").stdout
    if out != plain:
        fail("the program's output changed under fnprof: %r, %r" % (out, plain))
    f, c = load(os.path.join(tmp, "f.prof")), load(os.path.join(tmp, "c.prof"))

    # native: fnprof's calls per function of _speedups.c against the counting hook's
    names = {}
    nm = run(["nm", "--defined-only", so], tmp, env, "nm").stdout
    for line in nm.splitlines():
        addr, kind, name = line.split()[:3]
        if kind in "tT":
            names[int(addr, 16)] = name
    hook = {}
    with open(os.path.join(tmp, "counts")) as fh:
        for line in fh:
            off, path, n = line.split()
            if os.path.realpath(path) == os.path.realpath(so):
                hook[names.get(int(off, 16), off)] = int(n)
    # (the extension's functions and the header inlines it calls: Py_DECREF, object.h's)
    native = {k: v for k, v in f.items() if k[0].endswith((".c", ".h"))}
    got = {}
    for k, v in native.items():
        got[k[2]] = got.get(k[2], 0) + v[1]
    if got != hook:
        fail("native calls differ\n  counting hook %s\n  fnprof        %s"
             % (sorted(hook.items()), sorted(got.items())))
    if len(got) < 5:
        fail("only %d native functions seen: %s" % (len(got), got))
    print("native: %d functions of _speedups.c and its headers, %d calls, equal the "
          "counting hook's"
          % (len(got), sum(got.values())))

    # nesting: __html__ is called back by the native escape
    html = [k for k in f if k[2] == "__html__" and k[0] == "use_markupsafe.py"]
    if not html or not any(k in native and k[2] == "escape" for k in f[html[0]][4]):
        fail("Link.__html__ is not under the native escape: callers %s"
             % (list(f[html[0]][4]) if html else None))

    # Python: the script's and markupsafe's own functions against cProfile
    def mine(k):
        return k[0] == "use_markupsafe.py" or k[0].endswith(os.path.join("markupsafe",
                                                                         "__init__.py"))

    # the tree's paths give each call of a Python function its nearest caller that is
    # not native: the frame cProfile names as the caller
    _, tree = fnptree.read(os.path.join(tmp, "f.prof"))
    lifted = {}
    for node in tree.nodes:
        if not mine(node.key) or node.parent is None:
            continue
        at = node.parent
        while at.parent is not None and at.key in native:
            at = at.parent
        edge = (node.key, at.key)
        lifted[edge] = lifted.get(edge, 0) + node.ncalls

    def python_side(stats, from_tree):
        res = {}
        for k, v in stats.items():
            if not mine(k):
                continue
            if from_tree:
                edges = {c: n for (x, c), n in lifted.items() if x == k}
            else:
                edges = {c: e[0] for c, e in v[4].items()}
            res[k] = (v[0], v[1], edges)
        return res

    want, have = python_side(c, False), python_side(f, True)
    bad = ["  %s\n    cProfile %s\n    fnprof   %s" % (k, want.get(k), have.get(k))
           for k in sorted(set(want) | set(have), key=str) if want.get(k) != have.get(k)]
    if bad:
        fail("Python side: %d functions differ from cProfile's\n%s" % (len(bad), "\n".join(bad)))
    if len(want) < 8:
        fail("cProfile saw only %d functions of the script and markupsafe" % len(want))
    print("python: %d functions of the script and markupsafe equal cProfile's" % len(want))


if __name__ == "__main__":
    main()
# SPDX-License-Identifier: MIT
