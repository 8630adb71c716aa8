/* A program for the streamed trace's tests (run_stream.py): calls nested three deep in
 * every thread, then an ending the test picks. Built with -finstrument-functions.
 *   stream_prog CALLS THREADS MODE [HWM_FILE]
 * MODE: exit, fork (the child makes the same calls), segv, abort, short (THREADS short
 * threads, one after another, CALLS calls each), exec (then execs itself with MODE exit),
 * busy (THREADS threads still calling when main returns, and when MODE is busyexec, when
 * main execs itself), deep (a recursion CALLS deep, with calls that end on the way down
 * and up, so that chunks are handed over with thousands of frames open). Writes VmHWM to
 * HWM_FILE at the end. */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile long sink;

static long leaf(long i)
{
    return i * 3 + 1;
}

static long mid(long i)
{
    return leaf(i) + leaf(i + 1);
}

static void *worker(void *arg)
{
    long n = (long)arg, s = 0;
    for (long i = 0; i < n; i++)
        s += mid(i);
    sink = s;
    return NULL;
}

/* 20 calls end on each level on the way down, 20 on the way up: at 6,000 levels, chunks
 * of 31,744 calls are handed over with 1,500 to 6,000 frames open. */
static long deep(long d)
{
    long s = 0;
    for (int i = 0; i < 20; i++)
        s += leaf(d + i);
    if (d > 0)
        s += deep(d - 1);
    for (int i = 0; i < 20; i++)
        s += leaf(d - i);
    return s;
}

static volatile int stop;
static int started;

static void *spinner(void *arg)
{
    (void)arg;
    sink += mid(0);
    __atomic_add_fetch(&started, 1, __ATOMIC_RELEASE);
    for (long i = 0; !stop; i++)
        sink += mid(i);
    return NULL;
}

static void crash(const char *mode)
{
    if (strcmp(mode, "segv") == 0)
        *(volatile int *)(sink - sink) = 1;
    if (strcmp(mode, "abort") == 0)
        abort();
}

static void hwm(const char *path)
{
    char line[256];
    FILE *f = fopen("/proc/self/status", "r"), *o = path ? fopen(path, "w") : NULL;
    while (f && o && fgets(line, sizeof(line), f))
        if (strncmp(line, "VmHWM:", 6) == 0)
            fputs(line, o);
    if (f)
        fclose(f);
    if (o)
        fclose(o);
}

int main(int argc, char **argv)
{
    long n = atol(argv[1]);
    int threads = atoi(argv[2]);
    const char *mode = argv[3];
    if (strcmp(mode, "short") == 0) {
        for (int i = 0; i < threads; i++) {
            pthread_t t;
            if (pthread_create(&t, NULL, worker, (void *)n) == 0)
                pthread_join(t, NULL);
        }
        hwm(argc > 4 ? argv[4] : NULL);
        return 0;
    }
    if (strcmp(mode, "deep") == 0) {
        sink = deep(n);
        return 0;
    }
    if (strcmp(mode, "busy") == 0 || strcmp(mode, "busyexec") == 0) {
        pthread_t t;
        for (int i = 0; i < threads; i++)
            pthread_create(&t, NULL, spinner, NULL);
        while (__atomic_load_n(&started, __ATOMIC_ACQUIRE) < threads)
            sched_yield();
        worker((void *)n);
        if (strcmp(mode, "busyexec") == 0)
            execl(argv[0], argv[0], argv[1], "0", "exit", (char *)NULL);
        return 0; /* the spinners are still calling */
    }
    pid_t child = strcmp(mode, "fork") == 0 ? fork() : -1;
    pthread_t t[16];
    for (int i = 0; i < threads && i < 16; i++)
        pthread_create(&t[i], NULL, worker, (void *)n);
    worker((void *)n);
    for (int i = 0; i < threads && i < 16; i++)
        pthread_join(t[i], NULL);
    crash(mode);
    if (child > 0)
        waitpid(child, NULL, 0);
    if (strcmp(mode, "exec") == 0)
        execl(argv[0], argv[0], argv[1], argv[2], "exit", (char *)NULL);
    hwm(argc > 4 ? argv[4] : NULL);
    return 0;
}
/* SPDX-License-Identifier: MIT */
