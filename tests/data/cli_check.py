"""Checks the fnprof command against CPython's pstats (tests/cli.cmake runs it).

    cli_check.py report FNPROF DATADIR [--with-meta] [fnprof report options]
        fnprof report's output for every DATADIR/prof/*.prof must be, byte for byte, what
        pstats.Stats(path).sort_stats(...).print_stats(N)[.print_callers(N)]
        [.print_callees(N)] prints. With --unit ms|us|ns, that text with every time
        rebuilt from the file's dict in the unit (with_unit, below). With --with-meta,
        each file is first given metadata (a trailer of kind 0, tests/e2e/fnptree.py),
        which must come first, one "key: value" a line, unless --no-meta is given.
    cli_check.py report-count-only FNPROF
        fnprof report --unit ms of a count-only profile (its times are calls) says on stderr
        that the unit does not apply, and prints what pstats prints.
    cli_check.py merge FNPROF DATADIR
        fnprof merge -o OUT A B must hold what pstats.Stats(A, B) holds.
    cli_check.py merge-meta FNPROF DATADIR
        fnprof merge keeps the first input's metadata, adds the others' new keys and
        "merged", the number of runs; a sum without a tree keeps its metadata.
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

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import fnptree  # noqa: E402  pylint: disable=wrong-import-position


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
    return buf.getvalue()


# fnprof report --unit: scale from seconds, the totals line's word, decimals; columns of
# UNIT_WIDTH characters (wide enough for 999 s in ns).
UNITS = {'ms': (1e3, 'milliseconds', 3), 'us': (1e6, 'microseconds', 3),
         'ns': (1e9, 'nanoseconds', 0)}
UNIT_WIDTH = 12
STATS_TITLE = '   ncalls  tottime  percall  cumtime  percall filename:lineno(function)'
CALLS_RE = re.compile(r'^( *\S+) ')  # a count column, right-aligned, as wide as it needs
TOTALS_RE = re.compile(r'^( +\d+ function calls .*)in \d+\.\d{3} seconds$')
META = [('program', '/usr/bin/app'), ('pid', '4242'), ('start', '2026-11-24T19:14:49Z'),
        ('note', 'two\nlines\tand <b>html</b> & \u00fcnic\u00f8de'), ('empty', '')]


def with_unit(text, path, unit):
    """pstats' text for path with its times in unit, as fnprof report --unit prints it:
    every time rebuilt from the file's dict, pstats' per-call quotients converted, columns
    widened to UNIT_WIDTH and titled "tottime(ms)"; counts, names and order kept."""
    st = pstats.Stats(path)
    stats = st.stats
    scale, word, decimals = UNITS[unit]
    w = UNIT_WIDTH

    def t(x):
        return '%*.*f' % (w, decimals, x * scale)

    def title(*words):
        return ''.join(' %*s' % (w, '%s(%s)' % (x, unit)) for x in words)

    def ending(line, keys):
        """The key whose name ends line after a space; the longest, should one name end
        another."""
        return max((k for k in keys if line.endswith(' ' + pstats.func_std_string(k))),
                   key=lambda k: len(pstats.func_std_string(k)))

    out, section, width, padded = [], None, 0, {}
    for line in text.split('\n'):
        m = TOTALS_RE.match(line)
        if m:
            line = '%sin %.*f %s' % (m.group(1), decimals, st.total_tt * scale, word)
        elif line == STATS_TITLE:
            section = 'stats'
            line = '   ncalls' + title('tottime', 'percall', 'cumtime', 'percall') + \
                ' filename:lineno(function)'
        elif line.startswith('Function ') and line.endswith(('was called by...', 'called...')):
            callers = line.endswith('was called by...')
            section = 'callers' if callers else 'callees'
            width = len(line) - len('was called by...' if callers else 'called...')
            padded = {pstats.func_std_string(k).ljust(width): k for k in stats}
        elif section in ('callers', 'callees') and line == ' ' * width + '    ncalls  tottime  cumtime':
            line = ' ' * width + '    ncalls' + title('tottime', 'cumtime')
        elif not line:
            section = None
        elif section == 'stats':
            key = ending(line, stats)
            cc, nc, tt, ct, _ = stats[key]
            line = '%s %s %s %s %s %s' % (CALLS_RE.match(line).group(1), t(tt), t(tt / nc) if nc else ' ' * w, t(ct),
                                          t(ct / cc) if cc else ' ' * w,
                                          pstats.func_std_string(key))
        elif section in ('callers', 'callees') and len(line) > width + 3:
            if line[width:width + 2] in ('<-', '->'):
                source = padded[line[:width]]
                head, rest = line[:width + 3], line[width + 3:]
            else:
                head, rest = line[:width + 1], line[width + 1:]
            calls = CALLS_RE.match(rest).group(1)
            ends = stats[source][4] if section == 'callers' else \
                [k for k, v in stats.items() if source in v[4]]
            other = ending(rest, ends)
            edge = stats[source][4][other] if section == 'callers' else stats[other][4][source]
            line = '%s%s %s %s  %s' % (head, calls, t(edge[2]), t(edge[3]),
                                       pstats.func_std_string(other))
        out.append(line)
    return '\n'.join(out)


def meta_text(meta):
    """fnprof report's metadata lines: control characters as '?', then a blank line."""
    one_line = lambda s: re.sub('[\x00-\x1f\x7f]', '?', s)
    return ''.join('%s: %s\n' % (one_line(k), one_line(v)) for k, v in meta) + '\n'


