/* SPDX-License-Identifier: MIT */
/*
 * PROF_LIBCALLS (docs/libcalls.md): what plt.c (finding and hooking GOT slots),
 * plt_call.c (one call's way through the trampoline), plt_fast.c (its common case) and
 * plt_tramp.S (the trampoline) share. Included by the assembly file too: its offsets are
 * checked against the C structures below.
 *
 * A hooked slot holds a stub of ours (16 bytes: the address of its entry in r11, a jump to
 * the trampoline). The trampoline lets a call through untouched unless it comes from the
 * object that owns the slot (a function pointer handed to another library stays that
 * library's call) and recording is on; otherwise it records the call as a function of the
 * tree and reaches the real function by calling it itself, with the caller's stack as it
 * was: it takes the return address off the stack into a record (per thread) and calls the
 * function in its place, so that stack arguments, however many, are where the callee looks
 * for them. %rbx holds the record across the call; the unwind information of the call
 * site (DWARF expressions on %rbx) gives the caller's return address and %rbx back, so
 * exceptions, pthread_exit, backtrace() and debuggers pass through as through any frame.
 */
#ifndef FNPROF_PLT_H
#define FNPROF_PLT_H

/* Where the trampoline exists: x86_64 Linux, and not in a runtime built with a sanitizer
 * (whose code would touch the registers the trampoline keeps for the callee). */
#if defined(__x86_64__) && defined(__linux__) && !defined(__SANITIZE_ADDRESS__) &&                 \
    !defined(__SANITIZE_THREAD__)
#define FNP_HAVE_LIBCALLS 1
#endif
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#undef FNP_HAVE_LIBCALLS
#endif
#endif

/* struct fnp_lc_entry, as the trampoline reads it */
#define FNP_LC_E_REAL 0
#define FNP_LC_E_LO 16
#define FNP_LC_E_HI 24
/* struct fnp_lc_rec */
#define FNP_LC_R_RA 0
#define FNP_LC_R_RBX 8
#define FNP_LC_R_REAL 16
/* what fnp_lc_enter returns when it gives no record */
#define FNP_LC_SLOW 0 /* ask fnp_lc_enter_slow, with every register saved */
#define FNP_LC_PASS 1 /* let the call through, unrecorded */
/* The XSAVE components fnp_lc_call_saving keeps: x87, SSE, AVX, MPX's bounds and AVX-512
 * (glibc's own choice for lazy binding, plus x87 for a long double's return). */
#define FNP_LC_XSAVE_MASK 0xef
/* a stub: movabs $entry, %r11 (10 bytes); jmp rel32 (5); int3 */
#define FNP_LC_STUB_SIZE 16

#ifndef __ASSEMBLER__

#include <stdint.h>
#include <sys/syscall.h>

#include "runtime.h"

/* One hooked slot's function. Written before its stub is put in the slot, immutable after. */
struct fnp_lc_entry {
    void *real;          /* what the call reaches */
    uintptr_t key;       /* its tree key: FNP_REGION_TAG | n (region.c) */
    uintptr_t lo, hi;    /* the owning object's addresses: calls from elsewhere pass */
    uintptr_t key_futex; /* syscall: the key of syscall(SYS_futex, ...), else 0 */
};

/* A call in flight through the trampoline. */
struct fnp_lc_rec {
    uintptr_t ra;               /* the caller's return address */
    uintptr_t rbx;              /* the caller's %rbx */
    void *real;                 /* the function called */
    uintptr_t slot;             /* where the return address was: the caller's sp - 8 */
    struct fnp_lc_pool *pool;   /* the pool it came from (a forked child frees into it) */
    uintptr_t key;              /* the frame's key on the shadow stack; 0: none pushed */
    uint32_t live;              /* 0: free (the pool's top passes over it) */
} __attribute__((aligned(64))); /* one cache line each */

/*
 * A thread's records. Taken at the top and freed in place: a call that returns frees its
 * own (the trampoline finds it in %rbx) and the top comes down over free ones, so calls
 * that interleave (coroutines switching stacks inside a callback) never share a record.
 * Records of calls a longjmp or an unwinding left behind are freed by fnp_libcalls_jump
 * and the landing pad; others (setcontext) stay taken, which costs room, never a wrong
 * return. busy: inside an operation on it; a signal handler's calls then pass unrecorded.
 */
