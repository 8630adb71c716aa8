/* a() -> b() -> c(), and c leaves by a jump back to a's setjmp; then a calls d() and
 * returns. argv[1]: "longjmp" (c calls longjmp; __longjmp_chk under _FORTIFY_SOURCE) or
 * "siglongjmp" (c raises SIGUSR1, whose handler siglongjmps to a sigsetjmp in a).
 * Expected (run_robust.py, case "longjmp"): b, c, d and the handler K calls each; a->b,
 * b->c, a->d (never c->d or on_usr1->d), c->on_usr1; no unmatched exit reported. */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#define K 50

/* -DFNP_TEST_INLINE: b and c always inlined into a, so their frames share a's stack
 * pointer (gcc -O2 inlines b on its own already). */
#ifdef FNP_TEST_INLINE
#define CALLEE static inline __attribute__((always_inline))
#else
#define CALLEE
#endif

static jmp_buf env;
static sigjmp_buf senv;
static int use_signal;
static volatile long total;

void on_usr1(int sig)
{
    total += sig;
    siglongjmp(senv, 1);
}

CALLEE void c(int i)
{
    total += i;
    if (use_signal)
        raise(SIGUSR1);
    else
        longjmp(env, i + 1);
    total -= 1000000; /* never reached */
}

CALLEE void b(int i)
{
    c(i * 2);
    total -= 1000000; /* never reached */
}

void d(int i)
{
    total += i * 3;
}

void a(int i)
{
    volatile int jumped = 0;
    if (use_signal) {
        if (sigsetjmp(senv, 1) == 0)
            b(i);
        else
            jumped = 1;
    } else {
        if (setjmp(env) == 0)
            b(i);
        else
            jumped = 1;
    }
    d(i + jumped);
}

int main(int argc, char **argv)
{
    use_signal = argc > 1 && strcmp(argv[1], "siglongjmp") == 0;
    if (use_signal) {
        static struct sigaction sa; /* zeroed without memset: clang's fortified memset is
                                       an instrumented inline function */
        sa.sa_handler = on_usr1;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGUSR1, &sa, NULL);
    }
    for (int i = 0; i < K; i++)
        a(i);
    printf("%s: total %ld\n", use_signal ? "siglongjmp" : "longjmp", (long)total);
    return 0;
}
/* SPDX-License-Identifier: MIT */
