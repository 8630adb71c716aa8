/* SPDX-License-Identifier: MIT */
/*
 * The calling-context tree a profile keeps: the forest the runtime recorded, named, so that
 * views draw the paths that were taken rather than paths guessed from caller edges.
 *
 * One canonical form serves storing, merging and comparing trees: pre-order, siblings
 * sorted by function, no two siblings of the same function, thread (for roots) and flags. Two
 * profiles' trees merge by concatenating them and putting the result in canonical form.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"

#define EMPTY UINT32_MAX

void fnp_tree_clear(struct fnp_profile *p)
{
    free(p->tree);
    free(p->mem);
    p->mem = NULL;
    for (size_t i = 0; i < p->nthreads; i++)
        free(p->threads[i]);
    free(p->threads);
    p->tree = NULL;
    p->threads = NULL;
    p->ntree = p->tree_cap = p->nthreads = 0;
    p->tree_kind = FNP_TREE_NONE;
}

static uint64_t slot_hash(uint32_t parent, uint32_t func, uint32_t thread, uint32_t flags)
{
    uint64_t h = ((uint64_t)parent << 32 | func) * 0x9e3779b97f4a7c15ull;
    h ^= ((uint64_t)thread << 3 | flags) * 0xff51afd7ed558ccdull;
    return h ^ (h >> 31);
}

/* Sibling order: roots by thread, then by function, then by flags. */
static int by_thread_func(const void *a, const void *b, void *nodes_)
{
    const struct fnp_tree_node *nodes = nodes_;
    const struct fnp_tree_node *x = &nodes[*(const uint32_t *)a], *y = &nodes[*(const uint32_t *)b];
    if (x->thread != y->thread)
        return x->thread < y->thread ? -1 : 1;
    if (x->func != y->func)
        return x->func < y->func ? -1 : 1;
    return x->flags < y->flags ? -1 : x->flags > y->flags;
}

/* Adds the memory columns of a node merged into another. */
static void add_mem(struct fnp_mem_node *to, const struct fnp_mem_node *from)
{
    /* Sums saturate: frees <= allocs holds in each addend, so it holds in the sums, and a
     * merge never writes what the reader refuses. */
    to->allocs = fnp_sat_add(to->allocs, from->allocs);
    to->frees = fnp_sat_add(to->frees, from->frees);
    to->freed = fnp_sat_add(to->freed, from->freed);
    if (from->peak > to->peak)
        to->peak = from->peak;
}

/*
 * in[0, n) (parents first) -> *out in canonical form, and mem_in (NULL: none) -> *mem_out
 * alongside. Merging same-keyed siblings is done top-down, so that their children meet
 * under one parent and merge in turn.
 */
