/* SPDX-License-Identifier: MIT */
/*
 * Copies every thread's calling-context tree into one flat array, parent before child.
 * Threads may still be running: children are reached through first_child (acquire, set
 * after a node is initialised) and counters are read with relaxed loads, so what is read
 * is a consistent-enough moment of each node. Calls still open are closed at `now`, as
 * cProfile's flush_unmatched does, so main() has its call and its time.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

struct open_frame {
    const struct fnp_node *node;
    uint64_t ticks; /* to add: now - entry */
    uint64_t count; /* frames of node */
};

struct fnp_base_entry {
    const struct fnp_node *node;
    uint64_t ncalls, ticks;
};

/* The walk's view of one thread: its open frames, and the baselines (snapshot.h). */
struct walk {
    const struct open_frame *open;
    size_t nopen;
    const struct fnp_baseline *since;
    struct fnp_baseline *next;
};

static int by_node(const void *a, const void *b)
{
    const struct open_frame *x = a, *y = b;
    return x->node < y->node ? -1 : x->node > y->node;
}

static int push_node(struct fnp_snapshot *s, const struct fnp_raw_node *n)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 1024;
        struct fnp_raw_node *nodes = realloc(s->nodes, cap * sizeof(*nodes));
        if (!nodes)
            return -ENOMEM;
        s->nodes = nodes;
        s->cap = cap;
    }
    s->nodes[s->n++] = *n;
    return 0;
}

/* from[n - 1]: the node just pushed, the array grown with nodes. */
static int keep_from(struct fnp_snapshot *s, const struct fnp_node *n)
{
    if (s->from_cap < s->cap) {
        const struct fnp_node **from = realloc(s->from, s->cap * sizeof(*from));
        if (!from)
            return -ENOMEM;
        s->from = from;
        s->from_cap = s->cap;
    }
    s->from[s->n - 1] = n;
    return 0;
}

/* The open frames of t by node, sorted, each node once with the time its frames have
 * been open (a link stands in several frames at once in a folded recursion). */
static struct open_frame *open_frames(struct fnp_thread *t, uint64_t now, size_t *count)
{
    uint32_t depth = __atomic_load_n(&t->depth, __ATOMIC_ACQUIRE);
    struct fnp_frame *frames = __atomic_load_n(&t->frames, __ATOMIC_ACQUIRE);
    *count = 0;
    if (!depth)
        return NULL;
    struct open_frame *open = malloc(depth * sizeof(*open));
    if (!open)
        return NULL;
    size_t n = 0;
    for (uint32_t i = 0; i < depth; i++) {
        const struct fnp_node *node = __atomic_load_n(&frames[i].node, __ATOMIC_RELAXED);
        uint64_t t0 = __atomic_load_n(&frames[i].t0, __ATOMIC_RELAXED);
        if (!node)
            continue; /* a live thread mid-push */
        open[n].node = node;
        open[n].ticks = now > t0 ? now - t0 : 0;
        open[n].count = 1;
        n++;
    }
    qsort(open, n, sizeof(*open), by_node);
    size_t u = 0;
    for (size_t i = 0; i < n; i++) {
        if (u && open[u - 1].node == open[i].node) {
            open[u - 1].ticks += open[i].ticks;
            open[u - 1].count++;
        } else
            open[u++] = open[i];
    }
    *count = u;
    return open;
}

static const struct open_frame *find_open(const struct open_frame *open, size_t n,
                                          const struct fnp_node *node)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (open[mid].node == node)
            return &open[mid];
        if (open[mid].node < node)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static int by_base(const void *a, const void *b)
{
    const struct fnp_base_entry *x = a, *y = b;
    return x->node < y->node ? -1 : x->node > y->node;
}

/* A node's calls and ticks now, open calls closed at the walk's moment: kept in the next
 * baseline (open calls there count for the period after it), less the last baseline. */
