#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What fnprof-cc adds to a build's time (issue 14, goal < 5%): `make -j2 lz4` of Debian's lz4
# sources, from clean, three ways, interleaved, median of RUNS each:
#   plain    CC=gcc                        the project as it builds today
#   flags    CC="gcc <the wrapper's flags>" and its link flags in LDFLAGS, no wrapper
#   wrapper  CC=fnprof-cc (FNPROF_CC=gcc)
# wrapper/flags is the wrapper's own cost (a process image, argument scan, cached gcc/clang
# detection); flags/plain is what instrumentation and -g cost the compiler itself. Then the
# same per command, on an empty file (-c), where the wrapper's fixed cost shows most.
#
#   bench/wrapper_time.sh [BUILD_DIR (default build-bench)] [RUNS (default 5)]
#
# BUILD_DIR must have bin/fnprof-cc (cmake --build). The sources go to bench/.cache/src
# (apt-get source lz4: needs deb-src entries, which bench/setup enables).
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(cd "${1:-build-bench}" && pwd)
runs=${2:-5}
wcc=$build/bin/fnprof-cc
[ -x "$wcc" ] || { echo "wrapper_time: $wcc: not built" >&2; exit 2; }
lib=$(cd "$build/lib" && pwd)

src=bench/.cache/src
mkdir -p "$src"
if ! ls -d "$src"/lz4-*/ >/dev/null 2>&1; then
    (cd "$src" && apt-get source -qq lz4 >/dev/null)
fi
lz4=$(ls -d "$src"/lz4-*/ | head -1)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$lz4" "$work/lz4"

export FNPROF_CC=gcc XDG_CACHE_HOME="$work/cache"
flags="-g -finstrument-functions -finstrument-functions-exclude-file-list=/usr/include,/usr/lib/gcc"
ldflags="-L$lib -Wl,-rpath,$lib -Wl,--push-state,--no-as-needed -lfnprof -Wl,--pop-state"

now() { date +%s.%N; }
build_once() { # config -> "wall cpu" seconds (cpu: user + sys of make and its children)
    make -C "$work/lz4" clean >/dev/null 2>&1
    local TIMEFORMAT='%R %U %S'
    {
        time case $1 in
        plain) make -C "$work/lz4" -j2 lz4 CC=gcc >/dev/null 2>&1 ;;
        flags) make -C "$work/lz4" -j2 lz4 CC="gcc $flags" LDFLAGS="$ldflags" >/dev/null 2>&1 ;;
        wrapper) make -C "$work/lz4" -j2 lz4 CC="$wcc" >/dev/null 2>&1 ;;
        esac
    } 2>&1 | awk '{printf "%.3f %.3f\n", $1, $2 + $3}'
}
median() { sort -n | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

"$wcc" -c -x c /dev/null -o "$work/warm.o" # fills the detection cache, as the first compile of a build does
for config in plain flags wrapper; do : >"$work/$config.times"; done
for ((i = 0; i < runs; i++)); do
    for config in plain flags wrapper; do
        build_once $config >>"$work/$config.times"
    done
done
report() { # column label
    local p f w
    p=$(cut -d' ' -f"$1" "$work/plain.times" | median)
    f=$(cut -d' ' -f"$1" "$work/flags.times" | median)
    w=$(cut -d' ' -f"$1" "$work/wrapper.times" | median)
    echo "make -j2 lz4, $2, median of $runs (s): plain $p, flags $f, wrapper $w"
    awk -v p="$p" -v f="$f" -v w="$w" 'BEGIN {
        printf "  the wrapper itself (wrapper/flags): %+.1f%%; wrapper/plain %+.1f%%; flags/plain %+.1f%%\n",
            (w / f - 1) * 100, (w / p - 1) * 100, (f / p - 1) * 100 }'
}
report 1 "wall time"
report 2 "cpu time (user+sys)"

# Per command: 200 compiles of an empty file, with the flags and through the wrapper.
echo 'int f(void) { return 0; }' >"$work/empty.c"
per_cmd() {
    local t0 t1
    t0=$(now)
    for ((j = 0; j < 200; j++)); do "$@" -c "$work/empty.c" -o "$work/empty.o"; done
    t1=$(now)
    echo "$t0 $t1" | awk '{printf "%.2f\n", ($2 - $1) * 1000 / 200}'
}
# shellcheck disable=SC2086
fc=$(per_cmd gcc $flags)
wc=$(per_cmd "$wcc")
probe_t0=$(now)
for ((j = 0; j < 200; j++)); do gcc -dM -E -x c /dev/null >/dev/null; done
probe=$(echo "$probe_t0 $(now)" | awk '{printf "%.2f", ($2 - $1) * 1000 / 200}')
echo "one compile of an empty file (ms): gcc+flags $fc, fnprof-cc $wc; an uncached gcc/clang probe would add $probe"
