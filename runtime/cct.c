/* SPDX-License-Identifier: MIT */
/*
 * The calling-context tree's cold paths: creating a node, growing the shadow stack,
 * repairing the stack when an exit does not match. The steady path is inline in
 * runtime.h so that the hooks compile to straight-line code.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "runtime.h"

#define FIRST_TABLE_BITS 8
/* Longest recursion cycle folded (a -> b -> ... -> a with up to this many functions). */
#define MAX_PERIOD 32

uint64_t fnp_nodes_total;

/* No key is all ones in its address bits (FNP_ADDR_MASK): never anyone's child. */
struct fnp_node fnp_no_child = {.fn = UINTPTR_MAX};

/* Puts n in its home slot or the first free one after it; -1 when it runs off the end. */
static int table_place(struct fnp_node **slots, size_t len, unsigned shift, struct fnp_node *n)
{
    for (size_t j = fnp_cct_slot(n->parent, n->fn, shift); j < len; j++)
        if (!slots[j]) {
            slots[j] = n;
            return 0;
        }
    return -1;
}

/* Doubles a table (more if a run of its entries would not fit before the end). Only the
 * owner thread reads it, so the old one can go. */
static int table_grow(struct fnp_table *tb)
{
    unsigned shift = tb->slots ? tb->shift : 64 - FIRST_TABLE_BITS + 1;
    struct fnp_node **slots;
    size_t len;
    for (;;) {
        shift--;
        len = ((size_t)1 << (64 - shift)) + FNP_TABLE_SPILL;
        if (!(slots = fnp_pages(len * sizeof(*slots))))
            return -ENOMEM;
        size_t i = 0;
        while (i < tb->len && (!tb->slots[i] || !table_place(slots, len, shift, tb->slots[i])))
            i++;
        if (i == tb->len)
            break;
        munmap(slots, len * sizeof(*slots));
    }
    if (tb->slots)
        munmap(tb->slots, tb->len * sizeof(*tb->slots));
    tb->slots = slots;
    tb->len = len;
    tb->shift = shift;
    return 0;
}

/* The node or link keyed (parent, fn), or NULL; moved to its home slot if found past it
 * (fnp_cct_move_home; the caller holds t->busy). */
static struct fnp_node *table_find(struct fnp_table *tb, const struct fnp_node *parent,
                                   uintptr_t fn)
{
    if (!tb->slots)
        return NULL;
    size_t home = fnp_cct_slot(parent, fn, tb->shift);
    for (size_t j = home; j < tb->len && tb->slots[j]; j++)
        if (tb->slots[j]->parent == parent && tb->slots[j]->fn == fn) {
            fnp_cct_move_home(tb->slots + home, j - home);
            return tb->slots[home];
        }
    return NULL;
}

static int table_add(struct fnp_table *tb, struct fnp_node *n)
{
    if (!tb->slots || (tb->count + 1) * 2 > (size_t)1 << (64 - tb->shift)) {
        if (table_grow(tb))
            return -ENOMEM;
    }
    while (table_place(tb->slots, tb->len, tb->shift, n))
        if (table_grow(tb))
            return -ENOMEM;
    tb->count++;
    return 0;
}

/*
 * Recursion folding. The pstats numbers of a call depend on its function, its caller's
 * function, whether the function and whether that edge are already open above it, and,
 * for its callees, which functions and edges are open at all. When the path to a new
 * context ends in a cycle of period L repeated over 2L + 2 calls (x0 = the new call, x1 =
 * its parent, ..., and x[L+i] runs x[i]'s function for i = 0 .. L+1), every function and
 * edge of the last cycle is open in the one before, so the new context and x[L] agree on
 * all of that: its calls can be x[L]'s. Recursion a million deep then takes a handful of
 * nodes, not a million, and every number stays what cProfile would report.
 */
