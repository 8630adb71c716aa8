/* SPDX-License-Identifier: MIT */
/*
 * What the profile cannot see, said once when it is written. A library the program ships
 * (not the system's) that calls no hook runs unseen: its time is its callers' own time, and
 * nothing at run time can measure how much (the hooks see only instrumented functions'
 * entries and exits; a call into such a library shows no event). What can be said exactly
 * is which libraries those are, and how much of the run sits in the own time of the
 * function with the most: the place to look first. Also in the metadata, "uninstrumented".
 */
#include <stdio.h>
#include <string.h>

#include "profile.h"
#include "runtime.h"
#include "symbolizer.h"

/* Libraries the system installs: uninstrumented by design, not worth a line. */
static int system_path(const char *p)
{
    static const char *const dirs[] = {"/lib/", "/lib64/", "/usr/lib/", "/usr/lib64/",
                                       "/usr/libexec/"};
    for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
        if (strncmp(p, dirs[i], strlen(dirs[i])) == 0)
            return 1;
    return 0;
}

/* fnprof's own objects: libfnprof.so, its symbolizer module. */
static int own_path(const char *p)
{
    const char *base = strrchr(p, '/');
    base = base ? base + 1 : p;
    return strncmp(base, "libfnprof", 9) == 0;
}

/* PROF_LIBCALLS recorded calls into the library named base (plt.c keys them (base, 0,
 * name)): their time is theirs, not their callers'. */
static int calls_recorded(const struct fnp_profile *prof, const char *base)
{
    for (size_t i = 0; fnp_libcalls_watch && i < prof->nfuncs; i++)
        if (prof->funcs[i].key.line == 0 && strcmp(prof->funcs[i].key.file, base) == 0)
            return 1;
    return 0;
}

void fnp_coverage_note(struct fnp_profile *prof, const struct fnp_modmap *map,
                       const struct fnp_symbolizer_api *api)
{
    if (!api || !api->functions || !map->n)
        return;
    struct fnp_symbolizer *s = api->create(NULL, NULL);
    if (!s)
        return;
    char list[512] = "";
    size_t len = 0, count = 0;
    for (size_t i = 0; i < map->n; i++) {
        const char *p = map->mods[i].path;
        if (!p || p[0] != '/' || system_path(p) || own_path(p))
            continue;
        const struct fnp_sym_func *f;
        size_t n;
        int hooks;
        if (api->functions(s, p, &f, &n, &hooks) || hooks || !n || fnp_sites_in_file(p))
            continue;
        const char *base = strrchr(p, '/') + 1;
        if (calls_recorded(prof, base))
            continue;
        int k = snprintf(list + len, sizeof(list) - len, "%s%s", count ? ", " : "", base);
        if (k > 0 && len + (size_t)k < sizeof(list))
            len += (size_t)k;
        count++;
    }
    api->destroy(s);
    if (!count)
        return;
    fnp_profile_set_meta(prof, "uninstrumented", list);
    /* the function with the most own time, and its share of all own time */
    double total = 0, top = 0;
    const struct fnp_func *best = NULL;
    for (size_t i = 0; i < prof->nfuncs; i++) {
        total += prof->funcs[i].st.tottime;
        if (!best || prof->funcs[i].st.tottime > top) {
            best = &prof->funcs[i];
            top = best->st.tottime;
        }
    }
    /* once a process: the trace, cycles and on-demand dumps build profiles too */
    static int said;
    if (said++)
        return;
    if (best && total > 0 && top >= total / 2)
        fnp_log("not instrumented, so their time is their callers' own time: %s; %.0f%% of "
                "the run is %s's own time (fnprof doctor tells more)",
                list, 100 * top / total, best->key.name);
    else
        fnp_log("not instrumented, so their time is their callers' own time: %s (fnprof "
                "doctor tells more)",
                list);
}
