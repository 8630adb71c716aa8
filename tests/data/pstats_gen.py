"""Writes pstats files the way CPython does, and what CPython reads back from each.

    python3 pstats_gen.py OUTDIR [--also PYTHON...]

For each case NAME it writes OUTDIR/prof/TAG-NAME.prof and OUTDIR/expect/TAG-NAME.expect,
TAG being pyMAJOR.MINOR, after clearing what earlier runs left there; then it runs itself
under each other interpreter given (--also), so that every version fills one directory.

An .expect file lists what marshal.load gives for the .prof, in the dict's order:
    F <file> <line> <name> <pcalls> <ncalls> <tottime> <cumtime>
then, per function and caller,
    E <file> <line> <name> <caller file> <caller line> <caller name> <ncalls> <pcalls>
      <tottime> <cumtime>
with strings as the hex of their UTF-8 (surrogatepass) and floats as float.hex(), so that
the C side compares exactly. Runs on Python 3.8 to 3.13.
"""
import cProfile
import marshal
import os
import pstats
import subprocess
import sys

# A workload whose profile has what real files have: recursion (fib -> fib), mutual
# recursion (a <-> b), methods, generators, lambdas, C functions ('~', 0, '<built-in ...>'),
# a non-ASCII file and function name. CPython's marshal writes the key tuples, strings and
# small ints it meets again as references.
WORKLOAD = '''
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)

def a(n):
    return b(n)

def b(n):
    return a(n - 1) if n > 0 else 0

class Thing:
    def method(self, x):
        return sorted([x, 3, 1, 2])

def gen(n):
    for i in range(n):
        yield i

def caf\u00e9(n):
    return sum(gen(n)) + len([1, 2])

def run():
    fib(10)
    a(4)
    Thing().method(5)
    caf\u00e9(5)
    (lambda: fib(3))()
    for _ in range(3):
        a(2)
'''
WORKLOAD_FILE = '/tmp/fnprof-\u00fcn\u00ef/workload-\u00f0.py'


def profile_workload(path):
    ns = {}
    exec(compile(WORKLOAD, WORKLOAD_FILE, 'exec'), ns)
    prof = cProfile.Profile()
    prof.enable()
    ns['run']()
    prof.disable()
    prof.dump_stats(path)


def synthetic():
    """Every value class a reader meets, in one dict: 'l' ints up to 2**64 - 1, a line at
    UINT32_MAX, C functions, non-ASCII and surrogate-escaped names, strs over 255 bytes,
    interned strings ('t', 'A', 'Z'), and objects shared between entries (references in
    versions 3 and 4)."""
    k_main = ('main.c', 10, 'main')
    k_fib = ('fib.c', 3, 'fib')
    k_big = ('big.c', 4294967295, 'big')
    k_len = ('~', 0, '<built-in method builtins.len>')
    k_plain = ('~', 0, 'plain_builtin')
    k_uni = ('/src/\u00fcn\u00ef.c', 7, 'caf\u00e9')
    k_surrogate = ('/src/bad-\udcff.c', 1, 'f')
    k_long = ('l' * 256 + '.c', 1, sys.intern('x' * 300))
    k_interned = (sys.intern('interned.c'), 2, sys.intern('interned_fn'))
    empty = {}
    shared_edge = (2, 1, 0.25, 0.5)
    return {
        k_main: (1, 1, 0.5, 10.0, {}),
        k_fib: (1, 15, 1.5, 1.5, {k_fib: (14, 2, 1.4, 1.4), k_main: (1, 1, 0.1, 1.5)}),
        k_big: (2**40, 2**63, 1e-9, 123456.789, {k_main: (2**63, 2**40, 0.0, 0.0)}),
        k_len: (3, 3, 0.0, 0.0, {k_main: (3, 3, 0.0, 0.0)}),
        k_plain: (1, 1, 0.0, 0.0, empty),
        k_uni: (2, 2, 0.25, 0.5, {k_main: shared_edge}),
        k_surrogate: (2, 2, 0.25, 0.5, {k_main: shared_edge, k_uni: (1, 1, 3.0, 4.0)}),
        k_long: (1, 1, 0.0, 0.0, empty),
        k_interned: (2**64 - 1, 2**64 - 1, 5e-324, 1.7976931348623157e308,
                     {k_uni: (1, 1, 0.0, 0.0)}),
    }