static int measure(struct walk *w, const struct fnp_node *n, uint64_t *ncalls, uint64_t *ticks)
{
    const struct open_frame *o = find_open(w->open, w->nopen, n);
    *ncalls = __atomic_load_n(&n->ncalls, __ATOMIC_RELAXED);
    *ticks = __atomic_load_n(&n->ticks, __ATOMIC_RELAXED) + (o ? o->ticks : 0);
    if (w->next) {
        struct fnp_baseline *b = w->next;
        if (b->n == b->cap && fnp_array_grow((void **)&b->e, &b->cap, b->n + 1, sizeof(*b->e)))
            return -ENOMEM;
        b->e[b->n++] = (struct fnp_base_entry){n, *ncalls - (o ? o->count : 0), *ticks};
    }
    if (w->since && w->since->n) {
        struct fnp_base_entry key = {.node = n};
        const struct fnp_base_entry *base =
            bsearch(&key, w->since->e, w->since->n, sizeof(key), by_base);
        if (base) {
            *ncalls = *ncalls > base->ncalls ? *ncalls - base->ncalls : 0;
            *ticks = *ticks > base->ticks ? *ticks - base->ticks : 0;
        }
    }
    return 0;
}

struct node_index {
    const struct fnp_node *node;
    uint32_t index;
};

static int by_node_index(const void *a, const void *b)
{
    const struct node_index *x = a, *y = b;
    return x->node < y->node ? -1 : x->node > y->node;
}

static int64_t index_of(const struct node_index *map, size_t n, const struct fnp_node *node)
{
    struct node_index key = {.node = node};
    const struct node_index *hit = bsearch(&key, map, n, sizeof(*map), by_node_index);
    return hit ? (int64_t)hit->index : -1;
}

/* A link's calls and ticks go to its target (fnp_raw_add_link). */
static int add_links(struct fnp_snapshot *s, struct fnp_thread *t, struct node_index *map,
                     size_t nmap, struct walk *w)
{
    qsort(map, nmap, sizeof(*map), by_node_index);
    for (const struct fnp_node *l = __atomic_load_n(&t->links, __ATOMIC_ACQUIRE); l;
         l = l->next_sibling) {
        int64_t to = index_of(map, nmap, l->target);
        if (to < 0)
            return -EINVAL; /* a target outside the tree: never made so */
        int64_t from = index_of(map, nmap, l->parent);
        uint64_t ncalls, ticks;
        if (measure(w, l, &ncalls, &ticks))
            return -ENOMEM;
        fnp_raw_add_link(
            s->nodes, (uint32_t)to, from < 0 ? FNP_NO_PARENT : (uint32_t)from, ncalls, ticks,
            (uint32_t)(l->open_flags & (FNP_OPEN_GIVEN | FNP_OPEN_FUNC | FNP_OPEN_EDGE)));
    }
    return 0;
}

static int add_thread(struct fnp_snapshot *s, struct fnp_thread *t, uint32_t thread, uint64_t now,
                      const struct fnp_baseline *since, struct fnp_baseline *next)
{
    size_t nopen;
    struct open_frame *open = open_frames(t, now, &nopen);
    struct walk w = {open, nopen, since, next};
    s->open += nopen;
    /* path[k]: snapshot index of the k-th node on the path from the root to the current
     * one; a pre-order walk by first_child / next_sibling / parent needs no recursion. */
    size_t cap = 256, depth = 0;
    uint32_t *path = malloc(cap * sizeof(*path));
    int rc = path ? 0 : -ENOMEM;
    const struct fnp_node *n = __atomic_load_n(&t->root.first_child, __ATOMIC_ACQUIRE);
    size_t before = s->n, nmap = 0, map_cap = 0;
    struct node_index *map = NULL;
    int linked = __atomic_load_n(&t->links, __ATOMIC_ACQUIRE) != NULL;
    while (n && !rc) {
        struct fnp_raw_node sn = {
            .fn = n->fn,
            .parent = depth ? path[depth - 1] : UINT32_MAX,
            .thread = thread,
        };
        if (measure(&w, n, &sn.ncalls, &sn.ticks) || s->n >= UINT32_MAX - 1 || push_node(s, &sn) ||
            (s->keep_from && keep_from(s, n))) {
            rc = -ENOMEM;
            break;
        }
        if (linked) {
            if (nmap == map_cap &&
                fnp_array_grow((void **)&map, &map_cap, nmap + 1, sizeof(*map))) {
                rc = -ENOMEM;
                break;
            }
            map[nmap++] = (struct node_index){n, (uint32_t)(s->n - 1)};
        }
        const struct fnp_node *child = __atomic_load_n(&n->first_child, __ATOMIC_ACQUIRE);
        if (child) {
            if (depth == cap) {
                uint32_t *p = realloc(path, 2 * cap * sizeof(*path));
                if (!p) {
                    rc = -ENOMEM;
                    break;
                }
                path = p;
                cap *= 2;
            }
            path[depth++] = (uint32_t)(s->n - 1);
            n = child;
            continue;
        }
        size_t up = 0;
        n = fnp_cct_after(t, n, &up);
        depth -= up;
    }
    if (!rc && linked)
        rc = add_links(s, t, map, nmap, &w);
    free(map);
    if (s->n > before)
        s->threads++;
    s->merged += __atomic_load_n(&t->merged, __ATOMIC_RELAXED);
    s->merge_causes |= __atomic_load_n(&t->merge_causes, __ATOMIC_RELAXED);
    s->dropped += __atomic_load_n(&t->dropped_calls, __ATOMIC_RELAXED);
    s->unmatched += __atomic_load_n(&t->unmatched, __ATOMIC_RELAXED);
    free(path);
    free(open);
    return rc;
}