static struct fnp_node *fold_target(struct fnp_node *parent, uintptr_t fn)
{
    struct fnp_node *x[2 * MAX_PERIOD + 2];
    uintptr_t f[2 * MAX_PERIOD + 2];
    size_t n = 1;
    f[0] = fn;
    x[0] = NULL;
    for (struct fnp_node *p = parent; p && p->fn && n < 2 * MAX_PERIOD + 2; p = p->parent) {
        x[n] = p;
        f[n++] = p->fn;
    }
    for (size_t L = 1; 2 * L + 1 < n; L++) {
        if (f[L] != fn || f[L + 1] != f[1])
            continue;
        size_t i = 0;
        while (i <= L + 1 && f[L + i] == f[i])
            i++;
        if (i > L + 1)
            return x[L];
    }
    return NULL;
}

/*
 * Beyond the node cap: which functions and edges are open on the stack (open_flags), in
 * constant time a call, amortised. A merged call has no tree path to tell, and scanning the
 * stack made every call below a merged one cost the stack's depth (a recursion two million
 * deep that never repeats ran for minutes). So the calls beyond the cap keep counts of the
 * open functions and edges (struct fnp_open_track), brought up to date lazily: the frames
 * counted last time that no longer hold the node they held are taken off (they were
 * popped), and the frames pushed since are added. Each frame is so added and taken off
 * once, and the hooks' own paths do nothing more.
 *
 * A counted frame that still holds its node still has below it what it had, which is what
 * makes the lazy check sound. A tree node, a link of a folded recursion and the ghost of
 * one fix by themselves what is open below them (what recursion folding rests on). A link
 * beyond the cap does not (many stacks share it), but over a merged call only this cold
 * path pushes it, and counts it when it does: there it is the same push. Over a tree frame
 * it may have been pushed again from another tree node's hot child, so the tree frame is
 * checked too. A ghost beyond the cap (paused inside a merged call) tells nothing and is
 * counted again each time.
 */
#define OPEN_ANY UINTPTR_MAX /* the caller of a function's own count */
#define FIRST_OPEN_SLOTS 256
#define FIRST_SEEN 1024

/* A link beyond the cap: its target is a merged node, which is its own target. */
static int capped_link(const struct fnp_node *n)
{
    return n->target && n->target != n && n->target->target == n->target;
}

/* A ghost whose calls go to a merged node (or below the depth limit): no tree path. */
static int loose_ghost(const struct fnp_node *n)
{
    return fnp_key_is_ghost(n->fn) && n->target && n->target->target == n->target;
}

static size_t open_home(uintptr_t caller, uintptr_t fn, size_t mask)
{
    uint64_t h = ((uint64_t)fn * 0x9e3779b97f4a7c15ull) ^ (uint64_t)caller;
    h *= 0xff51afd7ed558ccdull;
    return (size_t)(h ^ h >> 29) & mask;
}

static struct fnp_open_count *open_slot(const struct fnp_open_track *o, uintptr_t caller,
                                        uintptr_t fn)
{
    size_t i = open_home(caller, fn, o->mask);
    while (o->slots[i].fn && (o->slots[i].fn != fn || o->slots[i].caller != caller))
        i = (i + 1) & o->mask;
    return &o->slots[i];
}

/* Room for more new keys with the table at most half full. */
static int open_reserve(struct fnp_open_track *o, size_t more)
{
    size_t len = o->slots ? o->mask + 1 : FIRST_OPEN_SLOTS / 2;
    if (o->slots && (o->count + more) * 2 <= len)
        return 0;
    do
        len *= 2;
    while ((o->count + more) * 2 > len);
    struct fnp_open_count *slots = fnp_pages(len * sizeof(*slots)), *old = o->slots;
    if (!slots)
        return -ENOMEM;
    size_t old_len = old ? o->mask + 1 : 0;
    o->slots = slots;
    o->mask = len - 1;
    for (size_t i = 0; i < old_len; i++)
        if (old[i].fn)
            *open_slot(o, old[i].caller, old[i].fn) = old[i];
    if (old)
        munmap(old, old_len * sizeof(*old));
    return 0;
}

