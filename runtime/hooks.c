/*
 * The two entry points -finstrument-functions calls around every instrumented function.
 * Exported with default visibility: they must interpose glibc's no-op pair, whether
 * libfnprof.so is linked or LD_PRELOADed, and libfnprof.a must win at static link time.
 *
 * Steady path: the recording flag (inert test, one predictable branch when PROF_OUTPUT is
 * unset), the thread's state from initial-exec TLS, one clock read, and the inline tree
 * step from runtime.h.
 */
#include "runtime.h"

#define FNP_HOOK __attribute__((visibility("default"), no_instrument_function))

FNP_HOOK void __cyg_profile_func_enter(void *fn, void *call_site)
{
    (void)call_site; /* the physical caller, wrong for inlined callees: the stack knows */
    uint64_t rec = __atomic_load_n(&fnp_recording, __ATOMIC_RELAXED);
    if (FNP_UNLIKELY(!rec))
        return;
    struct fnp_thread *t = fnp_tls;
    if (FNP_UNLIKELY(!t) && !(t = fnp_thread_attach()))
        return;
    fnp_cct_enter(t, fnp_key((uintptr_t)fn, rec), fnp_clock_now(),
                  (uintptr_t)__builtin_frame_address(0));
}

FNP_HOOK void __cyg_profile_func_exit(void *fn, void *call_site)
{
    (void)call_site;
    if (FNP_UNLIKELY(!__atomic_load_n(&fnp_recording, __ATOMIC_RELAXED)))
        return;
    struct fnp_thread *t = fnp_tls;
    if (FNP_UNLIKELY(!t))
        return;
    fnp_cct_exit(t, (uintptr_t)fn, fnp_clock_now());
}
