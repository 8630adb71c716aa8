/* SPDX-License-Identifier: MIT */
/*
 * dlclose, interposed: a library unloaded before exit is gone from the module map the dump
 * reads, and its address range may be reused by the next library loaded. So before the
 * real dlclose, the library's path and addresses are noted; if it is really unmapped (the
 * last reference went), it joins the list of retired modules and the module generation
 * moves on. Nodes carry the generation they were created under (runtime.h: fnp_key), and
 * the dump names each from the module that held its address at that generation.
 */
#include <dlfcn.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

#define FNP_WRAP __attribute__((visibility("default"), no_instrument_function))
#define GEN_LIMIT 0xffffu /* generations that fit above FNP_ADDR_BITS */

typedef int (*close_fn)(void *handle);
static close_fn real_dlclose;
static struct fnp_retired *retired;

void fnp_unload_init(void)
{
    real_dlclose = (close_fn)dlsym(RTLD_NEXT, "dlclose");
}

struct fnp_retired *fnp_retired_list(void)
{
    return __atomic_load_n(&retired, __ATOMIC_ACQUIRE);
}

struct span {
    uintptr_t bias;
    const char *name;
    uint64_t lo, hi;
    int found;
};

static FNP_NOINSTR int find_span(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct span *s = arg;
    if (info->dlpi_addr != s->bias || !info->dlpi_name || strcmp(info->dlpi_name, s->name) != 0)
        return 0;
    s->lo = UINT64_MAX;
    s->hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uint64_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        s->lo = lo < s->lo ? lo : s->lo;
        s->hi = hi > s->hi ? hi : s->hi;
    }
    s->found = 1;
    return 1;
}

/* The generation moves on unless recording stopped meanwhile (a CAS, so that a dump's
 * store of 0 is never undone). Past GEN_LIMIT it stays: later reuse may be misnamed. */
static FNP_NOINSTR uint32_t next_generation(void)
{
    uint64_t rec = __atomic_load_n(&fnp_recording, __ATOMIC_RELAXED);
    while (rec && (rec >> FNP_ADDR_BITS) < GEN_LIMIT &&
           !__atomic_compare_exchange_n(&fnp_recording, &rec, rec + FNP_GEN_ONE, 1,
                                        __ATOMIC_RELEASE, __ATOMIC_RELAXED))
        ;
    return (uint32_t)(rec >> FNP_ADDR_BITS);
}

/* Whether an object mapped at bias still holds address lo. */
static FNP_NOINSTR int covers(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct span *s = arg;
    if (info->dlpi_addr != s->bias)
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uint64_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && s->lo >= lo && s->lo < lo + ph->p_memsz)
            return s->found = 1;
    }
    return 0;
}

/* The real dlclose; the module of handle noted as retired if that unmapped it. */
static FNP_NOINSTR int close_and_note(void *handle)
{
    struct link_map *lm = NULL;
    struct span s = {0};
    char *path = NULL;
    if (__atomic_load_n(&fnp_recording, __ATOMIC_RELAXED) &&
        dlinfo(handle, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name && lm->l_name[0]) {
        /* dl_iterate_phdr names the object as it was loaded: compare with that. */
        s.bias = lm->l_addr;
        s.name = lm->l_name;
        dl_iterate_phdr(find_span, &s);
        if (s.found && !(path = realpath(lm->l_name, NULL)))
            path = strdup(lm->l_name);
    }
    uint64_t patched = fnp_patch_close_begin(handle);
    int rc = real_dlclose(handle);
    fnp_patch_close_end(patched);
    if (!path || rc != 0) {
        free(path);
        return rc;
    }
    /* Other references, or RTLD_NODELETE: still mapped, nothing moved. */
    struct span after = {.bias = s.bias, .lo = s.lo};
    dl_iterate_phdr(covers, &after);
    struct fnp_retired *r = after.found ? NULL : malloc(sizeof(*r));
    if (!r) {
        free(path);
        return rc;
    }
    r->mod = (struct fnp_raw_module){.path = path, .bias = s.bias, .lo = s.lo, .hi = s.hi};
    r->mod.gen_end = next_generation() + 1;
    struct fnp_retired *head = __atomic_load_n(&retired, __ATOMIC_RELAXED);
    do {
        r->next = head;
    } while (
        !__atomic_compare_exchange_n(&retired, &head, r, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED));
    return rc;
}

FNP_WRAP int dlclose(void *handle)
{
    if (!real_dlclose)
        fnp_unload_init();
    return close_and_note(handle);
}
