/* A patchable library loaded by dlopen after start, called, unloaded; recording paused and
 * resumed many times after the unload (a write into the unloaded library's memory would
 * crash); loaded again (maybe elsewhere), called, unloaded. The second load happens while
 * paused, and recording resumes before the calls. Expected (run_runtime.py: dlopen):
 * plugin_entry FIRST + SECOND calls from call_plugin, plugin_inner twice as many.
 *
 * With "storm" after the path: a thread loads, calls and unloads the library LOADS times
 * while the main thread pauses and resumes without a break, so that objects come and go
 * while sites are written; prints "calls=<plugin_entry calls made>". */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fnprof.h"
#include "rt_common.h"

#define FIRST 30
#define SECOND 20
#define LOADS 2000

static volatile long sink;

NOINLINE int call_plugin(int (*f)(int), int x)
{
    int r = f(x);
    KEEP(r);
    return r;
}

NOINLINE int round_trip(const char *path, int calls, int paused)
{
    if (paused)
        fnprof_pause();
    void *h = dlopen(path, RTLD_NOW);
    if (!h) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 1;
    }
    int (*f)(int) = (int (*)(int))dlsym(h, "plugin_entry");
    if (paused)
        fnprof_resume();
    for (int i = 0; i < calls; i++)
        sink += call_plugin(f, i);
    return dlclose(h);
}

static int stop;

NOINLINE void *loader(void *path)
{
    long calls = 0;
    for (int i = 0; i < LOADS; i++) {
        void *h = dlopen(path, RTLD_NOW);
        int (*f)(int) = h ? (int (*)(int))dlsym(h, "plugin_entry") : NULL;
        for (int j = 0; f && j < 1; j++, calls++)
            sink += call_plugin(f, j);
        if (h)
            dlclose(h);
    }
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    return (void *)calls;
}

NOINLINE int storm(const char *path)
{
    pthread_t t;
    void *calls;
    pthread_create(&t, NULL, loader, (void *)path);
    while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
        fnprof_pause();
        fnprof_resume();
    }
    pthread_join(t, &calls);
    printf("calls=%ld\n", (long)calls);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    if (argc > 2 && strcmp(argv[2], "storm") == 0)
        return storm(argv[1]);
    int rc = round_trip(argv[1], FIRST, 0);
    for (int i = 0; i < 200; i++) {
        fnprof_pause();
        fnprof_resume();
    }
    rc |= round_trip(argv[1], SECOND, 1);
    printf("%ld\n", (long)sink);
    return rc;
}
/* SPDX-License-Identifier: MIT */
