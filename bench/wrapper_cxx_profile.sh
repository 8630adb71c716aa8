#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# How many functions and calls a C++ program's profile holds with each compiler's way of
# keeping the standard library out (docs/wrappers.md): tests/wrappers/progs/app.cc (vector,
# map, sort; 1,003 calls of its own functions) at -O0 and -O2, built
#   gcc   through fnprof-c++ (-finstrument-functions + the system-header exclusion list)
#   clang with plain -finstrument-functions
#   clang with -finstrument-functions-after-inlining (fnprof-c++'s choice)
#
#   bench/wrapper_cxx_profile.sh [BUILD_DIR (default build)]
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(cd "${1:-build}" && pwd)
lib=$build/lib
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
src=tests/wrappers/progs/app.cc
count() { # label exe
    PROF_OUTPUT="$work/p.prof" PROF_QUIET=1 "$2" >/dev/null
    python3 - "$1" "$work/p.prof" <<'PY'
import pstats, sys
st = pstats.Stats(sys.argv[2]).stats
def system(k):
    short = k[2].split("(")[0]
    return k[0].startswith("/usr/") or short.startswith(("std::", "__gnu_cxx::"))
calls = sum(v[1] for v in st.values())
sys_f = [k for k in st if system(k)]
sys_calls = sum(st[k][1] for k in sys_f)
print("%-44s functions %4d (std:: %4d)  calls %7d (std:: %7d)"
      % (sys.argv[1], len(st), len(sys_f), calls, sys_calls))
PY
}
for opt in -O0 -O2; do
    FNPROF_CXX=g++ XDG_CACHE_HOME=$work "$build/bin/fnprof-c++" $opt -o "$work/g" $src
    count "g++ $opt (fnprof-c++: exclude list)" "$work/g"
    clang++ $opt -g -finstrument-functions -o "$work/c" $src -L"$lib" -Wl,-rpath,"$lib" -lfnprof
    count "clang++ $opt -finstrument-functions" "$work/c"
    clang++ $opt -g -finstrument-functions-after-inlining -o "$work/a" $src -L"$lib" \
        -Wl,-rpath,"$lib" -lfnprof
    count "clang++ $opt -finstrument-functions-after-inlining" "$work/a"
done
