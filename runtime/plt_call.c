/* SPDX-License-Identifier: MIT */
/*
 * A library call's way through the trampoline beyond the common case (plt_fast.c): the
 * slow enter and exit, which the trampoline reaches with every register saved; the call
 * an exception or a thread's forced unwinding passes through (the personality routine and
 * the landing pad's work); the records a longjmp leaves behind; a thread's records when it
 * ends. docs/libcalls.md says what is recorded; plt.h how a call is carried.
 */
#include <dlfcn.h>

#include "plt.h"

#ifdef FNP_HAVE_LIBCALLS

uint64_t fnp_lc_xsave_size;

/* The thread's pool, mapped on its first library call (its pages are touched as they are
 * used: 4096 records reserve 256 KiB). NULL when out of memory. */
static FNP_NOINSTR struct fnp_lc_pool *pool_of(struct fnp_thread *t)
{
    if (!t->libcalls) {
        struct fnp_lc_pool *p = fnp_pages(sizeof(*p) + FNP_LC_POOL_RECS * sizeof(p->recs[0]));
        if (!p)
            return NULL;
        p->cap = FNP_LC_POOL_RECS;
        __atomic_store_n(&t->libcalls, p, __ATOMIC_RELEASE); /* read by the dump */
    }
    return t->libcalls;
}

uintptr_t fnp_lc_enter_slow(const struct fnp_lc_entry *e, uintptr_t *slot, const uintptr_t *args)
{
    uint64_t rec = __atomic_load_n(&fnp_recording, __ATOMIC_RELAXED);
    /* Paused: as if the library were not hooked; the callbacks it makes are ghosts' work. */
    if (!rec || (rec & FNP_ON_PAUSED))
        return FNP_LC_PASS;
    struct fnp_thread *t = fnp_tls;
    if (!t && !(t = fnp_thread_attach()))
        return FNP_LC_PASS;
    struct fnp_lc_pool *p = pool_of(t);
    if (!p || p->busy)
        return FNP_LC_PASS;
    uintptr_t key = fnp_lc_key(e, args);
    struct fnp_lc_rec *r = fnp_lc_take(p);
    if (!r) {
        p->dropped++;
        return FNP_LC_PASS;
    }
    uint32_t d = t->depth;
    fnp_cct_enter(t, key, fnp_clock_now(), FNP_LC_FRAME_SP(slot));
    if (t->depth != d + 1) { /* not recorded (out of memory, a signal inside the cold path) */
        fnp_lc_free(p, r);
        return FNP_LC_PASS;
    }
    fnp_lc_fill(r, p, e, slot, key);
    return (uintptr_t)r;
}

void fnp_lc_exit_slow(struct fnp_lc_rec *r)
{
    struct fnp_thread *t = fnp_tls;
    if (r->key && t && __atomic_load_n(&fnp_recording, __ATOMIC_RELAXED))
        fnp_cct_exit_cold(t, r->key, fnp_clock_now());
    fnp_lc_free(r->pool, r);
}

/*
 * An exception, or pthread_exit's unwinding, passes through the call of r: the landing
 * pad of the trampoline's call site (plt_tramp.S) calls this before unwinding on. The
 * call ends now, with whatever the unwinding left open above it (clang's code runs no exit
 * hook while unwinding), and its record is free.
 */
__attribute__((visibility("hidden"))) void fnp_lc_unwound(struct fnp_lc_rec *r)
{
    struct fnp_thread *t = fnp_tls;
    if (r->key && t && __atomic_load_n(&fnp_recording, __ATOMIC_RELAXED))
        fnp_cct_unwind(t, r->slot - 8, fnp_clock_now()); /* the caller's frame's sp */
    fnp_lc_free(r->pool, r);
}

/* ---- the personality routine of the trampoline's frames ------------------------------- */

/* The unwinder's calls, looked up when an exception first passes (libfnprof does not link
 * the unwinder: a C program that never unwinds never loads it). */
