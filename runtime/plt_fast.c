/* SPDX-License-Identifier: MIT */
/*
 * The library call's common case (PROF_LIBCALLS): the enter and exit the trampoline calls
 * first, with only the integer argument registers saved. This file is compiled with
 * -mgeneral-regs-only (runtime/CMakeLists.txt): it must leave the vector and x87 registers
 * as it found them, since they hold the callee's arguments and return value. It calls
 * nothing; whatever needs more (a thread's first call, a new tree node, a clock that is
 * a call, tracing, pausing, a stack to repair) answers FNP_LC_SLOW, and the trampoline
 * saves every register before fnp_lc_enter_slow or fnp_lc_exit_slow (plt_call.c).
 */
#include "plt.h"

#ifdef FNP_HAVE_LIBCALLS

/* The modes these paths take: timed by rdtsc, or count-only (a clock that is a call sets
 * FNP_ON_CLOCK_CALL). */
#define FAST_MODES (FNP_ON_MODES & ~FNP_ON_COUNT)

uintptr_t fnp_lc_enter(const struct fnp_lc_entry *e, uintptr_t *slot, const uintptr_t *args)
{
    uint64_t rec = __atomic_load_n(&fnp_recording, __ATOMIC_RELAXED);
    if (!rec)
        return FNP_LC_PASS;
    struct fnp_thread *t = fnp_tls;
    if (FNP_UNLIKELY(!t || !t->libcalls || (rec & FAST_MODES)))
        return FNP_LC_SLOW;
    struct fnp_lc_pool *p = t->libcalls;
    if (FNP_UNLIKELY(p->busy))
        return FNP_LC_PASS; /* a signal handler inside a record's taking or freeing */
    uintptr_t key = fnp_lc_key(e, args);
    uint32_t d = t->depth;
    if (FNP_UNLIKELY(d >= t->cap))
        return FNP_LC_SLOW;
    struct fnp_node *parent = t->frames[(ptrdiff_t)d - 1].node, *n = parent->hot;
    if (FNP_UNLIKELY(n->fn != key)) {
        if (!(n = fnp_cct_probe(t, parent, key)))
            return FNP_LC_SLOW;
        parent->hot = n;
    }
    struct fnp_lc_rec *r = fnp_lc_take(p);
    if (FNP_UNLIKELY(!r)) {
        p->dropped++;
        return FNP_LC_PASS;
    }
    fnp_lc_fill(r, p, e, slot, key);
    int timed = !(rec & FNP_ON_COUNT);
    fnp_cct_push_as(t, d, n, timed ? fnp_clock_tsc() : 0, FNP_LC_FRAME_SP(slot), timed);
    return (uintptr_t)r;
}

int fnp_lc_exit(struct fnp_lc_rec *r)
{
    if (r->key) {
        uint64_t rec = __atomic_load_n(&fnp_recording, __ATOMIC_RELAXED);
        if (rec) {
            struct fnp_thread *t = fnp_tls;
            if (!t || (rec & FAST_MODES))
                return 0;
            uint32_t d = t->depth;
            struct fnp_frame *f = &t->frames[(ptrdiff_t)d - 1];
            struct fnp_node *n = f->node;
            if (FNP_UNLIKELY(d == 0 || (n->fn & FNP_ADDR_MASK) != r->key))
                return 0; /* frames to repair (fnp_cct_exit_mismatch) */
            if (!(rec & FNP_ON_COUNT))
                __atomic_store_n(&n->ticks, n->ticks + (fnp_clock_tsc() - f->t0), __ATOMIC_RELAXED);
            __atomic_store_n(&t->depth, d - 1, __ATOMIC_RELEASE);
        }
    }
    fnp_lc_free(r->pool, r);
    return 1;
}

#endif
