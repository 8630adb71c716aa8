/* SPDX-License-Identifier: MIT */
/*
 * The two entry points -finstrument-functions calls around every instrumented function.
 * Exported with default visibility: they must interpose glibc's no-op pair, whether
 * libfnprof.so is linked or LD_PRELOADed, and libfnprof.a must win at static link time.
 *
 * Steady path: one load of fnp_recording (zero: return; its mode bits pick timed or
 * count-only), the thread's state from initial-exec TLS, the child entered last, one
 * rdtsc (none in count-only mode), a push or a pop. It makes no call, so it saves no
 * register; everything else is reached by a tail call.
 */
#include "runtime.h"

#define FNP_HOOK __attribute__((visibility("default"), no_instrument_function))
#define FNP_INLINE static inline __attribute__((always_inline, no_instrument_function))

/*
 * A frame's sp: the caller's stack pointer before the call, less 16 (where a hook with a
 * frame pointer would have it; interpose.c cuts against the same measure). From the CFA,
 * so that the hook needs no frame of its own.
 */
#define FNP_CALLER_SP() ((uintptr_t)__builtin_dwarf_cfa() - 16)

/* The steady path's clock: timed 1 reads the TSC as it is, timed 2 (the compensating
 * pair) ordered, timed 0 (count-only) not at all. */
FNP_INLINE uint64_t hook_clock(int timed)
{
    return timed == 2 ? fnp_clock_tsc_ordered() : timed ? fnp_clock_tsc() : 0;
}

/* Everything but the steady case (first call of a thread, stack full, a clock that is a
 * call), out of line: the steady path then saves no register at all and reaches this by
 * a tail call. */
static FNP_COLD void enter_slow(uintptr_t key, uintptr_t sp)
{
    struct fnp_thread *t = fnp_tls;
    if (!t && !(t = fnp_thread_attach()))
        return;
    if (__atomic_load_n(&fnp_recording, __ATOMIC_RELAXED) & FNP_ON_PAUSED) {
        /* an excluded function pushes nothing, paused or not: its exit pops nothing */
        if (!fnp_exclude_on || !fnp_exclude_has(key & FNP_ADDR_MASK))
            fnp_cct_enter_ghost(t, FNP_GHOST_CALL, sp);
    } else
        fnp_cct_enter(t, key, fnp_clock_now(), sp);
}

/* Another child than the one entered last from this caller (a caller that calls many
 * functions in turn): found by a short inline probe of the table, out of line itself so
 * that the steady path keeps every register free. One copy per mode. */
FNP_INLINE void other_child(struct fnp_thread *t, struct fnp_node *parent, uintptr_t key,
                            uintptr_t sp, int timed)
{
    uint32_t d = t->depth;
    struct fnp_node *n = fnp_cct_probe(t, parent, key);
    if (!n && FNP_UNLIKELY(fnp_exclude_on)) {
        /* left out by PROF_FILTER, and not the placeholder entered last */
        struct fnp_node *x;
        if ((x = fnp_cct_probe(t, parent, fnp_excluded_key(key))) != NULL) {
            parent->hot = x;
            return;
        }
    }
    if (!n || d >= t->cap) {
        enter_slow(key, sp);
        return;
    }
    parent->hot = n;
    fnp_cct_push_as(t, d, n, hook_clock(timed), sp, timed != 0);
}

static __attribute__((noinline, no_instrument_function)) void
other_child_timed(struct fnp_thread *t, struct fnp_node *parent, uintptr_t key, uintptr_t sp)
{
    other_child(t, parent, key, sp, 1);
}

static __attribute__((noinline, no_instrument_function)) void
other_child_count(struct fnp_thread *t, struct fnp_node *parent, uintptr_t key, uintptr_t sp)
{
    other_child(t, parent, key, sp, 0);
}

static __attribute__((noinline, no_instrument_function)) void
other_child_ordered(struct fnp_thread *t, struct fnp_node *parent, uintptr_t key, uintptr_t sp)
{
    other_child(t, parent, key, sp, 2);
}

/* The steady enter, timed (rdtsc: 1, ordered: 2) or count-only (0); timed is a constant,
 * and so is filter:
 * the filtering pair's (PROF_FILTER) first tests for the placeholder of a function the
 * filter leaves out (exclude.c), which then costs this and a return. Only that pair tests
 * it: in the others the test would cost every call a saved register. */
FNP_INLINE void enter_as(uintptr_t key, uintptr_t sp, int timed, int filter)
{
    struct fnp_thread *t = fnp_tls;
    if (FNP_UNLIKELY(!t)) {
        enter_slow(key, sp);
        return;
    }
    uint32_t d = t->depth;
    struct fnp_node *parent = t->frames[(ptrdiff_t)d - 1].node; /* [-1]: the root */
    struct fnp_node *n = parent->hot;
    if (FNP_UNLIKELY(n->fn != key)) {
        if (filter && n->fn == fnp_excluded_key(key))
            return;
        if (timed == 2)
            other_child_ordered(t, parent, key, sp);
        else if (timed)
            other_child_timed(t, parent, key, sp);
        else
            other_child_count(t, parent, key, sp);
        return;
    }
    if (FNP_UNLIKELY(d >= t->cap)) {
        enter_slow(key, sp);
        return;
    }
    fnp_cct_push_as(t, d, n, hook_clock(timed), sp, timed != 0);
}