static void open_add(struct fnp_open_track *o, uintptr_t caller, uintptr_t fn, int up)
{
    struct fnp_open_count *c = open_slot(o, caller, fn);
    if (!c->fn) {
        c->caller = caller;
        c->fn = fn;
        o->count++;
    }
    c->frames += up ? 1 : (uint64_t)-1;
}

/* The caller of a call of n, as counted: a class's link beyond the cap is keyed by its
 * caller's fn, as a fake parent. */
static uintptr_t open_caller(const struct fnp_node *n)
{
    return capped_link(n) && (n->open_flags & FNP_LINK_BY_FN) ? (uintptr_t)n->parent
                                                              : n->parent->fn;
}

/* Counts (up) or takes off the frame of n: its function and the edge into it. */
static int open_count(struct fnp_open_track *o, const struct fnp_node *n, int up)
{
    if (fnp_key_is_ghost(n->fn))
        return 0;
    if (up && open_reserve(o, 2))
        return -ENOMEM;
    open_add(o, OPEN_ANY, n->fn, up);
    open_add(o, open_caller(n), n->fn, up);
    return 0;
}

/* seen[j], counted, is still what frame j holds, over the frames it had below it. */
static int still_open(const struct fnp_thread *t, const struct fnp_node *const *seen, uint32_t j,
                      uint32_t depth)
{
    const struct fnp_node *n = seen[j];
    if (j >= depth || t->frames[j].node != n || loose_ghost(n))
        return 0;
    if (!capped_link(n) || j == 0 || capped_link(seen[j - 1]) || loose_ghost(seen[j - 1]))
        return 1;
    return t->frames[j - 1].node == seen[j - 1];
}

static int seen_grow(struct fnp_open_track *o, uint32_t need)
{
    size_t cap = o->cap ? o->cap : FIRST_SEEN;
    while (cap < need)
        cap *= 2;
    if (cap > UINT32_MAX)
        return -ENOMEM;
    const struct fnp_node **seen = fnp_pages(cap * sizeof(*seen));
    if (!seen)
        return -ENOMEM;
    if (o->seen) {
        memcpy(seen, o->seen, o->top * sizeof(*seen));
        munmap(o->seen, o->cap * sizeof(*seen));
    }
    o->seen = seen;
    o->cap = (uint32_t)cap;
    return 0;
}

/* Brings the counts to the thread's frames now, and makes room to count one more. The
 * frame the last call left where the next call goes (a loop's) is likely the next call's
 * own: *held, still counted though not open, until that call is known (open_settle). */
static int open_sync(struct fnp_thread *t, const struct fnp_node **held)
{
    struct fnp_open_track *o = &t->open;
    uint32_t d = t->depth, j = o->top;
    *held = NULL;
    if (d >= o->cap && seen_grow(o, d + 1))
        return -ENOMEM;
    if (j == d + 1) {
        *held = o->seen[d];
        j--;
    }
    while (j > 0 && !still_open(t, o->seen, j - 1, d)) {
        open_count(o, o->seen[j - 1], 0);
        j--;
    }
    for (; j < d; j++) {
        const struct fnp_node *n = t->frames[j].node;
        if (open_count(o, n, 1)) {
            o->top = j;
            return -ENOMEM;
        }
        o->seen[j] = n;
    }
    o->top = d;
    return 0;
}

/* FNP_OPEN_FUNC if fn, FNP_OPEN_EDGE if the edge from caller (a function) to fn, is open on
 * the thread's real stack (open_sync first; held, counted, is not open). */
static unsigned open_flags(const struct fnp_open_track *o, const struct fnp_node *held,
                           uintptr_t caller, uintptr_t fn)
{
    if (!o->slots)
        return 0;
    uint64_t func = open_slot(o, OPEN_ANY, fn)->frames, edge = open_slot(o, caller, fn)->frames;
    if (held && held->fn == fn && !fnp_key_is_ghost(fn)) {
        func--;
        edge -= open_caller(held) == caller;
    }
    return (func ? FNP_OPEN_FUNC : 0) | (edge ? FNP_OPEN_EDGE : 0);
}