struct fnp_lc_pool {
    uint32_t top, cap;
    uint32_t busy;
    uint32_t pad;
    uint64_t dropped; /* calls let through for want of a record */
    struct fnp_lc_rec recs[];
};

#define FNP_LC_POOL_RECS 4096

/*
 * The sp of a library call's frame on the shadow stack, from slot, the address of its
 * return address. The hooks give a function's frame the sp it has when it calls them
 * (after its prologue) less 16, and interpose.c cuts by that measure; a call made from
 * there has its return address at that sp + 8, so the caller's frame has slot - 8. The
 * library call's frame must lie strictly below it and above any callback's (at most
 * slot - 24): slot - 16.
 */
#define FNP_LC_FRAME_SP(slot) ((uintptr_t)(slot)-16)

/* plt_spec.c: what PROF_LIBCALLS asks for. 0, or -EINVAL with err set (one line), or
 * -ENOMEM. *out is kept for the life of the process. */
struct fnp_lc_spec;
int fnp_lc_spec_parse(const char *text, struct fnp_lc_spec **out, char *err, size_t errlen);
int fnp_lc_spec_wants(const struct fnp_lc_spec *s, const char *lib, const char *name,
                      const char *mangled, int plumbing);

/* plt_fast.c, compiled without vector registers: the trampoline's common case. */
uintptr_t fnp_lc_enter(const struct fnp_lc_entry *e, uintptr_t *slot, const uintptr_t *args);
int fnp_lc_exit(struct fnp_lc_rec *r);
/* Takes a record of p (NULL: none free), or frees one; the caller tested p->busy. busy is
 * set meanwhile: a signal handler's calls would otherwise take the record being taken, or
 * see it free. */
static inline FNP_NOINSTR struct fnp_lc_rec *fnp_lc_take(struct fnp_lc_pool *p)
{
    uint32_t i = p->top;
    if (FNP_UNLIKELY(i == p->cap))
        return NULL;
    p->busy = 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    struct fnp_lc_rec *r = &p->recs[i];
    r->live = 1;
    p->top = i + 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    p->busy = 0;
    return r;
}

/* Brings p's top down over the free records below it; the caller set busy. */
static inline FNP_NOINSTR void fnp_lc_settle(struct fnp_lc_pool *p)
{
    uint32_t top = p->top;
    while (top > 0 && !p->recs[top - 1].live)
        top--;
    p->top = top;
}

static inline FNP_NOINSTR void fnp_lc_free(struct fnp_lc_pool *p, struct fnp_lc_rec *r)
{
    p->busy = 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    r->live = 0;
    fnp_lc_settle(p);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    p->busy = 0;
}

/* The key a call of e records: syscall(SYS_futex, ...) apart from syscall's others. */
static inline FNP_NOINSTR uintptr_t fnp_lc_key(const struct fnp_lc_entry *e, const uintptr_t *args)
{
    return FNP_UNLIKELY(e->key_futex) && args[0] == SYS_futex ? e->key_futex : e->key;
}

/* Fills r, taken from p, for the call of e whose return address is at slot. */
static inline FNP_NOINSTR void fnp_lc_fill(struct fnp_lc_rec *r, struct fnp_lc_pool *p,
                                           const struct fnp_lc_entry *e, uintptr_t *slot,
                                           uintptr_t key)
{
    r->ra = *slot;
    r->real = e->real;
    r->slot = (uintptr_t)slot;
    r->pool = p;
    r->key = key;
}

/* plt_call.c: the rest of a call's way, with every register saved by the trampoline. */
uintptr_t fnp_lc_enter_slow(const struct fnp_lc_entry *e, uintptr_t *slot, const uintptr_t *args);
void fnp_lc_exit_slow(struct fnp_lc_rec *r);

/* plt_tramp.S */
void fnp_lc_tramp(void);
extern const char fnp_lc_ret[];
/* The size of the area fnp_lc_call_saving saves the vector state in (XSAVE's, rounded to
 * 64; 0: FXSAVE's 512 bytes), set once at init. */
extern uint64_t fnp_lc_xsave_size;

#endif
#endif
