/* SPDX-License-Identifier: MIT */
/*
 * The module map: which loaded ELF object holds a runtime address, and its load bias.
 * The bias is dl_iterate_phdr's dlpi_addr (0 for a non-PIE executable), not dladdr's
 * dli_fbase, which is the lowest mapped address (0x400000 for non-PIE): docs/symbols.md.
 */
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolizer.h"

struct collect {
    struct fnp_modmap *map;
    size_t cap;
    int err;
};

static int add_module(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct collect *c = arg;
    uint64_t lo = UINT64_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uint64_t start = info->dlpi_addr + ph->p_vaddr;
        if (start < lo)
            lo = start;
        if (start + ph->p_memsz > hi)
            hi = start + ph->p_memsz;
    }
    if (lo >= hi)
        return 0;

    char buf[PATH_MAX];
    const char *path = info->dlpi_name;
    if (!path || !*path) {
        /* The main program has an empty name: its file is /proc/self/exe. */
        ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
        if (n <= 0)
            return 0;
        buf[n] = 0;
        path = buf;
    } else if (strncmp(path, "linux-vdso", 10) == 0 || strncmp(path, "linux-gate", 10) == 0) {
        return 0; /* no file behind it */
    }
    if (c->map->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 16;
        struct fnp_module *m = realloc(c->map->mods, cap * sizeof(*m));
        if (!m) {
            c->err = -ENOMEM;
            return 1;
        }
        c->map->mods = m;
        c->cap = cap;
    }
    struct fnp_module *m = &c->map->mods[c->map->n];
    m->path = strdup(path);
    if (!m->path) {
        c->err = -ENOMEM;
        return 1;
    }
    m->bias = info->dlpi_addr;
    m->lo = lo;
    m->hi = hi;
    c->map->n++;
    return 0;
}

static int by_lo(const void *a, const void *b)
{
    const struct fnp_module *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

int fnp_modmap_load(struct fnp_modmap *map)
{
    memset(map, 0, sizeof(*map));
    struct collect c = {.map = map};
    dl_iterate_phdr(add_module, &c);
    if (c.err) {
        fnp_modmap_free(map);
        return c.err;
    }
    qsort(map->mods, map->n, sizeof(*map->mods), by_lo);
    return 0;
}

const struct fnp_module *fnp_modmap_find(const struct fnp_modmap *map, uint64_t addr)
{
    size_t lo = 0, hi = map->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const struct fnp_module *m = &map->mods[mid];
        if (addr < m->lo)
            hi = mid;
        else if (addr >= m->hi)
            lo = mid + 1;
        else
            return m;
    }
    return NULL;
}

void fnp_modmap_free(struct fnp_modmap *map)
{
    if (!map)
        return;
    for (size_t i = 0; i < map->n; i++)
        free(map->mods[i].path);
    free(map->mods);
    memset(map, 0, sizeof(*map));
}
