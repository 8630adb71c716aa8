/* Signal handlers running patched code, on the thread's stack and on a sigaltstack, while
 * the interrupted thread is deep in patched recursion: an exit in the handler must pop the
 * handler's own frame only (an altstack's addresses say nothing of the main stack's frames).
 * down(d) recurses to depth DEPTH and raises the signal at the bottom; the handler runs
 * inner(k), itself recursive. Expected: down DEPTH * ROUNDS calls, ROUNDS primitive; inner
 * (KDEPTH + 1) * ROUNDS calls, ROUNDS primitive, its outermost calls made from down. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __clang__
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE __attribute__((noinline, noclone))
#endif
#define KEEP(x) __asm__ volatile("" : "+r"(x))

#define DEPTH 20
#define KDEPTH 6

static volatile long sink;

NOINLINE int inner(int k)
{
    int r = k == 0 ? 1 : inner(k - 1) + 1;
    KEEP(r);
    return r;
}

NOINLINE void handler(int sig)
{
    (void)sig;
    int r = inner(KDEPTH);
    KEEP(r);
    sink += r;
}

NOINLINE int down(int d)
{
    int r;
    if (d == 1) {
        raise(SIGUSR1);
        r = 1;
    } else {
        r = down(d - 1) + 1;
    }
    KEEP(r);
    return r;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 50;
    static char altstack[1 << 16];
    stack_t ss = {.ss_sp = altstack, .ss_size = sizeof(altstack)};
    sigaltstack(&ss, NULL);
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = handler;
    for (int i = 0; i < rounds; i++) {
        /* every other round on the alternate stack */
        sa.sa_flags = i % 2 ? SA_ONSTACK : 0;
        sigaction(SIGUSR1, &sa, NULL);
        sink += down(DEPTH);
    }
    printf("%ld\n", (long)sink);
    return 0;
}
/* SPDX-License-Identifier: MIT */