static int canonical(const struct fnp_tree_node *in, const struct fnp_mem_node *mem_in, size_t n,
                     size_t nfuncs, size_t nthreads, struct fnp_tree_node **out,
                     struct fnp_mem_node **mem_out, size_t *nout)
{
    int rc = -ENOMEM;
    size_t cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    uint32_t *idx = malloc((n ? n : 1) * sizeof(*idx));
    uint32_t *slots = malloc(cap * sizeof(*slots));
    struct fnp_tree_node *m = malloc((n ? n : 1) * sizeof(*m));
    uint32_t *start = NULL, *kids = NULL, *stack = NULL, *newidx = NULL;
    struct fnp_tree_node *o = NULL;
    struct fnp_mem_node *mm = mem_in ? calloc(n ? n : 1, sizeof(*mm)) : NULL, *om = NULL;
    if (!idx || !slots || !m || (mem_in && !mm))
        goto out;
    memset(slots, 0xff, cap * sizeof(*slots));
    size_t nm = 0;
    for (size_t i = 0; i < n; i++) {
        const struct fnp_tree_node *nd = &in[i];
        int root = nd->parent == FNP_NO_PARENT;
        rc = -EINVAL;
        if (nd->func >= nfuncs || (!root && nd->parent >= i) || (root && nd->thread >= nthreads))
            goto out;
        uint32_t parent = root ? FNP_NO_PARENT : idx[nd->parent];
        uint32_t thread = root ? nd->thread : m[parent].thread;
        /* Beyond the node cap, one caller can have two children of one function that say
         * differently whether it was open above them: they stay two nodes. */
        size_t j = slot_hash(parent, nd->func, thread, nd->flags) & (cap - 1);
        for (; slots[j] != EMPTY; j = (j + 1) & (cap - 1)) {
            const struct fnp_tree_node *s = &m[slots[j]];
            if (s->parent == parent && s->func == nd->func && s->thread == thread &&
                s->flags == nd->flags)
                break;
        }
        if (slots[j] == EMPTY) {
            slots[j] = (uint32_t)nm;
            m[nm] = (struct fnp_tree_node){
                .func = nd->func, .parent = parent, .thread = thread, .flags = nd->flags};
            nm++;
        }
        struct fnp_tree_node *t = &m[slots[j]];
        /* Calls and ticks saturate (a merge never wraps a sum to a small number); back
         * wraps rather than overflow: a hostile file may hold any numbers. */
        t->ncalls = fnp_sat_add(t->ncalls, nd->ncalls);
        t->ticks = fnp_sat_add(t->ticks, nd->ticks);
        t->back = (int64_t)((uint64_t)t->back + (uint64_t)nd->back);
        if (mm)
            add_mem(&mm[slots[j]], &mem_in[i]);
        idx[i] = slots[j];
    }
    rc = -ENOMEM;
    /* Children of merged node k in kids[start[k], start[k + 1]); roots under slot nm. */
    start = calloc(nm + 2, sizeof(*start));
    kids = malloc((nm ? nm : 1) * sizeof(*kids));
    stack = malloc((nm ? nm : 1) * sizeof(*stack));
    newidx = malloc((nm ? nm : 1) * sizeof(*newidx));
    o = malloc((nm ? nm : 1) * sizeof(*o));
    om = mm ? malloc((nm ? nm : 1) * sizeof(*om)) : NULL;
    if (!start || !kids || !stack || !newidx || !o || (mm && !om))
        goto out;
    for (size_t k = 0; k < nm; k++)
        start[(m[k].parent == FNP_NO_PARENT ? nm : m[k].parent) + 1]++;
    for (size_t k = 1; k <= nm + 1; k++)
        start[k] += start[k - 1];
    for (size_t k = 0; k < nm; k++) {
        uint32_t p = m[k].parent == FNP_NO_PARENT ? (uint32_t)nm : m[k].parent;
        kids[start[p]++] = (uint32_t)k;
    }
    /* start[p] now ends p's run; shift back so that start[p] begins it. */
    for (size_t k = nm + 1; k > 0; k--)
        start[k] = start[k - 1];
    start[0] = 0;
    for (size_t k = 0; k <= nm; k++)
        qsort_r(kids + start[k], start[k + 1] - start[k], sizeof(*kids), by_thread_func, m);
    size_t sp = 0, no = 0;
    for (size_t r = start[nm + 1]; r-- > start[nm];)
        stack[sp++] = kids[r];
    while (sp) {
        uint32_t k = stack[--sp];
        newidx[k] = (uint32_t)no;
        o[no] = m[k];
        o[no].parent = m[k].parent == FNP_NO_PARENT ? FNP_NO_PARENT : newidx[m[k].parent];
        if (om)
            om[no] = mm[k];
        no++;
        for (size_t c = start[k + 1]; c-- > start[k];)
            stack[sp++] = kids[c];
    }
    *out = o;
    *mem_out = om;
    *nout = no;
    o = NULL;
    om = NULL;
    rc = 0;
out:
    free(mm);
    free(om);
    free(idx);
    free(slots);
    free(m);
    free(start);
    free(kids);
    free(stack);
    free(newidx);
    free(o);
    return rc;
}