static __attribute__((noinline, no_instrument_function)) void enter_count(uintptr_t key,
                                                                          uintptr_t sp)
{
    enter_as(key, sp, 0, 0);
}

/* A hook pair is built for one expected mode and takes it inline: timed (0), counting (1),
 * tracing (2: timed, and exits keep their calls), filtering (3: timed, and functions
 * PROF_FILTER leaves out pass through first) or compensating (4: timed, its reads of the
 * TSC ordered, clock.c). The general pair expects timed and reaches
 * count-only by a tail call (when the loader could not pick the counting pair); anything
 * else, the clock that is a call, or a mode the loader did not foresee, takes the slow
 * path, which is right in every mode. */
#define FNP_EXPECT(rec, mode)                                                                      \
    ((mode) == 1   ? ((rec)&FNP_ON_COUNT) != 0                                                     \
     : (mode) == 2 ? ((rec)&FNP_ON_MODES) == FNP_ON_TRACE                                          \
     : (mode) == 4 ? ((rec)&FNP_ON_MODES) == FNP_ON_ORDERED                                        \
                   : !((rec)&FNP_ON_MODES))

FNP_INLINE void enter_hook(void *fn, int counting)
{
    uint64_t rec = __atomic_load_n(&fnp_recording, __ATOMIC_RELAXED);
    if (FNP_UNLIKELY(!rec))
        return;
    uintptr_t key = fnp_key((uintptr_t)fn, rec), sp = FNP_CALLER_SP();
    if (FNP_LIKELY(FNP_EXPECT(rec, counting)))
        enter_as(key, sp, counting == 4 ? 2 : counting != 1, counting == 3);
    else if (rec & FNP_ON_COUNT)
        enter_count(key, sp);
    else
        enter_slow(key, sp);
}

/* Paused, tracing, or a clock that is a call. */
static FNP_COLD void exit_slow(struct fnp_thread *t, uintptr_t fn)
{
    fnp_cct_exit_cold(t, fn, fnp_clock_now());
}

/* The tracing exit's cold path (a chunk full or handed to the writer, a new base): the
 * call kept, then the frame popped, as the steady path orders them. Reached by a tail call,
 * so that the steady path makes no call and saves no register. */
static FNP_COLD void exit_trace_cold(struct fnp_thread *t, const struct fnp_node *n, uint64_t t0,
                                     uint64_t t1, uint32_t d)
{
    fnp_trace_add_cold(t, n, t0, t1);
    __atomic_store_n(&t->depth, d - 1, __ATOMIC_RELEASE);
}

/* The exit of the tracing (mode 2) and filtering (3) pairs: the timed exit, then the call
 * kept for the trace; or, first, the exit of a function the filter leaves out, entered
 * last from the innermost frame's function, which returns before the clock is read. */
FNP_INLINE void exit_timed(struct fnp_thread *t, uintptr_t fn, int mode)
{
    uint32_t d = t->depth;
    struct fnp_frame *f = &t->frames[(ptrdiff_t)d - 1];
    struct fnp_node *n = f->node;
    if (FNP_UNLIKELY((n->fn & FNP_ADDR_MASK) != fn)) {
        if (mode != 3 || (n->hot->fn & FNP_ADDR_MASK) != fnp_excluded_key(fn))
            exit_slow(t, fn);
        return;
    }
    uint64_t now = fnp_clock_tsc(), t0 = f->t0;
    __atomic_store_n(&n->ticks, n->ticks + (now - t0), __ATOMIC_RELAXED);
    if (mode == 2 && FNP_UNLIKELY(!fnp_trace_store(t, n, t0, now))) {
        exit_trace_cold(t, n, t0, now, d);
        return;
    }
    __atomic_store_n(&t->depth, d - 1, __ATOMIC_RELEASE);
}