/* The call of l (NULL: none) is pushed at the depth synced: counted in place of held (or,
 * without memory, next time). */
static void open_settle(struct fnp_open_track *o, const struct fnp_node *held,
                        const struct fnp_node *l)
{
    if (held && held == l) {
        o->top++;
        return;
    }
    if (held)
        open_count(o, held, 0);
    if (l && !open_count(o, l, 1))
        o->seen[o->top++] = l;
}

/* A tree node (target NULL) or a link (see runtime.h), keyed (parent, fn). */
static struct fnp_node *new_node(struct fnp_thread *t, struct fnp_node *parent, uintptr_t fn,
                                 struct fnp_node *target)
{
    struct fnp_node *n = fnp_arena_alloc(&t->arena, sizeof(*n));
    if (!n)
        return NULL;
    n->fn = fn;
    n->parent = parent;
    n->hot = &fnp_no_child;
    n->target = target;
    /* Release: a dumping thread that sees n in a list sees it initialised. */
    if (target) {
        n->next_sibling = t->links;
        __atomic_store_n(&t->links, n, __ATOMIC_RELEASE);
    } else {
        n->next_sibling = parent->first_child;
        __atomic_store_n(&parent->first_child, n, __ATOMIC_RELEASE);
        __atomic_store_n(&t->nodes, t->nodes + 1, __ATOMIC_RELAXED);
    }
    __atomic_add_fetch(&fnp_nodes_total, 1, __ATOMIC_RELAXED);
    return n;
}

/*
 * Over the cap (PROF_MAX_NODES) no new context is made. The call goes to a node of the
 * same caller function, callee and open flags (what its own numbers depend on, see
 * fold_target), the class's merged node, and the dump takes its time off the node that
 * made it. Classes are keyed (caller's fn as a fake parent pointer, fn), one table per
 * flags value, each by a link to its merged node (FNP_LINK_BY_FN); calls go through links
 * keyed (caller's node, fn) to it, whose time the dump takes off that caller: a node's own
 * time is then exact however the merged calls nest (when a class's link took them, nested
 * recursive calls were each taken off the class's first caller, which made that node's
 * time hugely negative and its callee's hugely positive: an edge of 700 s in a 0.35 s
 * run). Links of merged nodes are bounded by the classes; links of tree nodes, the
 * region's entries, stop at BOUNDARY_SLACK beyond the cap, and then the class's link
 * takes the call: its time comes off the class's first caller, a node of the same
 * function (function times stay exact; how they split among edges is approximate).
 */
#define BOUNDARY_SLACK(max) ((max) / 8 + 1024)

static struct fnp_node *capped_child(struct fnp_thread *t, struct fnp_node *from,
                                     struct fnp_node *parent, uintptr_t fn)
{
    const struct fnp_node *held;
    if (open_sync(t, &held))
        return NULL;
    unsigned flags = open_flags(&t->open, held, parent->fn, fn);
    struct fnp_table *tb = &t->classes[flags >> 1];
    __atomic_store_n(&t->merged, t->merged + 1, __ATOMIC_RELAXED);
    /* Inside the merged region the caller frame holds a link of the cap. Else the call
     * enters it: below a tree node at the depth limit (marked its own target), or from
     * any tree node once the cap is full. */
    int inside = capped_link(from);
    if (!inside) {
        uint32_t cause = parent->target == parent ? FNP_MERGED_BY_DEPTH : FNP_MERGED_BY_NODES;
        if (!(t->merge_causes & cause))
            __atomic_store_n(&t->merge_causes, t->merge_causes | cause, __ATOMIC_RELAXED);
    }
    struct fnp_node *l = table_find(tb, parent, fn);
    if (!l) {
        /* A code address, never a node's: the class's link has no caller node. */
        struct fnp_node *cls = (struct fnp_node *)parent->fn;
        struct fnp_node *c = table_find(tb, cls, fn);
        if (!c) {
            struct fnp_node *n = new_node(t, parent, fn, NULL);
            if (n) {
                n->target = n; /* marks the region below the cap (fnp_cct_child) */
                c = new_node(t, cls, fn, n);
            }
            if (c && table_add(tb, c))
                c = NULL;
            if (c)
                __atomic_store_n(&c->open_flags, FNP_OPEN_GIVEN | FNP_LINK_BY_FN | flags,
                                 __ATOMIC_RELAXED);
        }
        l = c;
        uint64_t max = fnp_max_nodes();
        if (c && (inside || __atomic_load_n(&fnp_nodes_total, __ATOMIC_RELAXED) <
                                max + BOUNDARY_SLACK(max))) {
            l = new_node(t, parent, fn, c->target);
            if (l && table_add(tb, l))
                l = NULL;
            if (l)
                __atomic_store_n(&l->open_flags, FNP_OPEN_GIVEN | flags, __ATOMIC_RELAXED);
        }
    }
    /* the caller pushes l (if any) at the depth synced */
    open_settle(&t->open, held, l);
    return l;
}

