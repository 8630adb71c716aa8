/*
 * The two entry points -finstrument-functions calls around every instrumented function.
 * Exported with default visibility: they must interpose glibc's no-op pair, whether
 * libfnprof.so is linked or LD_PRELOADed, and libfnprof.a must win at static link time.
 *
 * Steady path: the recording flag (inert test, one predictable branch when PROF_OUTPUT is
 * unset), the thread's state from initial-exec TLS, the child entered last, one rdtsc (or
 * none in count-only mode), a push or a pop. It makes no call, so it saves no register;
 * everything else is reached by a tail call.
 */
#include "runtime.h"

#define FNP_HOOK __attribute__((visibility("default"), no_instrument_function))

/*
 * A frame's sp: the caller's stack pointer before the call, less 16 (where a hook with a
 * frame pointer would have it; interpose.c cuts against the same measure). From the CFA,
 * so that the hook needs no frame of its own.
 */
#define FNP_CALLER_SP() ((uintptr_t)__builtin_dwarf_cfa() - 16)

/* Everything but the steady case (first call of a thread, stack full, a child not the
 * last one entered), out of line: the steady path then saves no register at all and
 * reaches this by a tail call. */
static FNP_COLD void enter_slow(uintptr_t key, uintptr_t sp)
{
    struct fnp_thread *t = fnp_tls;
    if (!t && !(t = fnp_thread_attach()))
        return;
    fnp_cct_enter(t, key, fnp_clock_now(), sp);
}

/* Another child than the one entered last from this caller (a caller that calls many
 * functions in turn): found by a short inline probe of the table, out of line itself so
 * that the steady path keeps every register free. */
static __attribute__((noinline, no_instrument_function)) void
enter_other_child(struct fnp_thread *t, struct fnp_node *parent, uintptr_t key, uintptr_t sp)
{
    uint32_t d = t->depth;
    struct fnp_node *n = fnp_cct_probe(t, parent, key);
    uint64_t now;
    if (!n || d >= t->cap || !fnp_clock_inline(&now)) {
        enter_slow(key, sp);
        return;
    }
    parent->hot = n;
    fnp_cct_push(t, d, n, now, sp);
}

FNP_HOOK void __cyg_profile_func_enter(void *fn, void *call_site)
{
    (void)call_site; /* the physical caller, wrong for inlined callees: the stack knows */
    uint64_t rec = __atomic_load_n(&fnp_recording, __ATOMIC_RELAXED);
    if (FNP_UNLIKELY(!rec))
        return;
    uintptr_t key = fnp_key((uintptr_t)fn, rec), sp = FNP_CALLER_SP();
    struct fnp_thread *t = fnp_tls;
    if (FNP_UNLIKELY(!t)) {
        enter_slow(key, sp);
        return;
    }
    uint32_t d = t->depth;
    struct fnp_node *parent = d ? t->frames[d - 1].node : &t->root;
    struct fnp_node *n = parent->hot;
    uint64_t now;
    if (FNP_UNLIKELY(!n || n->fn != key)) {
        enter_other_child(t, parent, key, sp);
        return;
    }
    if (FNP_UNLIKELY(d >= t->cap || !fnp_clock_inline(&now))) {
        enter_slow(key, sp);
        return;
    }
    fnp_cct_push(t, d, n, now, sp);
}

static FNP_COLD void exit_slow(struct fnp_thread *t, uintptr_t fn)
{
    fnp_cct_exit(t, fn, fnp_clock_now());
}

FNP_HOOK void __cyg_profile_func_exit(void *fn, void *call_site)
{
    (void)call_site;
    if (FNP_UNLIKELY(!__atomic_load_n(&fnp_recording, __ATOMIC_RELAXED)))
        return;
    struct fnp_thread *t = fnp_tls;
    if (FNP_UNLIKELY(!t))
        return;
    uint64_t now;
    if (FNP_UNLIKELY(!fnp_clock_inline(&now))) {
        exit_slow(t, (uintptr_t)fn);
        return;
    }
    fnp_cct_exit(t, (uintptr_t)fn, now);
}