FNP_INLINE void exit_hook(void *fn, int counting)
{
    /* The compensating pair (4) reads the clock first, before anything of its own has run:
     * the callee's interval then holds as little of the hooks as it can. */
    uint64_t first = counting == 4 ? fnp_clock_tsc_ordered() : 0;
    uint64_t rec = __atomic_load_n(&fnp_recording, __ATOMIC_RELAXED);
    if (FNP_UNLIKELY(!rec))
        return;
    struct fnp_thread *t = fnp_tls;
    if (FNP_UNLIKELY(!t))
        return;
    if (counting == 4 && FNP_LIKELY(FNP_EXPECT(rec, counting)))
        fnp_cct_exit_as(t, (uintptr_t)fn, first, 1);
    else if ((counting == 2 || counting == 3) && FNP_LIKELY(FNP_EXPECT(rec, counting)))
        exit_timed(t, (uintptr_t)fn, counting);
    else if (counting < 2 && FNP_LIKELY(FNP_EXPECT(rec, counting)))
        fnp_cct_exit_as(t, (uintptr_t)fn, counting ? 0 : fnp_clock_tsc(), !counting);
    else if (rec & FNP_ON_COUNT)
        fnp_cct_exit_as(t, (uintptr_t)fn, 0, 0);
    else
        exit_slow(t, (uintptr_t)fn);
}

/* One hook pair for one expected mode. call_site is the physical caller, wrong for
 * inlined callees: the shadow stack knows. */
#define FNP_HOOK_PAIR(enter_name, exit_name, counting)                                             \
    static FNP_NOINSTR void enter_name(void *fn, void *call_site)                                  \
    {                                                                                              \
        (void)call_site;                                                                           \
        enter_hook(fn, counting);                                                                  \
    }                                                                                              \
    static FNP_NOINSTR void exit_name(void *fn, void *call_site)                                   \
    {                                                                                              \
        (void)call_site;                                                                           \
        exit_hook(fn, counting);                                                                   \
    }

FNP_HOOK_PAIR(hook_enter, hook_exit, 0)

/*
 * The exported pair. Where glibc has ifunc, the loader asks at relocation which function
 * the names stand for: with no PROF_OUTPUT in the environment, fnprof will never record,
 * and the hooks become a bare return, exactly glibc's own no-op pair (without it every
 * hook would load and test fnp_recording: 0.5-0.9 ns a call pair, 6-9% of the floor, in
 * bench/run); with PROF_TIMER=none, the counting pair. Anything unsure (no /proc) takes
 * the general pair, which is right in every mode.
 */
#if FNP_HAVE_IFUNC

static FNP_NOINSTR void hook_none(void *fn, void *call_site)
{
    (void)fn;
    (void)call_site;
}

typedef void fnp_hook_fn(void *, void *);

FNP_HOOK_PAIR(hook_enter_count, hook_exit_count, 1)
FNP_HOOK_PAIR(hook_enter_trace, hook_exit_trace, 2)
FNP_HOOK_PAIR(hook_enter_filter, hook_exit_filter, 3)
FNP_HOOK_PAIR(hook_enter_ordered, hook_exit_ordered, 4)

static FNP_EARLY fnp_hook_fn *pick(fnp_hook_fn *timed, fnp_hook_fn *counting, fnp_hook_fn *tracing,
                                   fnp_hook_fn *filtering, fnp_hook_fn *ordered)
{
    int seen = fnp_peek();
    if (seen < 0)
        return timed;
    if (!(seen & FNP_PEEK_OUTPUT))
        return hook_none;
    if (seen & FNP_PEEK_COUNT)
        return counting;
    if (seen & FNP_PEEK_TRACE)
        return tracing;
    if (seen & FNP_PEEK_FILTER)
        return filtering;
    /* On a clock other than the TSC it still works, through its slow path. */
    return seen & FNP_PEEK_COMPENSATE ? ordered : timed;
}

static __attribute__((used)) FNP_EARLY fnp_hook_fn *resolve_enter(void)
{
    return pick(hook_enter, hook_enter_count, hook_enter_trace, hook_enter_filter,
                hook_enter_ordered);
}

static __attribute__((used)) FNP_EARLY fnp_hook_fn *resolve_exit(void)
{
    return pick(hook_exit, hook_exit_count, hook_exit_trace, hook_exit_filter, hook_exit_ordered);
}

FNP_HOOK void __cyg_profile_func_enter(void *fn, void *call_site)
    __attribute__((ifunc("resolve_enter")));
FNP_HOOK void __cyg_profile_func_exit(void *fn, void *call_site)
    __attribute__((ifunc("resolve_exit")));

#else

FNP_HOOK void __cyg_profile_func_enter(void *fn, void *call_site)
{
    hook_enter(fn, call_site);
}

FNP_HOOK void __cyg_profile_func_exit(void *fn, void *call_site)
{
    hook_exit(fn, call_site);
}

#endif

/* The pair the program's calls reach, for calibrate.c, which calls it as they do: through
 * the exported names, so through whatever the loader bound them to (glibc's no-op pair,
 * should it win: calibrate.c then finds nothing recorded). Taken here, where the names are
 * defined: a reference from another object would be an undefined hook symbol, which the
 * build's test of an uninstrumented runtime refuses. */
void fnp_hooks_exported(fnp_hook_pair_fn **enter, fnp_hook_pair_fn **exit)
{
    *enter = __cyg_profile_func_enter;
    *exit = __cyg_profile_func_exit;
}
