/* SPDX-License-Identifier: MIT */
/*
 * The cProfile model: functions keyed by (file, line, name), caller->callee edges, and the
 * derivation of cProfile's numbers from a calling-context forest.
 *
 * cProfile decides at each return whether a call was recursive by counting open
 * activations of the function (and, separately, of the caller->callee pair). In a
 * calling-context forest the open activations at a node are exactly its ancestors, so the
 * same decision is made here by one depth-first pass with per-function and per-edge
 * counters of the ancestors on the current path (see _lsprof.c Stop() for the original).
 */
#include <errno.h>
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"

#define EMPTY_SLOT UINT32_MAX

void fnp_profile_init(struct fnp_profile *p)
{
    memset(p, 0, sizeof(*p));
}

void fnp_profile_free(struct fnp_profile *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->nfuncs; i++) {
        free((char *)p->funcs[i].key.file);
        free((char *)p->funcs[i].key.name);
    }
    free(p->funcs);
    free(p->edges);
    free(p->func_slots);
    free(p->edge_slots);
    fnp_tree_clear(p);
    for (size_t i = 0; i < p->nmeta; i++) {
        free(p->meta[i].key);
        free(p->meta[i].value);
    }
    free(p->meta);
    memset(p, 0, sizeof(*p));
}

const char *fnp_profile_meta(const struct fnp_profile *p, const char *key)
{
    for (size_t i = 0; i < p->nmeta; i++)
        if (strcmp(p->meta[i].key, key) == 0)
            return p->meta[i].value;
    return NULL;
}

int fnp_profile_set_meta(struct fnp_profile *p, const char *key, const char *value)
{
    char *v = strdup(value);
    if (!v)
        return -ENOMEM;
    for (size_t i = 0; i < p->nmeta; i++)
        if (strcmp(p->meta[i].key, key) == 0) {
            free(p->meta[i].value);
            p->meta[i].value = v;
            return 0;
        }
    char *k = strdup(key);
    struct fnp_meta *meta = realloc(p->meta, (p->nmeta + 1) * sizeof(*meta));
    if (!k || !meta) {
        free(k);
        free(v);
        if (meta)
            p->meta = meta;
        return -ENOMEM;
    }
    p->meta = meta;
    p->meta[p->nmeta++] = (struct fnp_meta){k, v};
    return 0;
}

void fnp_profile_del_meta(struct fnp_profile *p, const char *key)
{
    for (size_t i = 0; i < p->nmeta; i++)
        if (strcmp(p->meta[i].key, key) == 0) {
            free(p->meta[i].key);
            free(p->meta[i].value);
            memmove(&p->meta[i], &p->meta[i + 1], (p->nmeta - i - 1) * sizeof(*p->meta));
            p->nmeta--;
            return;
        }
}

static uint64_t hash_bytes(uint64_t h, const char *s)
{
    /* FNV-1a: keys are short paths and names; quality is ample for open addressing. */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

static uint64_t hash_key(const struct fnp_key *k)
{
    uint64_t h = hash_bytes(0xcbf29ce484222325ull, k->file);
    h = (h ^ k->line) * 0x100000001b3ull;
    return hash_bytes(h, k->name);
}

static uint64_t hash_edge(uint32_t caller, uint32_t callee)
{
    uint64_t h = ((uint64_t)caller << 32 | callee) * 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 29);
}

int fnp_key_cmp(const struct fnp_key *x, const struct fnp_key *y)
{
    int c = strcmp(x->file, y->file);
    if (c)
        return c;
    if (x->line != y->line)
        return x->line < y->line ? -1 : 1;
    return strcmp(x->name, y->name);
}

static int key_equal(const struct fnp_key *a, const struct fnp_key *b)
{
    return a->line == b->line && strcmp(a->name, b->name) == 0 && strcmp(a->file, b->file) == 0;
}

/* Rebuilds a slot table of twice the needed size; slots hold indices, so growing the
 * function or edge arrays never invalidates them. */
