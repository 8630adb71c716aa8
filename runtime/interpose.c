/* SPDX-License-Identifier: MIT */
/*
 * Functions that cut the stack without running exit hooks, interposed so that the shadow
 * stack is cut at the same place: longjmp and its siblings, and the entry to a C++ catch
 * block (clang runs no exit hooks while an exception unwinds; gcc does, and then this
 * finds nothing to do).
 *
 * A frame's sp is the enter hook's frame address, a fixed distance below the caller's
 * stack pointer at the call (x86_64: 16 bytes, return address and saved rbp). A function
 * calling one of these wrappers leaves the same distance, so the wrapper's own frame
 * address is the cut: frames recorded below it belong to functions that are gone.
 */
#include <dlfcn.h>
#include <stdint.h>

#include "runtime.h"

#define FNP_WRAP __attribute__((visibility("default"), no_instrument_function))

typedef void (*jump_fn)(void *env, int val);
typedef void *(*catch_fn)(void *exception);

/* Resolved at load (fnp_interpose_init), never in a wrapper: longjmp may leave a signal
 * handler, where dlsym is not safe. */
static jump_fn real_longjmp, real__longjmp, real_siglongjmp, real_longjmp_chk;
static catch_fn real_begin_catch;
#if defined(__x86_64__) && defined(__GLIBC__)
/* The real setjmp family, for the trampolines below (hidden: reached %rip-relative). */
__attribute__((visibility("hidden"))) void *fnp_real_setjmp, *fnp_real__setjmp, *fnp_real_sigsetjmp;
#endif

void fnp_interpose_init(void)
{
    real_longjmp = (jump_fn)dlsym(RTLD_NEXT, "longjmp");
    real__longjmp = (jump_fn)dlsym(RTLD_NEXT, "_longjmp");
    real_siglongjmp = (jump_fn)dlsym(RTLD_NEXT, "siglongjmp");
    real_longjmp_chk = (jump_fn)dlsym(RTLD_NEXT, "__longjmp_chk");
#if defined(__x86_64__) && defined(__GLIBC__)
    fnp_real_setjmp = dlsym(RTLD_NEXT, "setjmp");
    fnp_real__setjmp = dlsym(RTLD_NEXT, "_setjmp");
    fnp_real_sigsetjmp = dlsym(RTLD_NEXT, "__sigsetjmp");
#endif
}

static FNP_NOINSTR void cut_stack(uintptr_t sp)
{
    struct fnp_thread *t = fnp_tls;
    if (t && __atomic_load_n(&fnp_recording, __ATOMIC_RELAXED))
        fnp_cct_unwind(t, sp, fnp_clock_now());
}

/*
 * setjmp, _setjmp and __sigsetjmp (sigsetjmp's name in glibc) return twice, so no C
 * function may stand between them and their caller. An assembly trampoline calls
 * fnp_note_setjmp with the jmp_buf and the stack pointer setjmp will store, then jumps to
 * the real function with the stack as it found it, the way ThreadSanitizer does.
 */
#if defined(__x86_64__) && defined(__GLIBC__)

__attribute__((visibility("hidden"), used)) FNP_NOINSTR void fnp_note_setjmp(uintptr_t env,
                                                                             uintptr_t sp)
{
    struct fnp_thread *t = fnp_tls;
    if (!t || !__atomic_load_n(&fnp_recording, __ATOMIC_RELAXED))
        return;
    uint32_t i = 0, n = sizeof(t->jmps) / sizeof(t->jmps[0]);
    while (i < n && t->jmps[i].env != env)
        i++;
    if (i == n)
        i = t->jmp_next++ % n;
    t->jmps[i].env = 0; /* a longjmp from a signal handler meanwhile finds no half entry */
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    t->jmps[i].sp = sp;
    t->jmps[i].depth = t->depth;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    t->jmps[i].env = env;
}

/* push the arguments (keeping %rsp 16-aligned at the call), pass the jmp_buf and the
 * caller's stack pointer after return, restore, jump on. */
