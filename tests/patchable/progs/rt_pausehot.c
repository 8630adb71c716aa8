/* A pause from another thread while the main thread is deep in hot recursion: rec() calls
 * itself twice per level. The main thread runs ROUNDS rounds of rec(DEPTH); in round
 * PAUSE_AT, at the first leaf (DEPTH + 1 calls open), it asks the pauser thread to pause
 * and waits until fnprof_pause() returned; then it finishes that round and runs the others
 * paused. rec's exits stay patched through the pause (its calls were open), and every call
 * entered since is not recorded: the profile holds exactly the calls entered before the
 * pause, which the program counts and prints:
 *   before=<rec calls entered before the pause> rounds=<rounds started before it> */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "fnprof.h"

#define DEPTH 10
#define PAUSE_AT 3

static int ask, done; /* main -> pauser: pause now; pauser -> main: paused */
static int round_no, armed;
static unsigned long entered, before;
static volatile unsigned long sink;

__attribute__((noinline)) void rec(int n)
{
    entered++;
    if (n == 0) {
        if (armed) {
            armed = 0;
            before = entered;
            __atomic_store_n(&ask, 1, __ATOMIC_RELEASE);
            while (!__atomic_load_n(&done, __ATOMIC_ACQUIRE))
                ;
        }
        sink++;
        return;
    }
    rec(n - 1);
    rec(n - 1);
    sink += (unsigned long)n; /* after both calls: neither is a tail call */
}

__attribute__((noinline)) void *pauser(void *arg)
{
    (void)arg;
    while (!__atomic_load_n(&ask, __ATOMIC_ACQUIRE))
        ;
    fnprof_pause();
    __atomic_store_n(&done, 1, __ATOMIC_RELEASE);
    return NULL;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 8;
    pthread_t t;
    if (rounds <= PAUSE_AT || pthread_create(&t, NULL, pauser, NULL))
        return 2;
    for (round_no = 0; round_no < rounds; round_no++) {
        armed = round_no == PAUSE_AT;
        rec(DEPTH);
    }
    pthread_join(t, NULL);
    printf("before=%lu rounds=%d\n", before, PAUSE_AT + 1);
    return 0;
}
/* SPDX-License-Identifier: MIT */
