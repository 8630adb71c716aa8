/* Patch and unpatch storms: 8 threads call hot() (which calls leaf()) while the main thread
 * pauses and resumes recording thousands of times. Run with PROF_START=paused.
 *
 * The main thread moves a generation counter around each toggle: 4k+1 once fnprof_resume()
 * returned (every site patched), 4k+2 just before fnprof_pause(), 4k+3 once it returned,
 * 4k+4 just before the next fnprof_resume(). A worker reads it before and after each call:
 * the same value both times, 4k+1, means the call ran while recording, whole (it must be in
 * the profile); 4k+3, while paused, whole (it must not be). Each thread counts its calls of
 * each kind; the totals are printed at the end:
 *   calls=<all> on=<recorded for sure> off=<not recorded for sure> */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fnprof.h"

#define THREADS 8

static unsigned long gen;
static int stop;
static unsigned long totals[3]; /* all, on, off */
static volatile unsigned long sink;

__attribute__((noinline)) void leaf(unsigned long x)
{
    sink += x;
    __asm__ volatile("");
}

__attribute__((noinline)) void hot(unsigned long x)
{
    leaf(x);
    sink ^= x;
    __asm__ volatile("");
}

__attribute__((noinline)) void *worker(void *arg)
{
    unsigned long all = 0, on = 0, off = 0;
    (void)arg;
    while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
        unsigned long g1 = __atomic_load_n(&gen, __ATOMIC_ACQUIRE);
        hot(all);
        unsigned long g2 = __atomic_load_n(&gen, __ATOMIC_ACQUIRE);
        all++;
        if (g1 == g2 && g1 % 4 == 1)
            on++;
        else if (g1 == g2 && g1 % 4 == 3)
            off++;
    }
    __atomic_add_fetch(&totals[0], all, __ATOMIC_RELAXED);
    __atomic_add_fetch(&totals[1], on, __ATOMIC_RELAXED);
    __atomic_add_fetch(&totals[2], off, __ATOMIC_RELAXED);
    return NULL;
}

__attribute__((noinline)) static void spin(int us)
{
    usleep((useconds_t)us);
}

int main(int argc, char **argv)
{
    int toggles = argc > 1 ? atoi(argv[1]) : 2000;
    pthread_t t[THREADS];
    __atomic_store_n(&gen, 3, __ATOMIC_RELEASE); /* paused (PROF_START=paused) */
    for (int i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < toggles; i++) {
        __atomic_add_fetch(&gen, 1, __ATOMIC_ACQ_REL); /* 4k+4 */
        fnprof_resume();
        __atomic_add_fetch(&gen, 1, __ATOMIC_ACQ_REL); /* 4k+1 */
        spin(100 + i % 7 * 20);
        __atomic_add_fetch(&gen, 1, __ATOMIC_ACQ_REL); /* 4k+2 */
        fnprof_pause();
        __atomic_add_fetch(&gen, 1, __ATOMIC_ACQ_REL); /* 4k+3 */
        spin(50 + i % 5 * 20);
    }
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    printf("calls=%lu on=%lu off=%lu\n", totals[0], totals[1], totals[2]);
    return 0;
}
/* SPDX-License-Identifier: MIT */
