#!/usr/bin/env bash
# fnprof's memory profile against heaptrack's on a real program: Debian's lz4 (the sources
# e2e.wrappers.lz4 fetched, its fixture), built here with fnprof-cc at -O0, compressing a
# file. At -O2 heaptrack names inlined frames in an order that is not the call order (in
# lz4 1.9.4, LZ4F_malloc's allocation lands in its caller LZ4F_compressBegin_usingCDict,
# whose frame heaptrack puts inside LZ4F_malloc's): -O0 leaves nothing inlined, so both
# tools see the same calls.
#   lz4_heaptrack.sh WRAPPER_BIN_DIR LZ4_WORK PYTHON AGREE_PY LIBFNPROF
set -euo pipefail
bin=$1 work=$2 python=$3 agree=$4 lib=$5
src=$(ls -d "$work"/src/lz4-*/ 2>/dev/null | head -1 || true)
[ -n "$src" ] || { echo "SKIP: no lz4 sources (e2e.wrappers.lz4 fetches them)"; exit 77; }
build=$work/mem-build
rm -rf "$build"
cp -r "${src%/}" "$build"
unset PROF_OUTPUT PROF_MEMORY LD_PRELOAD
FNPROF_CC=gcc XDG_CACHE_HOME="$work/cache" make -C "$build" -j2 lz4 CC="$bin/fnprof-cc" \
    CFLAGS="-O0 -g" >"$work/mem-make.log" 2>&1 ||
    { tail -20 "$work/mem-make.log"; echo "FAIL: make lz4 at -O0"; exit 1; }
prog=$build/programs/lz4
[ -x "$prog" ] || prog=$build/lz4
head -c 3000000 "$prog" >"$work/mem-input"
exec "$python" "$agree" --lib "$lib" -- "$prog" -f -9 -q "$work/mem-input" "$work/mem-input.lz4"
# SPDX-License-Identifier: MIT
