/* Signal handlers running patched code, on the thread's stack and on a sigaltstack, while
 * the interrupted thread is deep in patched recursion: an exit in a handler must pop its own
 * frame only; an altstack's addresses say nothing of the thread stack's frames.
 *
 * Recording: down(d) recurses to depth DEPTH and raises SIGUSR1 at the bottom, whose handler
 * runs inner(k), itself recursive, on the thread's stack in even rounds, on the altstack in
 * odd ones. Expected: down DEPTH * ROUNDS calls, ROUNDS primitive; handler ROUNDS, from down;
 * inner (KDEPTH + 1) * ROUNDS calls, ROUNDS primitive.
 *
 * Paused: a thread whose stack is the program's own memory (.bss: low addresses) and whose
 * altstack is mapped (above it) runs low(DEPTH), which at the bottom pauses recording and raises
 * SIGUSR2. Its handler, on the altstack, calls low() again: entered while paused, not recorded, but
 * its exits stay patched (low has open calls), so they come with altstack stack pointers and no
 * frame of theirs. They must be ignored: popping frames "below" them would close low's
 * frames on the thread's stack. Then recording resumes and the bottom low() calls after():
 * expected ROUNDS calls, every one from low. Prints "altstack above" when the layout is
 * that one. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "fnprof.h"
#include "rt_common.h"

#define DEPTH 20
#define KDEPTH 6
#define STACK (1 << 18)
#define ALTSTACK (1 << 16)

static volatile long sink;
static int rounds;
static __thread int in_handler;

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

NOINLINE int after(int x)
{
    int r = x + 1;
    KEEP(r);
    return r;
}

NOINLINE int low(int d);

NOINLINE void paused_handler(int sig)
{
    (void)sig;
    in_handler = 1;
    int r = low(3);
    KEEP(r);
    sink += r;
    in_handler = 0;
}

NOINLINE int low(int d)
{
    int r;
    if (d == 1) {
        if (in_handler) {
            r = 1;
        } else {
            fnprof_pause();
            raise(SIGUSR2);
            fnprof_resume();
            r = after(1);
        }
    } else {
        r = low(d - 1) + 1;
    }
    KEEP(r);
    return r;
}

NOINLINE void *low_thread(void *arg)
{
    char *alt = mmap(NULL, ALTSTACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    stack_t ss = {.ss_sp = alt, .ss_size = ALTSTACK};
    sigaltstack(&ss, NULL);
    if ((char *)arg < alt)
        printf("altstack above\n");
    for (int i = 0; i < rounds; i++)
        sink += low(DEPTH);
    return NULL;
}

int main(int argc, char **argv)
{
    rounds = argc > 1 ? atoi(argv[1]) : 50;
    static char altstack[ALTSTACK];
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
    sa.sa_handler = paused_handler;
    sa.sa_flags = SA_ONSTACK;
    sigaction(SIGUSR2, &sa, NULL);
    static char stack[STACK] __attribute__((aligned(4096)));
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstack(&attr, stack, STACK);
    pthread_t t;
    pthread_create(&t, &attr, low_thread, stack);
    pthread_join(t, NULL);
    printf("%ld\n", (long)sink);
    return 0;
}
/* SPDX-License-Identifier: MIT */
