/* PROF_TOGGLE_SIGNAL while threads run. BUSY threads call busy_leaf() without a pause from
 * start to end, through every toggle; COUNTED threads call counted_leaf() CALLS times a
 * round, ROUNDS rounds, each round released by main after it sent itself the toggle signal
 * (argv[1], a number) and saw fnprof's state flip (live_state.h), and waited for by main
 * before the next toggle. So the rounds run while the state holds still, and the calls a
 * profile must hold are known exactly: CALLS * COUNTED for each round run while recording.
 * argv[2]: a file the program writes "recorded_rounds R busy_calls B" to (B: every call
 * of busy_leaf made, the recorded ones fewer). Run with PROF_START unset (recording): the
 * first toggle pauses. Exit 3 when a toggle is not seen within 30 s. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "live_state.h"

#define BUSY 4
#define COUNTED 4
#define ROUNDS 300
#define CALLS 500

static int round_go;            /* rounds released by main */
static int round_done[COUNTED]; /* rounds finished, by each counted thread */
static int stop;
static unsigned long busy_calls[BUSY];
static unsigned long sink;

__attribute__((noinline)) int busy_leaf(int x)
{
    return x * 7 + 3;
}

__attribute__((noinline)) int counted_leaf(int x)
{
    return x ^ 0x55;
}

void *busy(void *arg)
{
    long k = (long)arg;
    unsigned long n = 0, s = 0;
    while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
        s += (unsigned long)busy_leaf((int)n);
        n++;
    }
    busy_calls[k] = n;
    __atomic_add_fetch(&sink, s, __ATOMIC_RELAXED);
    return NULL;
}

void *counted(void *arg)
{
    long k = (long)arg;
    unsigned long s = 0;
    for (int r = 0; r < ROUNDS; r++) {
        while (__atomic_load_n(&round_go, __ATOMIC_ACQUIRE) <= r)
            live_nap();
        for (int i = 0; i < CALLS; i++)
            s += (unsigned long)counted_leaf(i);
        __atomic_store_n(&round_done[k], r + 1, __ATOMIC_RELEASE);
    }
    __atomic_add_fetch(&sink, s, __ATOMIC_RELAXED);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    int sig = atoi(argv[1]);
    pthread_t b[BUSY], c[COUNTED];
    for (long i = 0; i < BUSY; i++)
        pthread_create(&b[i], NULL, busy, (void *)i);
    for (long i = 0; i < COUNTED; i++)
        pthread_create(&c[i], NULL, counted, (void *)i);
    int recorded = 0;
    for (int r = 0; r < ROUNDS; r++) {
        char state = live_toggle(sig);
        if (state != 'R' && state != 'P') {
            printf("round %d: the toggle was not seen\n", r);
            return 3;
        }
        recorded += state == 'R';
        __atomic_store_n(&round_go, r + 1, __ATOMIC_RELEASE);
        for (int k = 0; k < COUNTED; k++)
            while (__atomic_load_n(&round_done[k], __ATOMIC_ACQUIRE) <= r)
                live_nap();
    }
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    unsigned long total = 0;
    for (int i = 0; i < BUSY; i++) {
        pthread_join(b[i], NULL);
        total += busy_calls[i];
    }
    for (int i = 0; i < COUNTED; i++)
        pthread_join(c[i], NULL);
    FILE *f = fopen(argv[2], "w");
    if (!f)
        return 4;
    fprintf(f, "recorded_rounds %d busy_calls %lu\n", recorded, total);
    fclose(f);
    printf("rounds %d threads %d\n", ROUNDS, BUSY + COUNTED);
    return 0;
}
/* SPDX-License-Identifier: MIT */
