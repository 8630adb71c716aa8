/*
 * The calling-context tree's cold paths: creating a node, growing the shadow stack,
 * repairing the stack when an exit does not match. The steady path is inline in
 * runtime.h so that the hooks compile to straight-line code.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "runtime.h"

#define FIRST_TABLE 256

static inline size_t slot_of(const struct fnp_node *parent, uintptr_t fn, size_t mask)
{
    uint64_t h = ((uint64_t)(uintptr_t)parent >> 6) ^ ((uint64_t)fn * 0x9e3779b97f4a7c15ull);
    return (size_t)(h ^ (h >> 32)) & mask;
}

/* Doubles the (parent, fn) table. Only the owner thread reads it, so the old one can go. */
static int table_grow(struct fnp_thread *t)
{
    size_t cap = t->table ? (t->table_mask + 1) * 2 : FIRST_TABLE;
    struct fnp_node **table = fnp_pages(cap * sizeof(*table));
    if (!table)
        return -ENOMEM;
    for (size_t i = 0; t->table && i <= t->table_mask; i++) {
        struct fnp_node *n = t->table[i];
        if (!n)
            continue;
        size_t j = slot_of(n->parent, n->fn, cap - 1);
        while (table[j])
            j = (j + 1) & (cap - 1);
        table[j] = n;
    }
    if (t->table)
        munmap(t->table, (t->table_mask + 1) * sizeof(*t->table));
    t->table = table;
    t->table_mask = cap - 1;
    return 0;
}

FNP_NOINSTR struct fnp_node *fnp_cct_child(struct fnp_thread *t, struct fnp_node *parent,
                                           uintptr_t fn)
{
    /* A signal handler interrupting us here must not touch the table or the arena: its
     * call is dropped, counted, and its exit recognised later (skipped). */
    if (t->busy) {
        __atomic_store_n(&t->dropped_calls, t->dropped_calls + 1, __ATOMIC_RELAXED);
        t->skipped++;
        return NULL;
    }
    t->busy = 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);

    struct fnp_node *n = NULL;
    if (!t->table && table_grow(t))
        goto fail;
    size_t j = slot_of(parent, fn, t->table_mask);
    for (; t->table[j]; j = (j + 1) & t->table_mask) {
        if (t->table[j]->parent == parent && t->table[j]->fn == fn) {
            n = t->table[j];
            goto found;
        }
    }
    if ((t->table_count + 1) * 2 > t->table_mask + 1) {
        if (table_grow(t))
            goto fail;
        j = slot_of(parent, fn, t->table_mask);
        while (t->table[j])
            j = (j + 1) & t->table_mask;
    }
    n = fnp_arena_alloc(&t->arena, sizeof(*n));
    if (!n)
        goto fail;
    n->fn = fn;
    n->parent = parent;
    n->next_sibling = parent->first_child;
    /* Release: a dumping thread that sees n in the list sees it initialised. */
    __atomic_store_n(&parent->first_child, n, __ATOMIC_RELEASE);
    t->table[j] = n;
    t->table_count++;
    __atomic_store_n(&t->nodes, t->nodes + 1, __ATOMIC_RELAXED);
found:
    parent->hot = n;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    t->busy = 0;
    return n;
fail:
    __atomic_store_n(&t->dropped_calls, t->dropped_calls + 1, __ATOMIC_RELAXED);
    t->skipped++;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    t->busy = 0;
    return NULL;
}

FNP_NOINSTR int fnp_cct_grow_stack(struct fnp_thread *t)
{
    if (t->busy)
        return -EBUSY;
    uint32_t cap = t->cap * 2;
    if (cap < t->cap)
        return -ENOMEM;
    struct fnp_frame *frames = fnp_pages((size_t)cap * sizeof(*frames));
    if (!frames) {
        t->skipped++;
        return -ENOMEM;
    }
    memcpy(frames, t->frames, (size_t)t->depth * sizeof(*frames));
    /* The old array stays mapped: a dumping thread may still be reading it. */
    __atomic_store_n(&t->frames, frames, __ATOMIC_RELEASE);
    t->cap = cap;
    return 0;
}

FNP_NOINSTR void fnp_cct_exit_mismatch(struct fnp_thread *t, uintptr_t fn, uint64_t now)
{
    if (t->skipped) {
        t->skipped--;
        return;
    }
    uint32_t d = t->depth;
    uint32_t k = d;
    while (k > 0 && (t->frames[k - 1].node->fn & FNP_ADDR_MASK) != fn)
        k--;
    if (k == 0) {
        __atomic_store_n(&t->unmatched, t->unmatched + 1, __ATOMIC_RELAXED);
        return;
    }
    /* Frames above fn's lost their exits (longjmp, an exception unwinding without exit
     * hooks): they end now, with fn. */
    for (uint32_t i = d; i >= k; i--) {
        struct fnp_node *n = t->frames[i - 1].node;
        __atomic_store_n(&n->ticks, n->ticks + (now - t->frames[i - 1].t0), __ATOMIC_RELAXED);
    }
    __atomic_store_n(&t->depth, k - 1, __ATOMIC_RELEASE);
}

FNP_NOINSTR void fnp_cct_unwind(struct fnp_thread *t, uintptr_t sp, uint64_t now)
{
    uint32_t d = t->depth;
    while (d > 0 && t->frames[d - 1].sp < sp) {
        struct fnp_node *n = t->frames[d - 1].node;
        __atomic_store_n(&n->ticks, n->ticks + (now - t->frames[d - 1].t0), __ATOMIC_RELAXED);
        d--;
    }
    __atomic_store_n(&t->depth, d, __ATOMIC_RELEASE);
}
