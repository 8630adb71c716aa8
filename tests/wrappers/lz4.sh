#!/usr/bin/env bash
# A real project built with the wrapper: Debian's lz4 sources, `make CC=fnprof-cc`, then the
# lz4 program compresses and decompresses a file with PROF_OUTPUT, and again with
# count_hooks.so preloaded; every function's calls in the profile must equal the hook's.
#
#   tests/wrappers/lz4.sh BIN_DIR WORK_DIR
#
# The sources are fetched once with `apt-get source lz4` into WORK_DIR/src (kept between
# runs). Exit 77 (skipped) with the reason when they cannot be had (no deb-src entry, no
# dpkg-dev, no network); 0 pass; 1 fail.
set -euo pipefail
bin=$(cd "$1" && pwd)
work=$2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$work/src"
work=$(cd "$work" && pwd)

skip() {
    echo "SKIP: $*" >&2
    exit 77
}

src=$(ls -d "$work"/src/lz4-*/ 2>/dev/null | head -1 || true)
if [ -z "$src" ]; then
    command -v apt-get >/dev/null || skip "no apt-get: cannot fetch Debian's lz4 sources"
    command -v dpkg-source >/dev/null || skip "apt-get source needs dpkg-dev (apt-get install dpkg-dev)"
    if ! (cd "$work/src" && apt-get source -qq lz4 >"$work/src/apt.log" 2>&1); then
        skip "apt-get source lz4 failed (deb-src entries? network? bench/setup enables them): $(tail -1 "$work/src/apt.log")"
    fi
    src=$(ls -d "$work"/src/lz4-*/ | head -1)
fi
src=${src%/}
echo "lz4 sources: $src"

# A fresh copy to build in: the sources stay pristine for the next run.
rm -rf "$work/build"
cp -r "$src" "$work/build"
export FNPROF_CC=gcc XDG_CACHE_HOME="$work/cache"
unset PROF_OUTPUT LD_PRELOAD
make -C "$work/build" -j2 lz4 CC="$bin/fnprof-cc" >"$work/make.log" 2>&1 ||
    { tail -30 "$work/make.log"; echo "FAIL: make CC=fnprof-cc" >&2; exit 1; }
prog=$work/build/programs/lz4
[ -x "$prog" ] || prog=$work/build/lz4
[ -x "$prog" ] || { echo "FAIL: no lz4 program after make" >&2; exit 1; }
readelf -d "$prog" | grep -q 'libfnprof.so' || { echo "FAIL: lz4 does not need libfnprof.so" >&2; exit 1; }

cc -O2 -fPIC -shared -o "$work/count_hooks.so" "$here/count_hooks.c"

# Input: 2 MB of repetitive text with some noise, the same every run.
python3 -c '
import random, sys
r = random.Random(14)
words = ["fnprof", "profile", "lz4", "calls", "exact", "hook", "wrapper", "compile"]
out = []
while sum(map(len, out)) < 2_000_000:
    out.append(" ".join(r.choice(words) for _ in range(12)) + " %d\n" % r.randrange(1000))
sys.stdout.write("".join(out))' >"$work/input.txt"

status=0
for mode in compress decompress; do
    case $mode in
    compress) args=(-f -q "$work/input.txt" "$work/input.txt.lz4") ;;
    decompress) args=(-d -f -q "$work/input.txt.lz4" "$work/output.txt") ;;
    esac
    PROF_OUTPUT="$work/$mode.prof" PROF_QUIET=1 "$prog" "${args[@]}"
    LD_PRELOAD="$work/count_hooks.so" COUNT_OUTPUT="$work/$mode.counts" "$prog" "${args[@]}"
    echo "lz4 $mode:"
    python3 -B "$here/compare_counts.py" --profile "$work/$mode.prof" \
        --counts "$work/$mode.counts" --binary "$prog" || status=1
done
cmp "$work/input.txt" "$work/output.txt" || { echo "FAIL: lz4 round trip differs" >&2; exit 1; }
exit $status
# SPDX-License-Identifier: MIT
