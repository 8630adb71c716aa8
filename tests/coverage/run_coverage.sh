#!/bin/sh
# The runtime names the program's own libraries that call no hook (runtime/coverage.c):
# libplain.so, built without -finstrument-functions, is named on stderr and in the
# metadata, with main's share of the run; the same program with libplain.so instrumented
# gets no such line. Usage: run_coverage.sh CC LIBDIR WORKDIR PYTHON
set -eu
cc=$1 lib=$(cd "$2" && pwd) work=$3 python=$4
src=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work" && cd "$work"
"$cc" -g -O2 -fPIC -shared "$src/plain.c" -o libplain.so
"$cc" -g -O2 -finstrument-functions "$src/app.c" -o app -L. -lplain -Wl,-rpath,"$work" \
    -L"$lib" -lfnprof -Wl,-rpath,"$lib"
PROF_OUTPUT=out.prof PROF_QUIET=1 ./app >stdout 2>stderr
grep -q '^app: ' stdout
expected="fnprof: not instrumented, so their time is their callers' own time: libplain.so; "
n=$(grep -c "^$expected[0-9]*% of the run is main's own time (fnprof doctor tells more)\$" stderr || true)
[ "$n" = 1 ] || { echo "FAIL: stderr:"; cat stderr; exit 1; }
[ "$(wc -l <stderr)" = 1 ] || { echo "FAIL: more than one line:"; cat stderr; exit 1; }
"$python" -B - "$src/../e2e" out.prof <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import fnptree
meta = dict(fnptree.read_meta(sys.argv[2]))
assert meta.get("uninstrumented") == "libplain.so", meta
PY
# Instrumented, the library is no longer named.
"$cc" -g -O2 -fPIC -shared -finstrument-functions "$src/plain.c" -o libplain.so
PROF_OUTPUT=out2.prof PROF_QUIET=1 ./app >stdout 2>stderr
[ ! -s stderr ] || { echo "FAIL: instrumented library still reported:"; cat stderr; exit 1; }
echo "coverage test passed"
# SPDX-License-Identifier: MIT