/* The most levels a tree path holds: PROF_MAX_NODES / 64 (16,384 by default). A new
 * context deeper is merged like one beyond the cap, so that a recursion that never
 * repeats costs the tree a path of this length, not a node a level. */
static uint64_t max_levels(void)
{
    uint64_t m = fnp_max_nodes() / 64;
    return m < 64 ? 64 : m;
}

/* n, just made, is at the last level a tree path holds: the calls it makes are merged. A
 * tree path is never longer than the stack that reached it, so the path is measured only
 * on a deep stack, and then from the node made last at that depth when n is its child. */
static int at_depth_limit(struct fnp_thread *t, const struct fnp_node *n)
{
    uint64_t limit = max_levels(), level = 0;
    if ((uint64_t)t->depth + 1 < limit)
        return 0;
    for (const struct fnp_node *p = n; p != &t->root && level < limit; p = p->parent) {
        if (p == t->open.deep) {
            level += t->open.deep_level;
            break;
        }
        level++;
    }
    t->open.deep = n;
    t->open.deep_level = level;
    return level >= limit;
}

/* A placeholder keyed fn under parent: a ghost (a call or region entered while paused, see
 * FNP_GHOST_CALL) or a function PROF_FILTER leaves out (fnp_excluded_key). Keyed like a
 * child, so that the hooks find it as one, but never linked into the tree; calls made
 * inside it go to its target, parent. */
static struct fnp_node *placeholder(struct fnp_thread *t, struct fnp_node *parent, uintptr_t fn)
{
    struct fnp_node *g = table_find(&t->contexts, parent, fn);
    if (g)
        return g;
    if (!(g = fnp_arena_alloc(&t->arena, sizeof(*g))))
        return NULL;
    g->fn = fn;
    g->parent = parent;
    g->hot = &fnp_no_child;
    g->target = parent;
    return table_add(&t->contexts, g) ? NULL : g;
}

