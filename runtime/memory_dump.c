/* SPDX-License-Identifier: MIT */
/*
 * The memory profile (PROF_MEMORY), written at exit after recording stopped: the calling-
 * context tree the timing profile would have, its calls the same, with bytes for ticks
 * (tick_seconds 1: "1 second" is 1 byte). A node's own ticks are the bytes allocated in
 * that context; its ticks, those allocated under it. The model then gives, by cProfile's
 * rules, a function's tottime as the bytes it allocated itself and its cumtime as the bytes
 * allocated under its primitive calls, exactly (integers below 2^53 are exact doubles).
 *
 * Why inclusive bytes summed up the tree are what the model needs where recursion was folded
 * (cct.c: a link's calls counted on an ancestor, its target): only the primitive calls of a
 * function or an edge add ticks to a cumtime, and a target, and every node from it down to a
 * link that returns to it, have their function and their edge open above them (the cycle is
 * repeated), so their ticks enter only their own time, which is their own bytes either way.
 *
 * Allocations made outside every recorded call of a thread (before main's first call, after
 * its return, in a thread that runs no instrumented code) hang from a root of their own,
 * ('~', 0, '<outside recorded calls>'), one call per such thread.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"
#include "runtime.h"

#define OUTSIDE_NAME "<outside recorded calls>"

struct by_node {
    const struct fnp_node *node;
    const struct fnp_mem_ctx *ctx;
};

static int cmp_node(const void *a, const void *b)
{
    const struct by_node *x = a, *y = b;
    return x->node < y->node ? -1 : x->node > y->node;
}

/* Every context of every thread, sorted by node; NULL when out of memory. */
static struct by_node *all_contexts(size_t *n)
{
    size_t count = 0, cap = 0;
    struct by_node *all = NULL;
    for (struct fnp_thread *t = fnp_thread_list(); t; t = t->next) {
        struct fnp_mem_thread *m = __atomic_load_n(&t->mem, __ATOMIC_ACQUIRE);
        for (const struct fnp_mem_ctx *c = m ? __atomic_load_n(&m->list, __ATOMIC_ACQUIRE) : NULL;
             c; c = c->next) {
            if (count == cap && fnp_array_grow((void **)&all, &cap, count + 1, sizeof(*all))) {
                free(all);
                return NULL;
            }
            all[count++] = (struct by_node){c->node, c};
        }
    }
    if (count > 1) /* all is NULL without contexts, and qsort's pointer must not be */
        qsort(all, count, sizeof(*all), cmp_node);
    *n = count;
    return all ? all : calloc(1, sizeof(*all));
}

static const struct fnp_mem_ctx *find(const struct by_node *all, size_t n,
                                      const struct fnp_node *node)
{
    struct by_node key = {.node = node};
    const struct by_node *hit = bsearch(&key, all, n, sizeof(key), cmp_node);
    return hit ? hit->ctx : NULL;
}

/* A context's columns, its own bytes in *bytes; frees by any thread. */
static struct fnp_mem_node columns(const struct fnp_mem_ctx *c, uint64_t *bytes)
{
    if (!c) {
        *bytes = 0;
        return (struct fnp_mem_node){0};
    }
    *bytes = __atomic_load_n(&c->bytes, __ATOMIC_RELAXED);
    return (struct fnp_mem_node){
        .allocs = __atomic_load_n(&c->allocs, __ATOMIC_RELAXED),
        .frees = __atomic_load_n(&c->frees, __ATOMIC_RELAXED) +
                 __atomic_load_n(&c->rfrees, __ATOMIC_RELAXED),
        .freed = __atomic_load_n(&c->freed, __ATOMIC_RELAXED) +
                 __atomic_load_n(&c->rfreed, __ATOMIC_RELAXED),
        .peak = __atomic_load_n(&c->peak, __ATOMIC_RELAXED),
    };
}

struct totals {
    uint64_t allocs, bytes, live;
};

/* The forest of the memory profile into raw (nodes and mem malloc'd, caller frees):
 * snap's nodes, then one root per thread that allocated outside its calls. */