static int copy_threads(char ***dst, const char *const *names, size_t n)
{
    char **t = calloc(n ? n : 1, sizeof(*t));
    if (!t)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++) {
        t[i] = strdup(names[i]);
        if (!t[i]) {
            for (size_t j = 0; j < i; j++)
                free(t[j]);
            free(t);
            return -ENOMEM;
        }
    }
    *dst = t;
    return 0;
}

int fnp_tree_set(struct fnp_profile *p, const struct fnp_tree_node *nodes, size_t n, uint32_t kind,
                 double tick_seconds, const char *const *threads, size_t nthreads)
{
    return fnp_tree_set_mem(p, nodes, NULL, n, kind, tick_seconds, threads, nthreads);
}

int fnp_tree_set_mem(struct fnp_profile *p, const struct fnp_tree_node *nodes,
                     const struct fnp_mem_node *mem, size_t n, uint32_t kind, double tick_seconds,
                     const char *const *threads, size_t nthreads)
{
    struct fnp_tree_node *t;
    struct fnp_mem_node *tm;
    size_t nt;
    char **names;
    int rc = canonical(nodes, mem, n, p->nfuncs, nthreads, &t, &tm, &nt);
    if (rc)
        return rc;
    if (copy_threads(&names, threads, nthreads)) {
        free(t);
        free(tm);
        return -ENOMEM;
    }
    fnp_tree_clear(p);
    p->tree = t;
    p->mem = tm;
    p->ntree = p->tree_cap = nt;
    p->threads = names;
    p->nthreads = nthreads;
    p->tree_kind = kind;
    p->tick_seconds = tick_seconds;
    return 0;
}

/* b's pairs whose keys a lacks, after a's: the first profile's program, pid and start
 * describe the sum (fnprof merge then says how many runs it holds). Bounded as the file
 * format is, so that many inputs cannot grow the table past what is written. */
static int merge_meta(struct fnp_profile *a, const struct fnp_profile *b)
{
    for (size_t i = 0; i < b->nmeta && a->nmeta < FNP_TREE_MAX_META; i++) {
        if (fnp_profile_meta(a, b->meta[i].key))
            continue;
        int rc = fnp_profile_set_meta(a, b->meta[i].key, b->meta[i].value);
        if (rc)
            return rc;
    }
    return 0;
}

/* Back ticks (signed) rescaled like ticks, by their magnitude, which saturates at
 * INT64_MAX: the negation of INT64_MIN, a hostile file's value, is no int64_t. */
static int64_t scale_back(int64_t back, double scale)
{
    uint64_t m = fnp_ticks_scale(back < 0 ? 0 - (uint64_t)back : (uint64_t)back, scale);
    if (m > (uint64_t)INT64_MAX)
        m = (uint64_t)INT64_MAX;
    return back < 0 ? -(int64_t)m : (int64_t)m;
}

int fnp_tree_merge(struct fnp_profile *a, const struct fnp_profile *b, const uint32_t *map)
{
    /* Metadata first: it survives a tree that the merge drops. */
    int err = merge_meta(a, b);
    if (err)
        return err;
    if (a->tree_kind == FNP_TREE_NONE)
        return 0;
    /* A tree of bytes (memory columns) and one of time do not add; an empty tree (the
     * first input of a merge) takes the other's kind. */
    int mem = (a->mem || !a->ntree) && (b->mem || !b->ntree) && (a->mem || b->mem);
    if (b->tree_kind != a->tree_kind || (!mem && (a->mem || b->mem))) {
        fnp_tree_clear(a);
        return 0;
    }
    size_t n = a->ntree + b->ntree;
    size_t nthreads = a->nthreads > b->nthreads ? a->nthreads : b->nthreads;
    struct fnp_tree_node *all = malloc((n ? n : 1) * sizeof(*all));
    const char **names = malloc((nthreads ? nthreads : 1) * sizeof(*names));
    struct fnp_mem_node *all_mem = mem ? calloc(n ? n : 1, sizeof(*all_mem)) : NULL;
    int rc = -ENOMEM;
    if (all && names && (!mem || all_mem)) {
        if (a->ntree) /* a->tree is NULL while empty, and memcpy's pointers must not be */
            memcpy(all, a->tree, a->ntree * sizeof(*all));
        if (a->mem)
            memcpy(all_mem, a->mem, a->ntree * sizeof(*all_mem));
        if (b->mem)
            memcpy(all_mem + a->ntree, b->mem, b->ntree * sizeof(*all_mem));
        double scale = a->tick_seconds > 0 ? b->tick_seconds / a->tick_seconds : 1;
        for (size_t i = 0; i < b->ntree; i++) {
            struct fnp_tree_node *t = &all[a->ntree + i];
            *t = b->tree[i];
            t->func = map[b->tree[i].func];
            if (scale != 1) {
                t->ticks = fnp_ticks_scale(t->ticks, scale);
                t->back = scale_back(t->back, scale);
            }
            if (b->tree[i].parent != FNP_NO_PARENT)
                all[a->ntree + i].parent = b->tree[i].parent + (uint32_t)a->ntree;
        }
        for (size_t i = 0; i < nthreads; i++)
            names[i] = i < a->nthreads ? a->threads[i] : b->threads[i];
        rc = fnp_tree_set_mem(a, all, all_mem, n, a->tree_kind, a->tick_seconds, names, nthreads);
    }
    if (rc)
        fnp_tree_clear(a);
    free(all);
    free(all_mem);
    free(names);
    return rc;
}