static int rehash(uint32_t **slots, size_t *mask, size_t count,
                  uint64_t (*hash)(const void *, size_t), const void *items)
{
    size_t cap = 16;
    while (cap < count * 2 + 2)
        cap *= 2;
    uint32_t *s = malloc(cap * sizeof(*s));
    if (!s)
        return -ENOMEM;
    memset(s, 0xff, cap * sizeof(*s));
    for (size_t i = 0; i < count; i++) {
        size_t j = hash(items, i) & (cap - 1);
        while (s[j] != EMPTY_SLOT)
            j = (j + 1) & (cap - 1);
        s[j] = (uint32_t)i;
    }
    free(*slots);
    *slots = s;
    *mask = cap - 1;
    return 0;
}

static uint64_t func_hash_at(const void *funcs, size_t i)
{
    return hash_key(&((const struct fnp_func *)funcs)[i].key);
}

static uint64_t edge_hash_at(const void *edges, size_t i)
{
    const struct fnp_edge *e = &((const struct fnp_edge *)edges)[i];
    return hash_edge(e->caller, e->callee);
}

int fnp_array_grow(void **arr, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : 64;
    while (n < need) {
        if (n > SIZE_MAX / 2)
            return -ENOMEM;
        n *= 2;
    }
    if (n > SIZE_MAX / size)
        return -ENOMEM;
    void *a = realloc(*arr, n * size);
    if (!a)
        return -ENOMEM;
    *arr = a;
    *cap = n;
    return 0;
}

int64_t fnp_profile_func(struct fnp_profile *p, const struct fnp_key *key)
{
    if (p->func_slots) {
        for (size_t j = hash_key(key) & p->func_slot_mask;; j = (j + 1) & p->func_slot_mask) {
            uint32_t i = p->func_slots[j];
            if (i == EMPTY_SLOT)
                break;
            if (key_equal(&p->funcs[i].key, key))
                return i;
        }
    }
    if (p->nfuncs >= UINT32_MAX - 1)
        return -ENOMEM;
    if (fnp_array_grow((void **)&p->funcs, &p->funcs_cap, p->nfuncs + 1, sizeof(*p->funcs)))
        return -ENOMEM;
    struct fnp_func *f = &p->funcs[p->nfuncs];
    memset(f, 0, sizeof(*f));
    f->key.file = strdup(key->file);
    f->key.name = strdup(key->name);
    f->key.line = key->line;
    if (!f->key.file || !f->key.name) {
        free((char *)f->key.file);
        free((char *)f->key.name);
        return -ENOMEM;
    }
    p->nfuncs++;
    if (!p->func_slots || p->nfuncs * 2 > p->func_slot_mask + 1) {
        if (rehash(&p->func_slots, &p->func_slot_mask, p->nfuncs, func_hash_at, p->funcs)) {
            p->nfuncs--;
            free((char *)f->key.file);
            free((char *)f->key.name);
            return -ENOMEM;
        }
    } else {
        size_t j = hash_key(key) & p->func_slot_mask;
        while (p->func_slots[j] != EMPTY_SLOT)
            j = (j + 1) & p->func_slot_mask;
        p->func_slots[j] = (uint32_t)(p->nfuncs - 1);
    }
    return (int64_t)(p->nfuncs - 1);
}

int64_t fnp_profile_find_edge(const struct fnp_profile *p, uint32_t caller, uint32_t callee)
{
    if (!p->edge_slots)
        return -1;
    for (size_t j = hash_edge(caller, callee) & p->edge_slot_mask;;
         j = (j + 1) & p->edge_slot_mask) {
        uint32_t i = p->edge_slots[j];
        if (i == EMPTY_SLOT)
            return -1;
        if (p->edges[i].caller == caller && p->edges[i].callee == callee)
            return i;
    }
}

