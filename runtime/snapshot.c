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
        n++;
    }
    qsort(open, n, sizeof(*open), by_node);
    size_t u = 0;
    for (size_t i = 0; i < n; i++) {
        if (u && open[u - 1].node == open[i].node)
            open[u - 1].ticks += open[i].ticks;
        else
            open[u++] = open[i];
    }
    *count = u;
    return open;
}

static uint64_t open_ticks(const struct open_frame *open, size_t n, const struct fnp_node *node)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (open[mid].node == node)
            return open[mid].ticks;
        if (open[mid].node < node)
            lo = mid + 1;
        else
            hi = mid;
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
                     size_t nmap, const struct open_frame *open, size_t nopen)
{
    qsort(map, nmap, sizeof(*map), by_node_index);
    for (const struct fnp_node *l = __atomic_load_n(&t->links, __ATOMIC_ACQUIRE); l;
         l = l->next_sibling) {
        int64_t to = index_of(map, nmap, l->target);
        if (to < 0)
            return -EINVAL; /* a target outside the tree: never made so */
        int64_t from = index_of(map, nmap, l->parent);
        fnp_raw_add_link(s->nodes, (uint32_t)to, from < 0 ? FNP_NO_PARENT : (uint32_t)from,
                         __atomic_load_n(&l->ncalls, __ATOMIC_RELAXED),
                         __atomic_load_n(&l->ticks, __ATOMIC_RELAXED) + open_ticks(open, nopen, l),
                         (uint32_t)l->open_flags);
    }
    return 0;
}

int fnp_snapshot_add_thread(struct fnp_snapshot *s, struct fnp_thread *t, uint32_t thread,
                            uint64_t now)
{
    size_t nopen;
    struct open_frame *open = open_frames(t, now, &nopen);
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
            .ncalls = __atomic_load_n(&n->ncalls, __ATOMIC_RELAXED),
            .ticks = __atomic_load_n(&n->ticks, __ATOMIC_RELAXED) + open_ticks(open, nopen, n),
        };
        if (s->n >= UINT32_MAX - 1 || push_node(s, &sn)) {
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
        rc = add_links(s, t, map, nmap, open, nopen);
    free(map);
    if (s->n > before)
        s->threads++;
    s->merged += __atomic_load_n(&t->merged, __ATOMIC_RELAXED);
    s->dropped += __atomic_load_n(&t->dropped_calls, __ATOMIC_RELAXED);
    s->unmatched += __atomic_load_n(&t->unmatched, __ATOMIC_RELAXED);
    free(path);
    free(open);
    return rc;
}

int fnp_snapshot_take(struct fnp_snapshot *s, uint64_t now)
{
    memset(s, 0, sizeof(*s));
    uint32_t thread = 0;
    for (struct fnp_thread *t = fnp_thread_list(); t; t = t->next, thread++) {
        int rc = fnp_snapshot_add_thread(s, t, thread, now);
        if (rc)
            return rc;
    }
    return 0;
}

void fnp_snapshot_free(struct fnp_snapshot *s)
{
    if (!s)
        return;
    free(s->nodes);
    memset(s, 0, sizeof(*s));
}