/* v to the nearest integer, saturating at 0 and 2^64 - 1 (NaN: 0): converting a double
 * past UINT64_MAX is undefined behaviour, and a hostile file's numbers get there. */
static uint64_t round_u64(double v)
{
    return v >= 1.8e19 ? UINT64_MAX : v > 0 ? (uint64_t)(v + 0.5) : 0;
}

uint64_t fnp_ticks_scale(uint64_t ticks, double scale)
{
    return round_u64((double)ticks * scale);
}

void fnp_tree_values(const struct fnp_profile *p, uint64_t *self, uint64_t *incl)
{
    const struct fnp_tree_node *t = p->tree;
    size_t n = p->ntree;
    int64_t *own = (int64_t *)self; /* same size: signed while children subtract */
    for (size_t i = 0; i < n; i++)
        own[i] = (int64_t)(t[i].ticks - (uint64_t)t[i].back);
    for (size_t i = 0; i < n; i++)
        if (t[i].parent != FNP_NO_PARENT)
            own[t[i].parent] = (int64_t)((uint64_t)own[t[i].parent] - t[i].ticks);
    for (size_t i = 0; i < n; i++)
        self[i] = own[i] > 0 ? (uint64_t)own[i] : 0;
    if (!incl)
        return;
    memcpy(incl, self, n * sizeof(*incl));
    for (size_t i = n; i-- > 0;)
        if (t[i].parent != FNP_NO_PARENT)
            incl[t[i].parent] += incl[i];
}

/* ---- a tree rebuilt from edges ---------------------------------------------------- */

struct out_edge {
    uint32_t callee;
    uint32_t edge;
};

static int by_caller(const void *a, const void *b, void *edges_)
{
    const struct fnp_edge *e = edges_;
    const struct out_edge *x = a, *y = b;
    const struct fnp_edge *ex = &e[x->edge], *ey = &e[y->edge];
    if (ex->caller != ey->caller)
        return ex->caller < ey->caller ? -1 : 1;
    return ex->callee < ey->callee ? -1 : ex->callee > ey->callee;
}

struct rebuild {
    struct fnp_tree_node *nodes;
    size_t n, cap, max;
    double floor; /* seconds: smaller nodes are left out */
};

static int add_node(struct rebuild *rb, uint32_t func, uint32_t parent, double seconds,
                    double calls)
{
    if (rb->n >= rb->max)
        return 1;
    if (fnp_array_grow((void **)&rb->nodes, &rb->cap, rb->n + 1, sizeof(*rb->nodes)))
        return -ENOMEM;
    double ns = seconds * 1e9;
    rb->nodes[rb->n++] = (struct fnp_tree_node){
        .func = func,
        .parent = parent,
        .ncalls = calls >= 1 ? round_u64(calls) : 1,
        .ticks = round_u64(ns),
    };
    return 0;
}