int64_t fnp_profile_edge(struct fnp_profile *p, uint32_t caller, uint32_t callee)
{
    int64_t found = fnp_profile_find_edge(p, caller, callee);
    if (found >= 0)
        return found;
    if (caller >= p->nfuncs || callee >= p->nfuncs)
        return -EINVAL;
    if (p->nedges >= UINT32_MAX - 1)
        return -ENOMEM;
    if (fnp_array_grow((void **)&p->edges, &p->edges_cap, p->nedges + 1, sizeof(*p->edges)))
        return -ENOMEM;
    struct fnp_edge *e = &p->edges[p->nedges];
    memset(e, 0, sizeof(*e));
    e->caller = caller;
    e->callee = callee;
    p->nedges++;
    if (!p->edge_slots || p->nedges * 2 > p->edge_slot_mask + 1) {
        if (rehash(&p->edge_slots, &p->edge_slot_mask, p->nedges, edge_hash_at, p->edges)) {
            p->nedges--;
            return -ENOMEM;
        }
    } else {
        size_t j = hash_edge(caller, callee) & p->edge_slot_mask;
        while (p->edge_slots[j] != EMPTY_SLOT)
            j = (j + 1) & p->edge_slot_mask;
        p->edge_slots[j] = (uint32_t)(p->nedges - 1);
    }
    return (int64_t)(p->nedges - 1);
}

/* Tick sums wrap rather than overflow: a hostile file (a raw snapshot read by `fnprof
 * symbolize`) may hold any counts, and signed overflow would be undefined behaviour. Real
 * runs stay far below 2^63 ticks. */
static inline int64_t wrap_add(int64_t a, int64_t b)
{
    return (int64_t)((uint64_t)a + (uint64_t)b);
}

/* Integer accumulators for one forest: ticks become seconds once, at the end. */
struct tick_stats {
    uint64_t ncalls, pcalls;
    int64_t tottime, cumtime;
};

static void add_ticks(struct fnp_stats *st, const struct tick_stats *t, double tick_seconds)
{
    st->ncalls += t->ncalls;
    st->pcalls += t->pcalls;
    /* A node's own time can come out slightly negative when its children were closed by
     * a different clock reading; cProfile would report such noise as 0 too. */
    st->tottime += t->tottime > 0 ? (double)t->tottime * tick_seconds : 0.0;
    st->cumtime += t->cumtime > 0 ? (double)t->cumtime * tick_seconds : 0.0;
}