int fnp_snapshot_add_thread(struct fnp_snapshot *s, struct fnp_thread *t, uint32_t thread,
                            uint64_t now)
{
    return add_thread(s, t, thread, now, NULL, NULL);
}

/* After a baseline: contexts with no call since it are left out (a context called since has
 * every ancestor called or open since, and an open call counts), and the threads left are
 * numbered again from 0. */
static void drop_uncalled(struct fnp_snapshot *s)
{
    size_t n = s->n;
    uint8_t *keep = calloc(n ? n : 1, 1);
    uint32_t *at = malloc((n ? n : 1) * sizeof(*at));
    if (!keep || !at) {
        free(keep);
        free(at);
        return; /* out of memory: uncalled contexts stay, with zero numbers */
    }
    for (size_t i = n; i-- > 0;) {
        if (s->nodes[i].ncalls)
            keep[i] = 1;
        if (keep[i] && s->nodes[i].parent != FNP_NO_PARENT)
            keep[s->nodes[i].parent] = 1;
    }
    size_t k = 0, nthreads = 0;
    uint32_t last = UINT32_MAX;
    for (size_t i = 0; i < n; i++) {
        if (!keep[i])
            continue;
        struct fnp_raw_node node = s->nodes[i];
        if (node.parent != FNP_NO_PARENT)
            node.parent = at[node.parent];
        if (node.thread != last) {
            last = node.thread;
            nthreads++;
        }
        node.thread = (uint32_t)nthreads - 1;
        at[i] = (uint32_t)k;
        s->nodes[k++] = node;
    }
    s->n = k;
    s->threads = nthreads;
    free(keep);
    free(at);
}

static int take(struct fnp_snapshot *s, uint64_t now, const struct fnp_baseline *since,
                struct fnp_baseline *next, int keep_from)
{
    memset(s, 0, sizeof(*s));
    s->keep_from = keep_from;
    if (next)
        next->n = 0;
    uint32_t thread = 0;
    for (struct fnp_thread *t = fnp_thread_list(); t; t = t->next, thread++) {
        int rc = add_thread(s, t, thread, now, since, next);
        if (rc)
            return rc;
    }
    if (next) {
        qsort(next->e, next->n, sizeof(*next->e), by_base);
        next->dropped = s->dropped;
        next->unmatched = s->unmatched;
        next->merged = s->merged;
    }
    if (since) {
        s->dropped -= since->dropped < s->dropped ? since->dropped : s->dropped;
        s->unmatched -= since->unmatched < s->unmatched ? since->unmatched : s->unmatched;
        s->merged -= since->merged < s->merged ? since->merged : s->merged;
        drop_uncalled(s);
    }
    return 0;
}

int fnp_snapshot_take(struct fnp_snapshot *s, uint64_t now, const struct fnp_baseline *since,
                      struct fnp_baseline *next)
{
    return take(s, now, since, next, 0);
}

int fnp_snapshot_take_nodes(struct fnp_snapshot *s, uint64_t now)
{
    return take(s, now, NULL, NULL, 1);
}

void fnp_baseline_free(struct fnp_baseline *b)
{
    free(b->e);
    memset(b, 0, sizeof(*b));
}

void fnp_snapshot_free(struct fnp_snapshot *s)
{
    if (!s)
        return;
    free(s->nodes);
    free(s->from);
    memset(s, 0, sizeof(*s));
}
