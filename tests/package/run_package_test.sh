#!/usr/bin/env bash
# Installs fnprof from the build tree into a scratch prefix, builds a consumer project
# with find_package(fnprof) + fnprof_instrument(), and checks both of its programs (libfnprof.so
# and libfnprof.a) write a profile naming square() with 10 calls; then a project of two
# directories (scoped/) in every order of find_package, add_subdirectory and fnprof_instrument.
set -euo pipefail
build=$1 src=$(cd "$(dirname "$0")" && pwd) python=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
cmake -S "$src" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/consumer" >/dev/null
for prog in consumer consumer_static; do
    out=$(cd "$tmp" && PROF_OUTPUT=$prog.prof PROF_QUIET=1 LD_LIBRARY_PATH="$tmp/prefix/lib" \
          "$tmp/consumer/$prog")
    [ "$out" = "285 0.1.0" ] || { echo "FAIL: $prog printed '$out'"; exit 1; }
    "$python" - "$tmp/$prog.prof" "$src/main.c" <<'PY'
import pstats, sys
stats = pstats.Stats(sys.argv[1]).stats
key = (sys.argv[2], 5, "square")
assert key in stats, f"no {key} in {list(stats)}"
assert stats[key][:2] == (10, 10), stats[key]
assert stats[key][4] == {(sys.argv[2], 10, "main"): (10, 10, stats[key][2], stats[key][3])}, stats[key]
PY
done
# The consumer installed to a prefix of its own starts with no loader set-up, and is profiled.
cmake --install "$tmp/consumer" --prefix "$tmp/app" >/dev/null
out=$(cd "$tmp" && env -u LD_LIBRARY_PATH PROF_OUTPUT=installed.prof PROF_QUIET=1 "$tmp/app/bin/consumer") ||
    { echo "FAIL: the installed consumer did not start"; exit 1; }
[ "$out" = "285 0.1.0" ] && [ -s "$tmp/installed.prof" ] ||
    { echo "FAIL: the installed consumer printed '$out' or wrote no profile"; exit 1; }
# Two directories (tests/package/scoped): the program defined in sub/, fnprof found or added
# from source in either directory and the program instrumented in either, in every order.
# Each configures, builds, profiles square(), and installed starts without loader set-up.
for order in after before in_sub sub_only sub_found twice source source_sub; do
    b=$tmp/scoped-$order
    cmake -S "$src/scoped" -B "$b" -DFNP_ORDER=$order -DFNP_SOURCE="$src/../.." \
          -DCMAKE_PREFIX_PATH="$tmp/prefix" >"$b.log" 2>&1 &&
        cmake --build "$b" -j2 >>"$b.log" 2>&1 ||
        { echo "FAIL: scoped, order $order:"; tail -n 20 "$b.log"; exit 1; }
    cmake --install "$b" --prefix "$b/app" >/dev/null
    out=$(cd "$tmp" && env -u LD_LIBRARY_PATH PROF_OUTPUT=scoped-$order.prof PROF_QUIET=1 \
          "$b/app/bin/app") || { echo "FAIL: scoped, order $order: the installed app did not start"; exit 1; }
    [ "$out" = "285 0.1.0" ] || { echo "FAIL: scoped, order $order: printed '$out'"; exit 1; }
    "$python" -c 'import pstats, sys; s = pstats.Stats(sys.argv[1]).stats
assert any(k[2] == "square" and v[:2] == (10, 10) for k, v in s.items()), list(s)' \
        "$tmp/scoped-$order.prof" || { echo "FAIL: scoped, order $order: profile"; exit 1; }
done
# The installed fnprof command finds the installed libfnprof.so.
"$tmp/prefix/bin/fnprof" run -o "$tmp/run.prof" --quiet -- "$tmp/consumer/consumer" >/dev/null
"$tmp/prefix/bin/fnprof" report "$tmp/run.prof" | grep -q "main.c:5(square)"
echo "package test passed"
# SPDX-License-Identifier: MIT