FNP_NOINSTR struct fnp_node *fnp_cct_child(struct fnp_thread *t, struct fnp_node *from,
                                           uintptr_t fn)
{
    /* Left out by PROF_FILTER: its placeholder becomes from's hot child, where the hooks
     * find it next time; nothing is pushed (NULL), and nothing counted as lost. */
    int excluded = fnp_exclude_on && !(fn & FNP_REGION_TAG) && fnp_exclude_has(fn & FNP_ADDR_MASK);
    if (excluded)
        fn = fnp_excluded_key(fn);
    /* A signal handler interrupting us here must not touch the table or the arena: its
     * call is dropped, counted, and its exit recognised later (skipped). */
    if (t->busy) {
        if (excluded)
            return NULL; /* no placeholder this time */
        __atomic_store_n(&t->dropped_calls, t->dropped_calls + 1, __ATOMIC_RELAXED);
        t->skipped++;
        return NULL;
    }
    t->busy = 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);

    /* Calls made inside a linked call are children of the link's target. */
    struct fnp_node *parent = from->target ? from->target : from;
    struct fnp_node *n, *target;
    if (excluded || fnp_key_is_ghost(fn)) {
        if ((n = placeholder(t, parent, fn)) != NULL)
            goto found;
        if (!excluded)
            goto fail;
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        t->busy = 0;
        return NULL;
    }
    if (parent->target == parent) {
        /* Below a merged call the path is not the node's: every call is looked up by its
         * class, and nothing is cached on a node that many paths share. (Below a node at
         * the depth limit too: the same numbers, the same way.) */
        if (!(n = capped_child(t, from, parent, fn)))
            goto fail;
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        t->busy = 0;
        return n;
    }
    if ((n = table_find(&t->contexts, parent, fn)) != NULL)
        goto found;
    /* a function of an object loaded since: its library calls are hooked first (plt.c) */
    if (FNP_UNLIKELY(fnp_libcalls_watch) && !(fn & FNP_REGION_TAG))
        fnp_libcalls_seen(fn);
    if ((target = fold_target(parent, fn)) != NULL) {
        n = new_node(t, parent, fn, target);
        if (!n || table_add(&t->contexts, n))
            goto fail;
    } else if (__atomic_load_n(&fnp_nodes_total, __ATOMIC_RELAXED) >= fnp_max_nodes()) {
        /* Not in the contexts table: that keeps within the cap too. */
        if (!(n = capped_child(t, from, parent, fn)))
            goto fail;
    } else {
        n = new_node(t, parent, fn, NULL);
        if (!n || table_add(&t->contexts, n))
            goto fail;
        if (at_depth_limit(t, n))
            n->target = n; /* its callees are merged, as below the cap */
    }
found:
    from->hot = n;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    t->busy = 0;
    return excluded ? NULL : n;
fail:
    __atomic_store_n(&t->dropped_calls, t->dropped_calls + 1, __ATOMIC_RELAXED);
    t->skipped++;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    t->busy = 0;
    return NULL;
}

/* An array of cap frames after a sentinel frame for the root: frames[-1].node is the
 * root, so the hooks find the caller of a call at any depth d as frames[d - 1].node,
 * without a branch for d == 0. NULL when mmap fails. */
static struct fnp_frame *new_frames(struct fnp_thread *t, uint32_t cap)
{
    struct fnp_frame *base = fnp_pages(((size_t)cap + 1) * sizeof(*base));
    if (!base)
        return NULL;
    base[0].node = &t->root;
    return base + 1;
}

FNP_NOINSTR int fnp_cct_init_stack(struct fnp_thread *t, uint32_t cap)
{
    struct fnp_frame *frames = new_frames(t, cap);
    if (!frames)
        return -ENOMEM;
    t->frames = frames;
    t->cap = cap;
    t->root.hot = &fnp_no_child;
    return 0;
}

FNP_NOINSTR int fnp_cct_grow_stack(struct fnp_thread *t)
{
    if (t->busy)
        return -EBUSY;
    uint32_t cap = t->cap * 2;
    if (cap < t->cap)
        return -ENOMEM;
    struct fnp_frame *frames = new_frames(t, cap);
    if (!frames) {
        t->skipped++;
        return -ENOMEM;
    }
    memcpy(frames, t->frames, (size_t)t->depth * sizeof(*frames));
    /* The old array stays mapped, since a dumping thread may still be reading it, but its
     * memory goes back: such a reader then finds zeros, which it skips as frames being
     * pushed. A million-deep stack so costs its last array, not all of them. */
    struct fnp_frame *old = t->frames;
    __atomic_store_n(&t->frames, frames, __ATOMIC_RELEASE);
    madvise(old - 1, ((size_t)t->cap + 1) * sizeof(*old), MADV_DONTNEED);
    t->cap = cap;
    return 0;
}

