"""Checks the fnprof command against CPython's pstats (tests/cli.cmake runs it).

    cli_check.py report FNPROF DATADIR [fnprof report options]
        fnprof report's output for every DATADIR/prof/*.prof must be, byte for byte, what
        pstats.Stats(path).sort_stats(...).print_stats(N)[.print_callers(N)]
        [.print_callees(N)] prints.
    cli_check.py merge FNPROF DATADIR
        fnprof merge -o OUT A B must hold what pstats.Stats(A, B) holds.
    cli_check.py expect STATUS [--stdout REGEX] [--stderr REGEX] -- COMMAND...
        COMMAND must exit with STATUS; with --stderr, stderr must be one line matching it.
    cli_check.py run FNPROF LIBRARY
        fnprof run must set PROF_OUTPUT, LD_PRELOAD and PROF_QUIET and pass the exit status.
    cli_check.py run-without-library FNPROF
        a copy of fnprof with no libfnprof.so beside it must say so, in one line.
"""
import difflib
import glob
import io
import marshal
import os
import pstats
import re
import shutil
import subprocess
import sys
import tempfile


def fail(msg):
    print('FAIL: ' + msg)
    sys.exit(1)


def pstats_text(path, keys, limit, callers, callees):
    buf = io.StringIO()
    st = pstats.Stats(path, stream=buf)
    st.sort_stats(*(keys or ['cumulative']))
    amount = (limit,) if limit else ()
    st.print_stats(*amount)
    if callers:
        st.print_callers(*amount)
    if callees:
        st.print_callees(*amount)
    # fnprof prints names as the file holds them: surrogates as CPython encoded them.
    return buf.getvalue().encode('utf-8', 'surrogatepass')


def check_report(fnprof, datadir, opts):
    keys, limit, callers, callees = [], 20, False, False
    i = 0
    while i < len(opts):
        if opts[i] == '--sort':
            keys.append(opts[i + 1])
            i += 1
        elif opts[i] == '--limit':
            limit = int(opts[i + 1])
            i += 1
        elif opts[i] == '--callers':
            callers = True
        elif opts[i] == '--callees':
            callees = True
        else:
            fail('cli_check.py does not know %s' % opts[i])
        i += 1
    files = sorted(glob.glob(os.path.join(datadir, 'prof', '*.prof')))
    if not files:
        fail('no .prof in %s/prof' % datadir)
    for path in files:
        r = subprocess.run([fnprof, 'report', path] + opts, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
        if r.returncode or r.stderr:
            fail('%s: exit %d, stderr %r' % (path, r.returncode, r.stderr))
        want = pstats_text(path, keys, limit, callers, callees)
        if r.stdout != want:
            diff = difflib.unified_diff(
                want.decode('utf-8', 'replace').splitlines(),
                r.stdout.decode('utf-8', 'replace').splitlines(), 'pstats', 'fnprof',
                lineterm='')
            fail('%s %s:\n%s' % (path, ' '.join(opts), '\n'.join(list(diff)[:60])))
    print('%d files: fnprof report %s prints what pstats prints' % (len(files), ' '.join(opts)))


def sanitised(stats):
    """The writer puts valid UTF-8 in files (docs/pstats.md): surrogates become U+FFFD."""
    def fix(key):
        f, l, n = key
        return (f.encode('utf-8', 'surrogatepass').decode('utf-8', 'replace'), l,
                n.encode('utf-8', 'surrogatepass').decode('utf-8', 'replace'))
    return {fix(k): (cc, nc, tt, ct, {fix(c): v for c, v in callers.items()})
            for k, (cc, nc, tt, ct, callers) in stats.items()}


def check_merge(fnprof, datadir):
    pairs = []
    for first in sorted(glob.glob(os.path.join(datadir, 'prof', '*-cprofile.prof'))):
        tag = os.path.basename(first)[:-len('-cprofile.prof')]
        prof = lambda name: os.path.join(datadir, 'prof', '%s-%s.prof' % (tag, name))
        # Overlapping keys (two runs of one workload), disjoint ones, one file alone.
        pairs += [[first, prof('cprofile2')], [prof('stats-merged'), prof('synthetic-v4')],
                  [prof('synthetic-v0')]]
    if not pairs:
        fail('no *-cprofile.prof in %s/prof' % datadir)
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, 'merged.prof')
        for inputs in pairs:
            r = subprocess.run([fnprof, 'merge', '-o', out] + inputs, stderr=subprocess.PIPE)
            if r.returncode:
                fail('merge %s: exit %d: %r' % (inputs, r.returncode, r.stderr))
            with open(out, 'rb') as f:
                got = marshal.load(f)
            pstats.Stats(out)
            # Two files add exactly as Python adds them: a + b == b + a.
            want = sanitised(pstats.Stats(*inputs).stats)
            if got != want:
                for k in sorted(set(got) | set(want), key=repr):
                    if got.get(k) != want.get(k):
                        fail('merge %s: %r: fnprof %r, pstats %r'
                             % (inputs, k, got.get(k), want.get(k)))
                fail('merge %s: differs in order only?' % inputs)
    print('%d merges hold what pstats.Stats(a, b) holds' % len(pairs))


