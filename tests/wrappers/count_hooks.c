/*
 * An exact counting hook for -finstrument-functions, the reference the wrapper's lz4 test
 * compares fnprof's profile with: LD_PRELOAD it into the same binary (its hooks come before
 * libfnprof.so's) and it counts every enter per function address, then writes at exit
 * "<module> <offset in module> <address> <count>" lines to $COUNT_OUTPUT.
 *
 * Deliberately naive, so that it is easy to trust: an open-addressing table updated with
 * atomics, no timing, no stack. Never built with -finstrument-functions.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define SLOTS (1u << 20) /* far more functions than any test program has */

static struct slot {
    uintptr_t fn;
    uint64_t count;
} table[SLOTS];

static unsigned long lost; /* enters that found the table full */

__attribute__((no_instrument_function)) void __cyg_profile_func_enter(void *fn, void *site)
{
    (void)site;
    uintptr_t key = (uintptr_t)fn;
    for (uint32_t i = (uint32_t)((key >> 4) * 2654435761u) & (SLOTS - 1), n = 0; n < SLOTS;
         i = (i + 1) & (SLOTS - 1), n++) {
        uintptr_t cur = __atomic_load_n(&table[i].fn, __ATOMIC_ACQUIRE);
        if (cur == 0) {
            uintptr_t expected = 0;
            if (__atomic_compare_exchange_n(&table[i].fn, &expected, key, 0, __ATOMIC_ACQ_REL,
                                            __ATOMIC_ACQUIRE))
                cur = key;
            else
                cur = expected;
        }
        if (cur == key) {
            __atomic_fetch_add(&table[i].count, 1, __ATOMIC_RELAXED);
            return;
        }
    }
    __atomic_fetch_add(&lost, 1, __ATOMIC_RELAXED);
}

__attribute__((no_instrument_function)) void __cyg_profile_func_exit(void *fn, void *site)
{
    (void)fn;
    (void)site;
}

__attribute__((no_instrument_function, destructor)) static void dump(void)
{
    const char *path = getenv("COUNT_OUTPUT");
    if (!path || !*path)
        return;
    FILE *f = fopen(path, "w");
    if (!f)
        return;
    for (uint32_t i = 0; i < SLOTS; i++) {
        if (!table[i].fn)
            continue;
        Dl_info info;
        if (dladdr((void *)table[i].fn, &info) && info.dli_fname)
            fprintf(f, "%s %#lx %#lx %llu\n", info.dli_fname,
                    (unsigned long)(table[i].fn - (uintptr_t)info.dli_fbase),
                    (unsigned long)table[i].fn, (unsigned long long)table[i].count);
        else
            fprintf(f, "? 0 %#lx %llu\n", (unsigned long)table[i].fn,
                    (unsigned long long)table[i].count);
    }
    if (lost)
        fprintf(f, "lost 0 0 %lu\n", lost);
    fclose(f);
}
/* SPDX-License-Identifier: MIT */
