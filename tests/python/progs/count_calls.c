/* The exact oracle for a real extension's native calls: an -finstrument-functions hook
 * pair that only counts entries per function address, preloaded into a run without
 * fnprof. At exit it writes "offset-in-module module-path count" lines to COUNT_OUTPUT,
 * the offset from the module's load base, so that the test names them with nm. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#define SLOTS 4096

static void *fn_of[SLOTS];
static unsigned long count_of[SLOTS];

__attribute__((no_instrument_function)) void __cyg_profile_func_enter(void *fn, void *site)
{
    (void)site;
    size_t i = ((size_t)fn >> 4) % SLOTS;
    for (size_t n = 0; n < SLOTS; n++, i = (i + 1) % SLOTS) {
        if (fn_of[i] == fn || !fn_of[i]) {
            fn_of[i] = fn;
            count_of[i]++; /* the test's program is single-threaded */
            return;
        }
    }
}

__attribute__((no_instrument_function)) void __cyg_profile_func_exit(void *fn, void *site)
{
    (void)fn;
    (void)site;
}

__attribute__((no_instrument_function, destructor)) static void write_counts(void)
{
    const char *path = getenv("COUNT_OUTPUT");
    FILE *f = path ? fopen(path, "w") : NULL;
    if (!f)
        return;
    for (size_t i = 0; i < SLOTS; i++) {
        Dl_info info;
        if (fn_of[i] && dladdr(fn_of[i], &info) && info.dli_fname)
            fprintf(f, "%lx %s %lu\n", (unsigned long)((char *)fn_of[i] - (char *)info.dli_fbase),
                    info.dli_fname, count_of[i]);
    }
    fclose(f);
}
/* SPDX-License-Identifier: MIT */