static int make_raw(struct fnp_raw *raw, const struct fnp_snapshot *snap, uintptr_t outside_key,
                    struct totals *tot)
{
    /* The list read once: a thread that attaches meanwhile (it passed the recording check
     * just before the exit) joins at the head, out of both walks. */
    struct fnp_thread *head = fnp_thread_list();
    size_t nctx = 0, nthreads = 0;
    for (struct fnp_thread *t = head; t; t = t->next)
        nthreads++;
    struct by_node *all = all_contexts(&nctx);
    size_t cap = snap->n + nthreads;
    struct fnp_raw_node *nodes = malloc((cap ? cap : 1) * sizeof(*nodes));
    struct fnp_mem_node *mem = malloc((cap ? cap : 1) * sizeof(*mem));
    uint8_t *seen = calloc(nthreads ? nthreads : 1, 1);
    if (!all || !nodes || !mem || !seen) {
        free(all);
        free(nodes);
        free(mem);
        free(seen);
        return -ENOMEM;
    }
    size_t n = 0;
    for (size_t i = 0; i < snap->n; i++, n++) {
        uint64_t bytes;
        nodes[n] = snap->nodes[i];
        mem[n] = columns(find(all, nctx, snap->from[i]), &bytes);
        nodes[n].ticks = bytes;
        nodes[n].back = 0;
        seen[nodes[n].thread] = 1;
    }
    uint32_t thread = 0;
    for (struct fnp_thread *t = head; t; t = t->next, thread++) {
        uint64_t bytes;
        struct fnp_mem_node m = columns(find(all, nctx, &t->root), &bytes);
        if (!m.allocs)
            continue;
        nodes[n] = (struct fnp_raw_node){.fn = outside_key,
                                         .parent = FNP_NO_PARENT,
                                         .thread = thread,
                                         .ncalls = 1,
                                         .ticks = bytes};
        mem[n++] = m;
        seen[thread] = 1;
    }
    for (size_t i = 0; i < n; i++) {
        tot->allocs += mem[i].allocs;
        tot->bytes += nodes[i].ticks;
        tot->live += nodes[i].ticks - mem[i].freed;
    }
    /* Own bytes to inclusive: children come after their parent. */
    for (size_t i = n; i-- > 0;) {
        if (nodes[i].parent != FNP_NO_PARENT)
            nodes[nodes[i].parent].ticks += nodes[i].ticks;
    }
    raw->threads = 0;
    for (size_t i = 0; i < nthreads; i++)
        raw->threads += seen[i];
    raw->nodes = nodes;
    raw->mem = mem;
    raw->n = n;
    free(all);
    free(seen);
    return 0;
}

static int write_memory(const char *path, const struct fnp_snapshot *snap)
{
    /* The program's regions, and one more for allocations outside every call. */
    size_t nreg;
    const struct fnp_raw_region *regions = fnp_regions(&nreg);
    struct fnp_raw_region *reg = malloc((nreg + 1) * sizeof(*reg));
    if (!reg)
        return -ENOMEM;
    memcpy(reg, regions, nreg * sizeof(*reg));
    reg[nreg] = (struct fnp_raw_region){"~", 0, OUTSIDE_NAME};
    struct fnp_raw raw = {
        .regions = reg,
        .nregions = nreg + 1,
        .tick_seconds = 1,
        .merged = snap->merged,
        .merge_causes = snap->merge_causes,
        .max_nodes = fnp_max_nodes(),
    };
    struct totals tot = {0};
    struct fnp_profile prof;
    fnp_profile_init(&prof);
    int rc = make_raw(&raw, snap, FNP_REGION_TAG | (nreg + 1), &tot);
    /* A process with no instrumented call (a shell, a launcher fnprof was preloaded into)
     * writes no memory profile, as it writes no timing profile: its allocations would only
     * be <outside recorded calls>, and its file would take the name from the program's. */
    if (!rc && (raw.n == 0 || snap->n == 0)) {
        fnp_log("no instrumented call was recorded; %s not written", path);
        rc = -ENODATA;
    }
    if (!rc)
        rc = fnp_dump_build(&prof, &raw);
    if (!rc)
        rc = fnp_meta_fill(&prof);
    if (!rc)
        rc = fnp_profile_set_meta(&prof, "profile", "memory");
    if (!rc)
        rc = fnp_profile_set_meta(&prof, "unit", "bytes");
    /* said at load; the file must say it too, for whoever reads it later */
    if (!rc && fnp_mem_incomplete())
        rc = fnp_profile_set_meta(&prof, "incomplete", fnp_mem_incomplete());
    if (!rc)
        rc = fnp_write_file_atomic(path, fnp_profile_write_fn, &prof);
    if (rc && rc != -ENODATA)
        fnp_log("%s: cannot write the memory profile: %s", path, fnp_write_file_strerror(rc));
    if (!rc && fnp_mem_dropped())
        fnp_log("%llu allocations were not recorded (no memory for fnprof's table of live "
                "blocks)",
                (unsigned long long)fnp_mem_dropped());
    if (!rc && !fnp_config.quiet)
        fnp_log("wrote %s (memory: %llu allocations, %llu bytes, %llu bytes live at exit; %zu "
                "functions, %zu thread%s)",
                path, (unsigned long long)tot.allocs, (unsigned long long)tot.bytes,
                (unsigned long long)tot.live, prof.nfuncs, raw.threads,
                raw.threads == 1 ? "" : "s");
    fnp_profile_free(&prof);
    free((void *)raw.nodes);
    free((void *)raw.mem);
    free(reg);
    return rc;
}

void fnp_mem_dump(void)
{
    if (!fnp_mem_stop())
        return;
    fnp_mem_hold();
    char *path = fnp_env_path(fnp_config.memory, 0);
    struct fnp_snapshot snap;
    if (!path) {
        fnp_log("out of memory; memory profile not written");
    } else if (fnp_snapshot_take_nodes(&snap, fnp_clock_now()) != 0) {
        fnp_log("%s: out of memory while writing the memory profile", path);
        fnp_snapshot_free(&snap);
    } else {
        write_memory(path, &snap);
        fnp_snapshot_free(&snap);
    }
    free(path);
    fnp_mem_release();
}