def with_meta(path, tmp):
    """A copy of the CPython file at path with fnprof's trailer of metadata alone."""
    with open(path, 'rb') as f:
        stats = marshal.load(f)
    copy = os.path.join(tmp, os.path.basename(path))
    with open(copy, 'wb') as f:
        f.write(fnptree.encode(stats, None, META))
    return copy


def check_report(fnprof, datadir, opts):
    keys, limit, callers, callees = [], 20, False, False
    unit, meta, add_meta = None, True, False
    if '--with-meta' in opts:
        add_meta = True
        opts = [o for o in opts if o != '--with-meta']
    i = 0
    while i < len(opts):
        if opts[i] in ('--unit', '-u'):
            unit = None if opts[i + 1] == 's' else opts[i + 1]
            i += 1
        elif opts[i] == '--no-meta':
            meta = False
        elif opts[i] == '--sort':
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
    tmp = tempfile.TemporaryDirectory()
    for path in files:
        if add_meta:
            path = with_meta(path, tmp.name)
        r = subprocess.run([fnprof, 'report', path] + opts, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
        if r.returncode or r.stderr:
            fail('%s: exit %d, stderr %r' % (path, r.returncode, r.stderr))
        text = pstats_text(path, keys, limit, callers, callees)
        if unit:
            text = with_unit(text, path, unit)
        if add_meta and meta:
            text = meta_text(META) + text
        # fnprof prints names as the file holds them: surrogates as CPython encoded them.
        want = text.encode('utf-8', 'surrogatepass')
        if r.stdout != want:
            diff = difflib.unified_diff(
                want.decode('utf-8', 'replace').splitlines(),
                r.stdout.decode('utf-8', 'replace').splitlines(), 'pstats', 'fnprof',
                lineterm='')
            fail('%s %s:\n%s' % (path, ' '.join(opts), '\n'.join(list(diff)[:60])))
    tmp.cleanup()
    print('%d files%s: fnprof report %s prints what pstats prints%s%s'
          % (len(files), ' given metadata' if add_meta else '', ' '.join(opts),
             ', times in ' + unit if unit else '', ' after the metadata' if add_meta and meta
             else ''))


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


def check_report_count_only(fnprof):
    keys = [('/src/m.c', 1, 'main'), ('/src/m.c', 5, 'f')]
    tree = fnptree.build(fnptree.KIND_CALLS, 1.0, ['thread 1'], keys,
                         [(0, None, 0, 1, 4), (1, 0, 0, 3, 3)])
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, 'count.prof')
        with open(path, 'wb') as f:
            f.write(fnptree.encode(fnptree.derive(tree), tree, [('clock', 'none')]))
        r = subprocess.run([fnprof, 'report', '--unit', 'ms', '--no-meta', path],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        err = r.stderr.decode()
        want = pstats_text(path, [], 20, False, False).encode()
        if r.returncode or r.stdout != want:
            fail('report --unit ms of a count-only profile: exit %d, %r, want %r'
                 % (r.returncode, r.stdout, want))
        if not re.match(r'^fnprof: report: .*count\.prof: note: a count-only profile.*'
                        r'--unit ms ignored\n$', err):
            fail('report --unit ms of a count-only profile: stderr %r' % err)
    print('fnprof report --unit ms of a count-only profile: a note, and the calls as they are')


def check_merge_meta(fnprof, datadir):
    files = sorted(glob.glob(os.path.join(datadir, 'prof', '*-cprofile.prof')))
    if not files:
        fail('no *-cprofile.prof in %s/prof' % datadir)
    first = files[0]
    second = first[:-len('cprofile.prof')] + 'cprofile2.prof'
    with tempfile.TemporaryDirectory() as tmp:
        def made(name, src, meta):
            with open(src, 'rb') as f:
                stats = marshal.load(f)
            path = os.path.join(tmp, name)
            with open(path, 'wb') as f:
                f.write(fnptree.encode(stats, None, meta))
            return path

        def merge(out, *inputs):
            out = os.path.join(tmp, out)
            r = subprocess.run([fnprof, 'merge', '-o', out] + list(inputs),
                               stderr=subprocess.PIPE)
            if r.returncode:
                fail('merge %s: exit %d: %r' % (inputs, r.returncode, r.stderr))
            return out

        a = made('a.prof', first, META)
        b = made('b.prof', second, [('pid', '99'), ('epoch', '3')])
        cases = [
            # The first input's pairs win; the others' new keys follow; then the runs.
            (merge('ab.prof', a, b), META + [('epoch', '3'), ('merged', '2')], (a, b)),
            # A merge counts its own runs; an input without metadata is one run too.
            (merge('abc.prof', os.path.join(tmp, 'ab.prof'), second),
             META + [('epoch', '3'), ('merged', '3')], (a, b, second)),
            (merge('ca.prof', second, a), META + [('merged', '2')], (second, a)),
            # No metadata in: none out, and no trailer at all (CPython's files).
            (merge('plain.prof', first, second), [], (first, second)),
        ]
        for out, want, inputs in cases:
            stats, tree, meta = fnptree.read_all(out)
            if meta != want:
                fail('merge %s: metadata %r, want %r' % (inputs, meta, want))
            if tree is not None:
                fail('merge %s: a tree from inputs without one' % (inputs,))
            if stats != sanitised(pstats.Stats(*inputs).stats):
                fail('merge %s: the dict is not pstats.Stats(...)\'s' % (inputs,))
        with open(os.path.join(tmp, 'plain.prof'), 'rb') as f:
            data = f.read()
        stream = io.BytesIO(data)
        marshal.load(stream)
        if stream.tell() != len(data):
            fail('merge of files without metadata wrote %d bytes after the dict'
                 % (len(data) - stream.tell()))
        check_tree_versions(fnprof, tmp, merge)
    print('fnprof merge keeps the first metadata, adds new keys and counts the runs; '
          'version 1 and 2 trees read on both sides')


def check_tree_versions(fnprof, tmp, merge):
    """Trees with and without metadata: a version 1 file (fnptree.py writes it) reads in
    fnprof and in fnptree.py; fnprof writes version 4, with the metadata, back."""
    keys = [('/src/m.c', 1, 'main'), ('/src/m.c', 5, 'f')]
    tree = fnptree.build(fnptree.KIND_TIME, 1e-9, ['thread 1'], keys,
                         [(0, None, 0, 1, 1000), (1, 0, 0, 3, 600)])
    stats = fnptree.derive(tree)

    def paths(t):
        return {t.path(n): (n.ncalls, n.ticks) for n in t.nodes}

    files = {}
    for version, meta in ((1, []), (2, [('program', '/bin/m'), ('pid', '7')])):
        path = os.path.join(tmp, 'tree-v%d.prof' % version)
        with open(path, 'wb') as f:
            f.write(fnptree.encode(stats, tree, meta, version))
        _, got, got_meta = fnptree.read_all(path)
        if got is None or paths(got) != paths(tree) or got_meta != meta:
            fail('fnptree.py: version %d: tree %r, metadata %r' % (version, got and paths(got),
                                                                   got_meta))
        files[version] = path
    out = merge('tree-v1-again.prof', files[1])
    with open(out, 'rb') as f:
        data = f.read()
    _, got, meta = fnptree.read_all(out)
    if data[data.rindex(fnptree.MAGIC) + 8] != 4 or got is None or paths(got) != paths(tree) \
            or meta:
        fail('merge of a version 1 file: %r, metadata %r' % (got and paths(got), meta))
    out = merge('tree-v2-v1.prof', files[2], files[1])
    _, got, meta = fnptree.read_all(out)
    twice = {p: (2 * c, 2 * t) for p, (c, t) in paths(tree).items()}
    if got is None or paths(got) != twice or meta != [('program', '/bin/m'), ('pid', '7'),
                                                      ('merged', '2')]:
        fail('merge of versions 2 and 1: %r, metadata %r' % (got and paths(got), meta))


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
    elif what == 'report-count-only':
        check_report_count_only(args[0])
    elif what == 'merge-meta':
        check_merge_meta(args[0], args[1])
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
# SPDX-License-Identifier: MIT