int fnp_tree_from_edges(struct fnp_profile *p, double min_share, size_t max_nodes)
{
    const size_t nf = p->nfuncs, ne = p->nedges;
    struct out_edge *out = malloc((ne ? ne : 1) * sizeof(*out));
    uint32_t *first = calloc(nf + 1, sizeof(*first));
    uint32_t *onpath = calloc(nf ? nf : 1, sizeof(*onpath));
    double *in_calls = calloc(nf ? nf : 1, sizeof(*in_calls));
    /* The walk's stack: node index and the next out-edge to try. */
    struct frame {
        uint32_t node, next;
    } *stack = malloc((nf + 1) * sizeof(*stack));
    struct rebuild rb = {.max = max_nodes};
    int rc = -ENOMEM;
    if (!out || !first || !onpath || !in_calls || !stack)
        goto out;
    rc = 0;
    for (size_t e = 0; e < ne; e++) {
        out[e] = (struct out_edge){p->edges[e].callee, (uint32_t)e};
        first[p->edges[e].caller + 1]++;
        in_calls[p->edges[e].callee] += (double)p->edges[e].st.ncalls;
    }
    qsort_r(out, ne, sizeof(*out), by_caller, p->edges);
    for (size_t f = 0; f < nf; f++)
        first[f + 1] += first[f];
    double total = 0;
    for (size_t f = 0; f < nf; f++) {
        double calls = (double)p->funcs[f].st.ncalls;
        if (calls > in_calls[f])
            total += p->funcs[f].st.cumtime * (calls - in_calls[f]) / calls;
    }
    rb.floor = total * min_share;
    for (size_t f = 0; f < nf && rc != 1; f++) {
        const struct fnp_func *fn = &p->funcs[f];
        double calls = (double)fn->st.ncalls;
        if (calls <= in_calls[f])
            continue;
        double share = (calls - in_calls[f]) / calls;
        if (fn->st.cumtime * share < rb.floor && fn->st.cumtime > 0)
            continue;
        rc = add_node(&rb, (uint32_t)f, FNP_NO_PARENT, fn->st.cumtime * share, calls - in_calls[f]);
        if (rc)
            break;
        size_t sp = 0;
        stack[sp++] = (struct frame){(uint32_t)(rb.n - 1), first[f]};
        onpath[f]++;
        while (sp && !rc) {
            struct frame *top = &stack[sp - 1];
            const struct fnp_tree_node *nd = &rb.nodes[top->node];
            uint32_t g = nd->func;
            if (top->next >= first[g + 1]) {
                onpath[g]--;
                sp--;
                continue;
            }
            const struct fnp_edge *e = &p->edges[out[top->next++].edge];
            const struct fnp_func *caller = &p->funcs[g];
            if (onpath[e->callee])
                continue;
            double frac =
                caller->st.cumtime > 0 ? ((double)nd->ticks / 1e9) / caller->st.cumtime : 0;
            double secs = e->st.cumtime * frac;
            if (secs < rb.floor)
                continue;
            double ncalls = caller->st.ncalls
                                ? (double)e->st.ncalls * (double)nd->ncalls / caller->st.ncalls
                                : 0;
            uint32_t parent = top->node;
            rc = add_node(&rb, e->callee, parent, secs, ncalls);
            if (rc)
                break;
            stack[sp++] = (struct frame){(uint32_t)(rb.n - 1), first[e->callee]};
            onpath[e->callee]++;
        }
        while (sp)
            onpath[rb.nodes[stack[--sp].node].func]--;
    }
    if (rc >= 0) {
        /* rc 1: the node budget ran out; what was built is still a valid tree. */
        const char *name = "process";
        rc = fnp_tree_set(p, rb.nodes, rb.n, FNP_TREE_TIME, 1e-9, &name, 1);
    }
out:
    free(out);
    free(first);
    free(onpath);
    free(in_calls);
    free(stack);
    free(rb.nodes);
    return rc;
}