def check_expect(args):
    status, out_re, err_re = int(args[0]), None, None
    i = 1
    while args[i] != '--':
        if args[i] == '--stdout':
            out_re = args[i + 1]
        elif args[i] == '--stderr':
            err_re = args[i + 1]
        else:
            fail('cli_check.py does not know %s' % args[i])
        i += 2
    cmd = args[i + 1:]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = r.stdout.decode('utf-8', 'replace')
    err = r.stderr.decode('utf-8', 'replace')
    if r.returncode != status:
        fail('%s: exit %d, want %d; stderr %r' % (cmd, r.returncode, status, err))
    if out_re is not None and not re.search(out_re, out, re.M):
        fail('%s: stdout %r does not match %r' % (cmd, out, out_re))
    if err_re is not None:
        if err.count('\n') != 1 or not err.endswith('\n'):
            fail('%s: stderr is not one line: %r' % (cmd, err))
        if not re.search(err_re, err):
            fail('%s: stderr %r does not match %r' % (cmd, err, err_re))
    print('%s: exit %d as wanted' % (' '.join(cmd), status))


def check_run(fnprof, library):
    lib = os.path.realpath(library)
    show = 'printf "%s|%s|%s\\n" "$PROF_OUTPUT" "$LD_PRELOAD" "${PROF_QUIET-unset}"'
    with tempfile.TemporaryDirectory() as tmp:
        # A relative output is made absolute: the program may chdir before it exits. What
        # was in LD_PRELOAD stays, after libfnprof.so.
        env = dict(os.environ, LD_PRELOAD='libm.so.6')
        env.pop('PROF_QUIET', None)
        r = subprocess.run([fnprof, 'run', '-o', 'out.prof', '--quiet', '--', 'sh', '-c', show],
                           cwd=tmp, env=env, stdout=subprocess.PIPE)
        want = '%s|%s:libm.so.6|1\n' % (os.path.join(os.path.realpath(tmp), 'out.prof'), lib)
        if r.returncode or r.stdout.decode() != want:
            fail('run -o out.prof --quiet: exit %d, %r, want %r'
                 % (r.returncode, r.stdout.decode(), want))
        env.pop('LD_PRELOAD')
        r = subprocess.run([fnprof, 'run', 'sh', '-c', show], cwd=tmp, env=env,
                           stdout=subprocess.PIPE)
        want = '%s|%s|unset\n' % (os.path.join(os.path.realpath(tmp), 'fnprof.prof'), lib)
        if r.returncode or r.stdout.decode() != want:
            fail('run: exit %d, %r, want %r' % (r.returncode, r.stdout.decode(), want))
        r = subprocess.run([fnprof, 'run', '-q', '--', 'sh', '-c', 'exit 7'], cwd=tmp, env=env)
        if r.returncode != 7:
            fail('run -- sh -c "exit 7": exit %d, want the program\'s 7' % r.returncode)
    print('fnprof run sets PROF_OUTPUT, LD_PRELOAD, PROF_QUIET and keeps the exit status')


def check_run_without_library(fnprof):
    with tempfile.TemporaryDirectory() as tmp:
        os.mkdir(os.path.join(tmp, 'bin'))
        copy = os.path.join(tmp, 'bin', 'fnprof')
        shutil.copy(fnprof, copy)
        check_expect(['1', '--stderr',
                      r'^fnprof: run: /.*libfnprof\.so: No such file or directory$', '--',
                      copy, 'run', '--', 'true'])


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    what, args = sys.argv[1], sys.argv[2:]
    if what == 'report':
        check_report(args[0], args[1], args[2:])
    elif what == 'merge':
        check_merge(args[0], args[1])
    elif what == 'expect':
        check_expect(args)
    elif what == 'run':
        check_run(args[0], args[1])
    elif what == 'run-without-library':
        check_run_without_library(args[0])
    else:
        sys.exit(__doc__)


if __name__ == '__main__':
    main()
