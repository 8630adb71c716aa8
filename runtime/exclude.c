/* SPDX-License-Identifier: MIT */
/*
 * PROF_FILTER: functions a Score-P filter file leaves out (profile/filter.h, docs/filter.md).
 *
 * The verdict is taken once, at load, before anything is recorded: every function of every
 * loaded object that calls the hooks is named by the symbolizer (as the profile will name
 * it) and run through the filter; the addresses left out form one sorted array, read-only
 * afterwards (an interpreter's frames are judged by name when fnprof_frame_key makes their
 * keys: an excluded one gets none), so the hooks' cold paths search it without a lock, from a
 * signal handler too. An excluded function then behaves as if it were not instrumented: its enter
 * and exit push and pop nothing (cct.c, hooks.c), its time stays in its caller's own time, and what
 * it calls hangs from its caller. Objects loaded later by dlopen are not filtered.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "filter.h"
#include "fnprof.h"
#include "runtime.h"
#include "symbolizer.h"

int fnp_exclude_on;
static uintptr_t *excluded; /* runtime addresses, sorted */
static size_t nexcluded;
/* Kept for the frames of an interpreter (fnprof_frame_key), which are named as they come:
 * read-only once set. */
static struct fnp_filter *frames_filter;

int fnp_exclude_frame(const char *file, const char *name)
{
    return frames_filter && fnp_filter_excludes(frames_filter, file, name, name);
}

FNP_NOINSTR int fnp_exclude_has(uintptr_t addr)
{
    size_t lo = 0, hi = nexcluded;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (excluded[mid] < addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < nexcluded && excluded[lo] == addr;
}

struct scan {
    const struct fnp_filter *filter;
    struct fnp_symbolizer_api *api;
    struct fnp_symbolizer *sym;
    uintptr_t *v;
    size_t n, cap;
    size_t funcs; /* functions of instrumented objects looked at */
    int nomem;
};

static int push(struct scan *s, uintptr_t a)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 256;
        uintptr_t *v = realloc(s->v, cap * sizeof(*v));
        if (!v)
            return -ENOMEM;
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = a;
    return 0;
}

static void scan_object(struct scan *s, const char *path, uintptr_t bias, int main)
{
    const struct fnp_sym_func *f;
    size_t n;
    int hooks;
    /* objects that call the hooks, and a program with libfnprof.a linked in (libc and
     * libfnprof.so define the hooks too, but call none: skipped); objects with patchable
     * sites (patch_sites.c leaves out the sites of the functions excluded here) */
    if (s->api->functions(s->sym, path, &f, &n, &hooks) || !n ||
        !(hooks & 1 || (hooks && main) || fnp_sites_in_file(path)))
        return;
    uint64_t *addrs = malloc(n * sizeof(*addrs));
    struct fnp_symbol *out = malloc(n * sizeof(*out));
    if (!addrs || !out) {
        s->nomem = 1;
        goto done;
    }
    for (size_t i = 0; i < n; i++)
        addrs[i] = f[i].addr;
    s->api->resolve(s->sym, path, addrs, n, out);
    s->funcs += n;
    for (size_t i = 0; i < n; i++)
        if (fnp_filter_excludes(s->filter, out[i].file, out[i].name, f[i].raw) &&
            push(s, (uintptr_t)(addrs[i] + bias)))
            s->nomem = 1;
done:
    free(addrs);
    free(out);
}

static int cmp_addr(const void *a, const void *b)
{
    uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
    return x < y ? -1 : x > y;
}

void fnp_exclude_init(const char *path)
{
    char err[512];
    struct fnp_filter *filter = fnp_filter_load(path, err, sizeof(err));
    if (!filter) {
        fnp_log("PROF_FILTER: %s; recording every function", err);
        return;
    }
    /* The objects loaded now, listed before the symbolizer loads its own (libdwarf,
     * libstdc++, ...): those call no hook, and reading them would cost more than all the
     * rest. The program is the first. */
    struct fnp_modmap map = {0};
    struct fnp_symbolizer_api api;
    struct scan s = {.filter = filter, .api = &api};
    if (fnp_modmap_load(&map)) {
        s.nomem = 1;
        goto out;
    }
    if (fnp_symload_get(&api) || !api.functions) {
        fnp_log("PROF_FILTER: the symbolizer cannot load; recording every function");
        goto out;
    }
    if (!(s.sym = api.create(NULL, NULL))) {
        s.nomem = 1;
        goto out;
    }
    if (api.debug_dirs && api.set_debug_dirs)
        api.set_debug_dirs(s.sym, api.debug_dirs);
    char exe[PATH_MAX];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    exe[k > 0 ? k : 0] = 0;
    for (size_t i = 0; i < map.n; i++)
        scan_object(&s, map.mods[i].path, (uintptr_t)map.mods[i].bias,
                    strcmp(map.mods[i].path, exe) == 0);
    api.destroy(s.sym);
    if (s.nomem)
        goto out;
    qsort(s.v, s.n, sizeof(*s.v), cmp_addr);
    excluded = s.v;
    nexcluded = s.n;
    s.v = NULL;
    fnp_exclude_on = nexcluded > 0;
    char line[64];
    snprintf(line, sizeof(line), "%zu of %zu functions", nexcluded, s.funcs);
    fnprof_add_metadata("filter", path);
    fnprof_add_metadata("filter excluded", line);
out:
    if (s.nomem)
        fnp_log("PROF_FILTER: out of memory; recording every function");
    fnp_modmap_free(&map);
    free(s.v);
    frames_filter = filter;
}
