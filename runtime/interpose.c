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

void fnp_interpose_init(void)
{
    real_longjmp = (jump_fn)dlsym(RTLD_NEXT, "longjmp");
    real__longjmp = (jump_fn)dlsym(RTLD_NEXT, "_longjmp");
    real_siglongjmp = (jump_fn)dlsym(RTLD_NEXT, "siglongjmp");
    real_longjmp_chk = (jump_fn)dlsym(RTLD_NEXT, "__longjmp_chk");
}

static FNP_NOINSTR void cut_stack(uintptr_t sp)
{
    struct fnp_thread *t = fnp_tls;
    if (t && __atomic_load_n(&fnp_recording, __ATOMIC_RELAXED))
        fnp_cct_unwind(t, sp, fnp_clock_now());
}

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
    if (sp > here && sp - here < ((uintptr_t)1 << 30))
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

FNP_WRAP void *__cxa_begin_catch(void *exception)
{
    cut_stack((uintptr_t)__builtin_frame_address(0));
    /* libstdc++ is loaded after libfnprof, often: look it up on first use. */
    catch_fn real = __atomic_load_n(&real_begin_catch, __ATOMIC_RELAXED);
    if (!real) {
        real = (catch_fn)dlsym(RTLD_NEXT, "__cxa_begin_catch");
        __atomic_store_n(&real_begin_catch, real, __ATOMIC_RELAXED);
    }
    return real(exception);
}