int fnp_profile_add_tree(struct fnp_profile *p, const struct fnp_tree_node *nodes, size_t n,
                         double tick_seconds)
{
    int rc = -ENOMEM;
    int64_t *self = malloc((n ? n : 1) * sizeof(*self));
    uint32_t *edge_of = malloc((n ? n : 1) * sizeof(*edge_of));
    uint32_t *path = malloc((n ? n : 1) * sizeof(*path));
    struct tick_stats *fst = NULL, *est = NULL;
    uint32_t *fopen_ = NULL, *eopen = NULL;
    if (!self || !edge_of || !path)
        goto out;

    /* First pass: validate, create the edges, compute each node's own ticks. */
    for (size_t i = 0; i < n; i++) {
        const struct fnp_tree_node *nd = &nodes[i];
        rc = -EINVAL;
        if (nd->func >= p->nfuncs || (nd->parent != FNP_NO_PARENT && nd->parent >= i))
            goto out;
        self[i] = wrap_add((int64_t)nd->ticks, (int64_t)(0 - (uint64_t)nd->back));
        edge_of[i] = EMPTY_SLOT;
        if (nd->parent != FNP_NO_PARENT) {
            self[nd->parent] = wrap_add(self[nd->parent], (int64_t)(0 - nd->ticks));
            int64_t e = fnp_profile_edge(p, nodes[nd->parent].func, nd->func);
            if (e < 0) {
                rc = (int)e;
                goto out;
            }
            edge_of[i] = (uint32_t)e;
        }
    }
    rc = -ENOMEM;
    fst = calloc(p->nfuncs + 1, sizeof(*fst));
    est = calloc(p->nedges + 1, sizeof(*est));
    fopen_ = calloc(p->nfuncs + 1, sizeof(*fopen_));
    eopen = calloc(p->nedges + 1, sizeof(*eopen));
    if (!fst || !est || !fopen_ || !eopen)
        goto out;

    /* Second pass: pre-order walk keeping the path from the root to the current node, with
     * counts of how often each function and each edge occur on it. */
    size_t depth = 0;
    for (size_t i = 0; i < n; i++) {
        const struct fnp_tree_node *nd = &nodes[i];
        while (depth && (nd->parent == FNP_NO_PARENT || path[depth - 1] != nd->parent)) {
            uint32_t up = path[--depth];
            fopen_[nodes[up].func]--;
            if (edge_of[up] != EMPTY_SLOT)
                eopen[edge_of[up]]--;
        }
        struct tick_stats *f = &fst[nd->func];
        int given = nd->flags & FNP_OPEN_GIVEN;
        int func_open = given ? (nd->flags & FNP_OPEN_FUNC) != 0 : fopen_[nd->func] != 0;
        int edge_open = edge_of[i] == EMPTY_SLOT ? 0
                        : given                  ? (nd->flags & FNP_OPEN_EDGE) != 0
                                                 : eopen[edge_of[i]] != 0;
        f->ncalls += nd->ncalls;
        f->tottime = wrap_add(f->tottime, self[i]);
        if (!func_open) {
            f->pcalls += nd->ncalls;
            f->cumtime = wrap_add(f->cumtime, (int64_t)nd->ticks);
        }
        if (edge_of[i] != EMPTY_SLOT) {
            struct tick_stats *e = &est[edge_of[i]];
            e->ncalls += nd->ncalls;
            e->tottime = wrap_add(e->tottime, self[i]);
            if (!edge_open) {
                e->pcalls += nd->ncalls;
                e->cumtime = wrap_add(e->cumtime, (int64_t)nd->ticks);
            }
            eopen[edge_of[i]]++;
        }
        fopen_[nd->func]++;
        path[depth++] = (uint32_t)i;
    }
    for (size_t i = 0; i < p->nfuncs; i++)
        add_ticks(&p->funcs[i].st, &fst[i], tick_seconds);
    for (size_t i = 0; i < p->nedges; i++)
        add_ticks(&p->edges[i].st, &est[i], tick_seconds);
    rc = 0;
out:
    free(self);
    free(edge_of);
    free(path);
    free(fst);
    free(est);
    free(fopen_);
    free(eopen);
    return rc;
}

/* Sums saturate: a count wrapped past 2^64 would start again from 0 (fnp_sat_add), and a
 * time past DBL_MAX would become inf, which no pstats reader takes back. */
static double sat_time(double a, double b)
{
    double v = a + b;
    return v > DBL_MAX ? DBL_MAX : v;
}

static void add_stats(struct fnp_stats *a, const struct fnp_stats *b)
{
    a->ncalls = fnp_sat_add(a->ncalls, b->ncalls);
    a->pcalls = fnp_sat_add(a->pcalls, b->pcalls);
    a->tottime = sat_time(a->tottime, b->tottime);
    a->cumtime = sat_time(a->cumtime, b->cumtime);
}

int fnp_profile_merge(struct fnp_profile *a, const struct fnp_profile *b)
{
    if (a->nfuncs == 0) {
        /* The first profile added: the sum's tree is its tree, in the sum's indices. */
        a->tree_kind = b->tree_kind;
        a->tick_seconds = b->tick_seconds;
    }
    uint32_t *map = malloc((b->nfuncs ? b->nfuncs : 1) * sizeof(*map));
    if (!map)
        return -ENOMEM;
    for (size_t i = 0; i < b->nfuncs; i++) {
        int64_t f = fnp_profile_func(a, &b->funcs[i].key);
        if (f < 0) {
            free(map);
            return (int)f;
        }
        map[i] = (uint32_t)f;
        add_stats(&a->funcs[f].st, &b->funcs[i].st);
    }
    for (size_t i = 0; i < b->nedges; i++) {
        int64_t e = fnp_profile_edge(a, map[b->edges[i].caller], map[b->edges[i].callee]);
        if (e < 0) {
            free(map);
            return (int)e;
        }
        add_stats(&a->edges[e].st, &b->edges[i].st);
    }
    int rc = fnp_tree_merge(a, b, map);
    free(map);
    return rc;
}