#define SETJMP_TRAMPOLINE(name, real)                                                              \
    __asm__(".text\n"                                                                              \
            ".globl " #name "\n"                                                                   \
            ".type " #name ",@function\n" #name ":\n"                                              \
            "    push %rdi\n"                                                                      \
            "    push %rsi\n"                                                                      \
            "    sub $8, %rsp\n"                                                                   \
            "    lea 32(%rsp), %rsi\n"                                                             \
            "    call fnp_note_setjmp\n"                                                           \
            "    add $8, %rsp\n"                                                                   \
            "    pop %rsi\n"                                                                       \
            "    pop %rdi\n"                                                                       \
            "    jmp *" #real "(%rip)\n"                                                           \
            ".size " #name ", .-" #name "\n")

SETJMP_TRAMPOLINE(setjmp, fnp_real_setjmp);
SETJMP_TRAMPOLINE(_setjmp, fnp_real__setjmp);
SETJMP_TRAMPOLINE(__sigsetjmp, fnp_real_sigsetjmp);

/* The depth of the setjmp that filled env, if this thread noted it and its stack pointer
 * is still the one env holds; else -1. */
static FNP_NOINSTR int64_t setjmp_depth(struct fnp_thread *t, uintptr_t env, uintptr_t sp)
{
    for (size_t i = 0; i < sizeof(t->jmps) / sizeof(t->jmps[0]); i++)
        if (t->jmps[i].env == env && t->jmps[i].sp == sp && t->jmps[i].depth <= t->depth)
            return t->jmps[i].depth;
    return -1;
}
#endif

/*
 * The stack pointer a jmp_buf will restore. glibc on x86_64 keeps it in slot 6 of
 * __jmpbuf, mangled: rotated left 17 bits after an xor with the pointer guard at
 * %fs:0x30 (ThreadSanitizer reads it the same way). The result must lie above the current
 * stack pointer and within 1 GiB of it; otherwise the layout is not the one assumed and
 * nothing is cut here (the exit of an enclosing function repairs the stack later).
 */
static FNP_NOINSTR void cut_to_jmpbuf(const void *env)
{
#if defined(__x86_64__) && defined(__GLIBC__)
    uintptr_t guard, here = (uintptr_t)__builtin_frame_address(0);
    __asm__("mov %%fs:0x30, %0" : "=r"(guard));
    uintptr_t v = ((const uintptr_t *)env)[6];
    uintptr_t sp = ((v >> 17) | (v << 47)) ^ guard;
    if (!(sp > here && sp - here < ((uintptr_t)1 << 30)))
        return;
    struct fnp_thread *t = fnp_tls;
    fnp_libcalls_jump(here, sp); /* library calls in flight there are left (plt_call.c) */
    int64_t depth = t ? setjmp_depth(t, (uintptr_t)env, sp) : -1;
    if (depth >= 0 && __atomic_load_n(&fnp_recording, __ATOMIC_RELAXED))
        fnp_cct_cut(t, (uint32_t)depth, fnp_clock_now());
    else
        cut_stack(sp - 16);
#else
    (void)env;
#endif
}

#define JUMP_WRAPPER(name, real)                                                                   \
    FNP_WRAP __attribute__((noreturn)) void name(void *env, int val)                               \
    {                                                                                              \
        cut_to_jmpbuf(env);                                                                        \
        if (!real)                                                                                 \
            fnp_interpose_init();                                                                  \
        real(env, val);                                                                            \
        __builtin_unreachable();                                                                   \
    }

JUMP_WRAPPER(longjmp, real_longjmp)
JUMP_WRAPPER(_longjmp, real__longjmp)
JUMP_WRAPPER(siglongjmp, real_siglongjmp)
JUMP_WRAPPER(__longjmp_chk, real_longjmp_chk)

/*
 * A catch: frames below the catching function's are gone. Frames that share its stack
 * pointer are it and the callees inlined into it; those opened inside the try block
 * were left by the throw, and nothing tells them from the catching function but their
 * order, so only the first of them stays open. This is wrong only when the function with
 * the try block was itself inlined into its caller (its frame closes at the catch, and
 * its exit is then reported unmatched); gcc runs exit hooks while unwinding, so there
 * this finds nothing left to do.
 */
static FNP_NOINSTR void cut_at_catch(uintptr_t sp)
{
    struct fnp_thread *t = fnp_tls;
    if (!t || !__atomic_load_n(&fnp_recording, __ATOMIC_RELAXED))
        return;
    uint64_t now = fnp_clock_now();
    fnp_cct_unwind(t, sp, now);
    uint32_t d = t->depth, first = d;
    while (first > 0 && t->frames[first - 1].sp == sp)
        first--;
    if (first < d)
        fnp_cct_cut(t, first + 1, now);
}

FNP_WRAP void *__cxa_begin_catch(void *exception)
{
    cut_at_catch((uintptr_t)__builtin_frame_address(0));
    /* libstdc++ is loaded after libfnprof, often: look it up on first use. */
    catch_fn real = __atomic_load_n(&real_begin_catch, __ATOMIC_RELAXED);
    if (!real) {
        real = (catch_fn)dlsym(RTLD_NEXT, "__cxa_begin_catch");
        __atomic_store_n(&real_begin_catch, real, __ATOMIC_RELAXED);
    }
    return real(exception);
}
