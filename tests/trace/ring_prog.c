/* A program for the flight recorder's tests (run_ring.py): a known sequence of calls, so
 * that the last ones are known, then an ending the test picks. Built -finstrument-functions.
 *   ring_prog CALLS THREADS MODE TRACE [HWM_FILE]
 * Main, inside run(), makes CALLS calls w<i % 7>(i), each calling leaf(); meanwhile THREADS
 * - 1 threads "worker" (64 in all at most) each make CALLS calls a<i % 5>(i), each calling
 * leafa(), and main joins them before its ending. MODE: exit; segv; abort; signal
 * (PROF_DUMP_SIGNAL=USR2 sent to itself from dump_signal(), which waits for TRACE and moves it to
 * TRACE.dump); api (fnprof_dump() from dump_api(), TRACE moved the same way). After signal and api,
 * 100 calls after(), then exit. Writes VmHWM to HWM_FILE at the end. Prints nothing. Adds
 * metadata under the flight recording's own keys first (own_metadata). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NOI __attribute__((no_instrument_function))

static volatile long sink;
static long calls;
static const char *trace;

__attribute__((noinline)) static void leaf(long i)
{
    sink += i;
}
__attribute__((noinline)) static void leafa(long i)
{
    sink -= i;
}
#define W(k)                                                                                       \
    __attribute__((noinline)) static void w##k(long i)                                             \
    {                                                                                              \
        leaf(i);                                                                                   \
    }
/* clang-format off: it joins and splits these lines differently at each pass */
W(0)
W(1)
W(2)
W(3)
W(4)
W(5)
W(6)
#define A(k)                                                                                       \
    __attribute__((noinline)) static void a##k(long i)                                             \
    {                                                                                              \
        leafa(i);                                                                                  \
    }
A(0)
A(1)
A(2)
A(3)
A(4)
/* clang-format on */

static void (*const ws[7])(long) = {w0, w1, w2, w3, w4, w5, w6};
static void (*const as[5])(long) = {a0, a1, a2, a3, a4};

__attribute__((noinline)) static void after(long i)
{
    sink += i;
}

static pthread_barrier_t start; /* the workers start their calls together */

static void *worker(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&start);
    for (long i = 0; i < calls; i++)
        as[i % 5](i);
    return NULL;
}

/* Waits for the dump to write TRACE, then moves it aside (not recorded: no calls). */
NOI static void take_dump(void)
{
    char dst[4096];
    snprintf(dst, sizeof(dst), "%s.dump", trace);
    struct stat st;
    for (int i = 0; i < 3000 && stat(trace, &st) != 0; i++) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    if (rename(trace, dst) != 0)
        _exit(3);
}

__attribute__((noinline)) static void dump_signal(void)
{
    kill(getpid(), SIGUSR2);
    take_dump();
}

__attribute__((noinline)) static void dump_api(void)
{
    int (*dump)(const char *) = (int (*)(const char *))dlsym(RTLD_DEFAULT, "fnprof_dump");
    if (!dump || dump(NULL) != 0)
        _exit(4);
    take_dump();
}

__attribute__((noinline)) static void die(const char *mode)
{
    if (strcmp(mode, "segv") == 0)
        *(volatile int *)(uintptr_t)(sink & 0) = 1;
    abort();
}

NOI static void hwm(const char *path)
{
    if (!path)
        return;
    FILE *f = fopen("/proc/self/status", "r"), *o = fopen(path, "w");
    char line[256];
    while (f && o && fgets(line, sizeof(line), f))
        if (strncmp(line, "VmHWM:", 6) == 0)
            fputs(line + 6, o);
    if (f)
        fclose(f);
    if (o)
        fclose(o);
}

__attribute__((noinline)) static void run(const char *mode, int threads)
{
    pthread_t t[64];
    threads = threads < 1 ? 1 : threads > 64 ? 64 : threads;
    if (threads > 1)
        pthread_barrier_init(&start, NULL, (unsigned)threads - 1);
    for (int k = 0; k < threads - 1; k++) {
        pthread_create(&t[k], NULL, worker, NULL);
        pthread_setname_np(t[k], "worker");
    }
    for (long i = 0; i < calls; i++)
        ws[i % 7](i);
    for (int k = 0; k < threads - 1; k++)
        pthread_join(t[k], NULL);
    if (strcmp(mode, "segv") == 0 || strcmp(mode, "abort") == 0)
        die(mode);
    if (strcmp(mode, "signal") == 0)
        dump_signal();
    else if (strcmp(mode, "api") == 0)
        dump_api();
    else
        return;
    for (long i = 0; i < 100; i++)
        after(i);
}

/* Pairs of the program's own under the keys the flight recording writes itself: the file
 * must hold each key once, with the recording's value. */
NOI static void own_metadata(void)
{
    int (*add)(const char *, const char *) =
        (int (*)(const char *, const char *))dlsym(RTLD_DEFAULT, "fnprof_add_metadata");
    if (add && (add("fnprof_flight_calls", "-1") || add("fnprof_trace_last", "-1") ||
                add("fnprof_flight_recording", "no") || add("fnprof_flight_overwritten", "-1")))
        _exit(5);
}

int main(int argc, char **argv)
{
    if (argc < 5)
        return 2;
    own_metadata();
    calls = atol(argv[1]);
    trace = argv[4];
    run(argv[3], atoi(argv[2]));
    hwm(argc > 5 ? argv[5] : NULL);
    return 0;
}
/* SPDX-License-Identifier: MIT */