/* The call of frame f ends at now: its time goes to its node (a ghost's is never read),
 * and to the trace when one is kept. */
static void close_frame(struct fnp_thread *t, const struct fnp_frame *f, uint64_t now)
{
    struct fnp_node *n = f->node;
    __atomic_store_n(&n->ticks, n->ticks + (now - f->t0), __ATOMIC_RELAXED);
    if (FNP_UNLIKELY(fnp_tracing) && !fnp_key_is_ghost(n->fn))
        fnp_trace_add(t, n, f->t0, now);
}

FNP_NOINSTR void fnp_cct_cut(struct fnp_thread *t, uint32_t depth, uint64_t now)
{
    uint32_t d = t->depth;
    while (d > depth) {
        close_frame(t, &t->frames[d - 1], now);
        d--;
    }
    __atomic_store_n(&t->depth, d, __ATOMIC_RELEASE);
}

FNP_NOINSTR void fnp_cct_exit_mismatch(struct fnp_thread *t, uintptr_t fn, uint64_t now)
{
    if (fnp_exclude_exit(t, fn))
        return;
    if (t->skipped) {
        t->skipped--;
        return;
    }
    uint32_t d = t->depth;
    /* A call entered while paused returns (regions left open inside it close with it). */
    uint32_t k = d;
    while (k > 0 && (fnp_key_is_region(t->frames[k - 1].node->fn) ||
                     (t->frames[k - 1].node->fn & FNP_ADDR_MASK) == FNP_GHOST_REGION))
        k--;
    if (k > 0 && (t->frames[k - 1].node->fn & FNP_ADDR_MASK) == FNP_GHOST_CALL) {
        fnp_cct_cut(t, k - 1, now);
        return;
    }
    k = d;
    while (k > 0 && (t->frames[k - 1].node->fn & FNP_ADDR_MASK) != fn)
        k--;
    if (k == 0) {
        __atomic_store_n(&t->unmatched, t->unmatched + 1, __ATOMIC_RELAXED);
        return;
    }
    /* Frames above fn's lost their exits (longjmp, an exception unwinding without exit
     * hooks): they end now, with fn. */
    fnp_cct_cut(t, k - 1, now);
}

FNP_NOINSTR void fnp_cct_exit_cold(struct fnp_thread *t, uintptr_t fn, uint64_t now)
{
    uint32_t d = t->depth;
    const struct fnp_frame *f = &t->frames[(ptrdiff_t)d - 1];
    if (d == 0 || (f->node->fn & FNP_ADDR_MASK) != fn) {
        fnp_cct_exit_mismatch(t, fn, now);
        return;
    }
    close_frame(t, f, now);
    __atomic_store_n(&t->depth, d - 1, __ATOMIC_RELEASE);
}

FNP_NOINSTR void fnp_cct_enter_ghost(struct fnp_thread *t, uintptr_t ghost, uintptr_t sp)
{
    uint32_t d = t->depth;
    if (FNP_UNLIKELY(d >= t->cap) && fnp_cct_grow_stack(t)) {
        t->skipped++;
        return;
    }
    struct fnp_node *below = t->frames[(ptrdiff_t)d - 1].node, *g;
    if (below->fn == ghost) {
        g = below; /* paused calls inside a paused call: one ghost serves */
    } else {
        /* Under another ghost, the ghost of the recorded node below both. */
        struct fnp_node *parent = fnp_key_is_ghost(below->fn) ? below->target : below;
        g = parent->hot;
        if (g->fn != ghost && !(g = fnp_cct_child(t, parent, ghost)))
            return; /* counted as skipped: its exit is recognised */
    }
    fnp_cct_push_as(t, d, g, 0, sp, 0);
}

FNP_NOINSTR void fnp_cct_unwind(struct fnp_thread *t, uintptr_t sp, uint64_t now)
{
    uint32_t d = t->depth;
    while (d > 0 && t->frames[d - 1].sp < sp)
        d--;
    fnp_cct_cut(t, d, now);
}
