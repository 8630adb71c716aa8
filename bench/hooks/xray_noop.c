/* SPDX-License-Identifier: MIT */
/*
 * Linked into the bench's XRay builds (clang -fxray-instrument with compiler-rt's XRay
 * runtime), never instrumented. With BENCH_XRAY_NOOP set, a constructor installs a handler
 * that returns at once, so that XRAY_OPTIONS=patch_premain=true measures XRay's patched
 * sleds, trampolines and handler call: the least a profiler on XRay's runtime can cost,
 * as limit.c is for -finstrument-functions. Without it the runtime keeps its own (empty)
 * handler slot and, with patch_premain=false, never patches: the sleds as compiled.
 * BENCH_COUNT=<file> (with patch_premain=true) installs a handler that counts the entries
 * instead and writes their number there at exit: the calls the XRay build makes.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* compiler-rt's xray/xray_interface.h is C++ only; its extern "C" entry point, with the
 * enum XRayEntryType argument as the int it is passed as (0: entry) */
int __xray_set_handler(void (*entry)(int32_t, int));

#define LOCAL __attribute__((xray_never_instrument))

static const char *count_path;
static unsigned long long entries;

static LOCAL void noop(int32_t fn, int type)
{
    (void)fn;
    (void)type;
}

static LOCAL void count(int32_t fn, int type)
{
    (void)fn;
    if (type == 0)
        __atomic_add_fetch(&entries, 1, __ATOMIC_RELAXED);
}

static LOCAL void write_count(void)
{
    FILE *f = fopen(count_path, "w");
    if (f) {
        fprintf(f, "%llu\n", __atomic_load_n(&entries, __ATOMIC_RELAXED));
        fclose(f);
    }
}

__attribute__((constructor)) static LOCAL void xray_noop_init(void)
{
    const char *on = getenv("BENCH_XRAY_NOOP");
    count_path = getenv("BENCH_COUNT");
    if (count_path && *count_path) {
        __xray_set_handler(count);
        atexit(write_count);
    } else if (on && *on)
        __xray_set_handler(noop);
}
