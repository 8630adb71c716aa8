/* SPDX-License-Identifier: MIT */
/*
 * The benchmark's reference hooks: the least a profiler built on -finstrument-functions can
 * do, so that fnprof's own cost can be read as a ratio to it.
 *
 *   limit.so         rdtsc + push (fn, t0) on enter; rdtsc + pop and add the elapsed ticks
 *                    to a per-thread total on exit (so the second read is not dead code).
 *   limit-notime.so  (-DLIMIT_NOTIME) the same stack without a clock: push fn and count the
 *                    call on enter, pop on exit. The limit of any exact call counter.
 *
 * The thread's state is one initial-exec TLS pointer to an mmap'd block, as in fnprof, and
 * the first call on a thread takes a noinline cold path. Frames past the capacity are not
 * pushed (a bound check, as any real hook needs).
 *
 * BENCH_COUNT=<path>: at exit, the call pairs entered on every thread are written there
 * (limit-notime only: this is how bench/run counts each workload's calls). Read once at
 * load, so the hooks never look at the environment.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#define HOOK __attribute__((visibility("default"), no_instrument_function))
#define LOCAL __attribute__((no_instrument_function))
#define COLD __attribute__((noinline, cold, no_instrument_function))
#define CAP (1u << 20) /* frames per thread: deep recursion is 1e5 */

struct frame {
    uintptr_t fn;
#ifndef LIMIT_NOTIME
    uint64_t t0;
#endif
};

struct lthread {
    uint32_t depth;
    uint32_t cap;
    struct frame *frames;
    uint64_t total; /* ticks of returned calls, or calls entered (notime) */
    struct lthread *next;
};

static __thread struct lthread *tls __attribute__((tls_model("initial-exec")));
static struct lthread *all; /* every thread's block, pushed with a CAS, never freed */
static const char *count_path;

static inline LOCAL uint64_t now(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return (uint64_t)hi << 32 | lo;
}

static COLD struct lthread *attach(void)
{
    struct lthread *t = mmap(NULL, sizeof(*t) + CAP * sizeof(struct frame), PROT_READ | PROT_WRITE,
                             MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (t == MAP_FAILED)
        abort();
    t->frames = (struct frame *)(t + 1);
    t->cap = CAP;
    t->next = __atomic_load_n(&all, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(&all, &t->next, t, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
        ;
    tls = t;
    return t;
}

HOOK void __cyg_profile_func_enter(void *fn, void *site)
{
    struct lthread *t = tls;
    if (__builtin_expect(!t, 0))
        t = attach();
    uint32_t d = t->depth;
    if (__builtin_expect(d >= t->cap, 0))
        return;
    t->frames[d].fn = (uintptr_t)fn;
#ifdef LIMIT_NOTIME
    t->total++;
#else
    t->frames[d].t0 = now();
#endif
    t->depth = d + 1;
}

HOOK void __cyg_profile_func_exit(void *fn, void *site)
{
    struct lthread *t = tls;
    if (__builtin_expect(!t || !t->depth, 0))
        return;
    uint32_t d = t->depth - 1;
#ifndef LIMIT_NOTIME
    t->total += now() - t->frames[d].t0;
#endif
    t->depth = d;
}

__attribute__((constructor)) static LOCAL void load(void)
{
    count_path = getenv("BENCH_COUNT");
    if (count_path && !*count_path)
        count_path = NULL; /* bench/run sets every variable, empty when unused */
}

__attribute__((destructor)) static LOCAL void unload(void)
{
    if (!count_path)
        return;
    uint64_t sum = 0;
    for (struct lthread *t = __atomic_load_n(&all, __ATOMIC_ACQUIRE); t; t = t->next)
        sum += t->total;
    FILE *f = fopen(count_path, "w");
    if (f) {
        fprintf(f, "%llu\n", (unsigned long long)sum);
        fclose(f);
    }
}