typedef uintptr_t get_ip_fn(void *ctx);
typedef void set_fn(void *ctx, int index, uintptr_t value);
typedef void set_ip_fn(void *ctx, uintptr_t value);
static get_ip_fn *get_ip;
static set_fn *set_gr;
static set_ip_fn *set_ip;
/* _Unwind_Resume, which the landing pad calls (hidden: reached %rip-relative) */
__attribute__((visibility("hidden"))) void *fnp_lc_resume;
extern const char fnp_lc_landing[];

#define URC_INSTALL_CONTEXT 7
#define URC_CONTINUE_UNWIND 8
#define UA_CLEANUP_PHASE 2

static int find_unwinder(void)
{
    if (__atomic_load_n(&fnp_lc_resume, __ATOMIC_ACQUIRE))
        return 1;
    get_ip = (get_ip_fn *)dlsym(RTLD_DEFAULT, "_Unwind_GetIP");
    set_gr = (set_fn *)dlsym(RTLD_DEFAULT, "_Unwind_SetGR");
    set_ip = (set_ip_fn *)dlsym(RTLD_DEFAULT, "_Unwind_SetIP");
    void *resume = dlsym(RTLD_DEFAULT, "_Unwind_Resume");
    if (!get_ip || !set_gr || !set_ip || !resume)
        return 0;
    __atomic_store_n(&fnp_lc_resume, resume, __ATOMIC_RELEASE);
    return 1;
}

/*
 * The unwinder asks this about every frame of the trampoline it meets. In the cleanup
 * phase, at the call of a library function, the answer is the landing pad (%rax: the
 * exception), as for a C++ destructor; anywhere else, and whenever the unwinder's own
 * calls cannot be found (a C program whose unwinder glibc loaded for itself alone: then
 * the thread is ending, and its frames close when it ends), unwinding goes on.
 */
__attribute__((visibility("hidden"))) int
fnp_lc_personality(int version, int actions, uint64_t exception_class, void *exception, void *ctx)
{
    (void)exception_class;
    if (version != 1 || !(actions & UA_CLEANUP_PHASE) || !find_unwinder())
        return URC_CONTINUE_UNWIND;
    if (get_ip(ctx) != (uintptr_t)fnp_lc_ret)
        return URC_CONTINUE_UNWIND;
    set_gr(ctx, 0, (uintptr_t)exception); /* %rax: __builtin_eh_return_data_regno(0) */
    set_ip(ctx, (uintptr_t)fnp_lc_landing);
    return URC_INSTALL_CONTEXT;
}

/* ---- what a longjmp or a thread's end leaves behind ---------------------------------- */

void fnp_libcalls_jump(uintptr_t from, uintptr_t to)
{
    struct fnp_thread *t = fnp_tls;
    struct fnp_lc_pool *p = t ? t->libcalls : NULL;
    if (!p || p->busy || to <= from)
        return;
    p->busy = 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    for (uint32_t i = 0; i < p->top; i++)
        if (p->recs[i].live && p->recs[i].slot >= from && p->recs[i].slot < to)
            p->recs[i].live = 0;
    fnp_lc_settle(p);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    p->busy = 0;
}

void fnp_libcalls_thread_ended(struct fnp_thread *t)
{
    struct fnp_lc_pool *p = t->libcalls;
    if (!p)
        return;
    for (uint32_t i = 0; i < p->top; i++)
        p->recs[i].live = 0;
    p->top = 0;
}

uint64_t fnp_libcalls_dropped(void)
{
    uint64_t n = 0;
    for (struct fnp_thread *t = fnp_thread_list(); t; t = t->next) {
        struct fnp_lc_pool *p = __atomic_load_n(&t->libcalls, __ATOMIC_ACQUIRE);
        if (p)
            n += __atomic_load_n(&p->dropped, __ATOMIC_RELAXED);
    }
    return n;
}

#else

void fnp_libcalls_jump(uintptr_t from, uintptr_t to)
{
    (void)from;
    (void)to;
}

void fnp_libcalls_thread_ended(struct fnp_thread *t)
{
    (void)t;
}

uint64_t fnp_libcalls_dropped(void)
{
    return 0;
}

#endif