def hx(s):
    return s.encode('utf-8', 'surrogatepass').hex()


def expect_text(stats):
    out = []
    for (f, l, n), (cc, nc, tt, ct, callers) in stats.items():
        out.append('F %s %d %s %d %d %s %s' % (hx(f), l, hx(n), cc, nc, float(tt).hex(),
                                               float(ct).hex()))
    for (f, l, n), (cc, nc, tt, ct, callers) in stats.items():
        for (cf, cl, cn), (enc, epc, ett, ect) in callers.items():
            out.append('E %s %d %s %s %d %s %d %d %s %s' % (
                hx(f), l, hx(n), hx(cf), cl, hx(cn), enc, epc, float(ett).hex(),
                float(ect).hex()))
    return '\n'.join(out) + '\n'


def finish(outdir, tag, name):
    """Writes the .expect of a .prof already written, from what marshal reads back."""
    prof = os.path.join(outdir, 'prof', '%s-%s.prof' % (tag, name))
    with open(prof, 'rb') as f:
        stats = marshal.load(f)
    pstats.Stats(prof)  # what pstats cannot load is no test of a reader
    with open(os.path.join(outdir, 'expect', '%s-%s.expect' % (tag, name)), 'w') as f:
        f.write(expect_text(stats))


def generate(outdir):
    tag = 'py%d.%d' % sys.version_info[:2]

    def path(name):
        return os.path.join(outdir, 'prof', '%s-%s.prof' % (tag, name))

    profile_workload(path('cprofile'))
    finish(outdir, tag, 'cprofile')
    profile_workload(path('cprofile2'))
    finish(outdir, tag, 'cprofile2')
    # pstats' own dump of what it loaded: objects shared by the load come out as references.
    pstats.Stats(path('cprofile')).dump_stats(path('stats-dump'))
    finish(outdir, tag, 'stats-dump')
    pstats.Stats(path('cprofile'), path('cprofile2')).dump_stats(path('stats-merged'))
    finish(outdir, tag, 'stats-merged')
    # Every marshal version: 0 and 1 write text floats ('f'), 3 and 4 references, 4 the
    # short forms ('z', 'Z', 'a', 'A', ')').
    for version in range(marshal.version + 1):
        with open(path('synthetic-v%d' % version), 'wb') as f:
            marshal.dump(synthetic(), f, version)
        finish(outdir, tag, 'synthetic-v%d' % version)


def main():
    args = sys.argv[1:]
    if not args or args[0].startswith('-') or (len(args) > 1 and args[1] != '--also'):
        sys.exit(__doc__)
    outdir, others = args[0], args[2:]
    child = os.environ.get('FNP_PSTATS_GEN') == 'child'
    for sub, ext in (('prof', '.prof'), ('expect', '.expect')):
        d = os.path.join(outdir, sub)
        os.makedirs(d, exist_ok=True)
        for name in os.listdir(d) if not child else []:
            if name.endswith(ext):
                os.remove(os.path.join(d, name))
    generate(outdir)
    print('%s: wrote %s' % (sys.executable, outdir))
    env = dict(os.environ, FNP_PSTATS_GEN='child')
    for python in others:
        if os.path.realpath(python) == os.path.realpath(sys.executable):
            continue
        # Another interpreter that cannot run is the machine's business, not the reader's.
        r = subprocess.run([python, os.path.abspath(__file__), outdir], env=env)
        if r.returncode:
            print('%s: failed (%d), its files are left out' % (python, r.returncode))


if __name__ == '__main__':
    main()
# SPDX-License-Identifier: MIT
