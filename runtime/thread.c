/* SPDX-License-Identifier: MIT */
/*
 * Per-thread state: created on a thread's first recorded call, pushed on a global
 * lock-free list that only ever grows (the exit dump walks it while threads still run),
 * and closed when the thread ends.
 */
#include <errno.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime.h"

#define FIRST_FRAMES 1024

__thread struct fnp_thread *fnp_tls __attribute__((tls_model("initial-exec")));

/* Head of every thread state ever made: pushed with a release CAS on the cold path. */
static struct fnp_thread *thread_list;
/* Threads that recorded calls: bumped once per attach. */
static uint64_t threads_started;

static pthread_key_t exit_key;
static int exit_key_ok;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

/*
 * A thread ends: frames it left open (pthread_exit from deep down) end now, and its state
 * goes back for the next new thread to continue. Its tree stays, so nothing is lost: the
 * next thread's calls merge into it as a thread's trees are merged at dump time anyway.
 * That bounds memory by the threads alive at once, not by the threads ever started.
 * Should the dying thread run instrumented code after this (a later TLS destructor), it
 * attaches again, and glibc calls this destructor once more.
 */
static FNP_NOINSTR void thread_ended(void *arg)
{
    struct fnp_thread *t = arg;
    fnp_cct_unwind(t, UINTPTR_MAX, fnp_clock_now());
    if (fnp_tracing && !fnp_trace_thread_ended(t)) {
        /* Its calls stay on its state, which is then its track in the trace: not reused. */
        fnp_tls = NULL;
        return;
    }
    t->skipped = 0;
    fnp_libcalls_thread_ended(t);
    fnp_tls = NULL;
    __atomic_store_n(&t->in_use, 0, __ATOMIC_RELEASE);
}

/* A released state, taken; NULL if none. A state is taken by one CAS on in_use, so two
 * new threads never share one. */
static FNP_NOINSTR struct fnp_thread *reuse_state(void)
{
    for (struct fnp_thread *t = fnp_thread_list(); t; t = t->next) {
        uint32_t free_ = 0;
        if (__atomic_load_n(&t->in_use, __ATOMIC_RELAXED) == 0 &&
            __atomic_compare_exchange_n(&t->in_use, &free_, 1, 0, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED))
            return t;
    }
    return NULL;
}

static FNP_NOINSTR void make_exit_key(void)
{
    exit_key_ok = pthread_key_create(&exit_key, thread_ended) == 0;
}

FNP_COLD struct fnp_thread *fnp_thread_attach(void)
{
    if (!__atomic_load_n(&fnp_recording, __ATOMIC_RELAXED))
        return NULL;
    int saved = errno;
    /* pthread_setspecific may allocate: not the program's allocation, and the allocator's
     * wrappers must not attach this thread a second time meanwhile (memory.c). */
    fnp_mem_hold();
    pthread_once(&exit_key_once, make_exit_key);
    struct fnp_thread *t = reuse_state();
    if (t) {
        t->tid = (int)syscall(SYS_gettid);
        goto attached;
    }
    t = fnp_pages(sizeof(*t));
    if (!t || fnp_cct_init_stack(t, FIRST_FRAMES)) {
        fnp_mem_release();
        errno = saved;
        return NULL;
    }
    t->tid = (int)syscall(SYS_gettid);
    t->in_use = 1;
    struct fnp_thread *head = __atomic_load_n(&thread_list, __ATOMIC_RELAXED);
    do {
        t->next = head;
    } while (!__atomic_compare_exchange_n(&thread_list, &head, t, 1, __ATOMIC_RELEASE,
                                          __ATOMIC_RELAXED));
attached:
    /* The main thread never runs key destructors: exit() ends it, and the dump reads it. */
    if (exit_key_ok)
        pthread_setspecific(exit_key, t);
    __atomic_add_fetch(&threads_started, 1, __ATOMIC_RELAXED);
    fnp_tls = t;
    fnp_mem_release();
    errno = saved;
    return t;
}

FNP_NOINSTR struct fnp_thread *fnp_thread_list(void)
{
    return __atomic_load_n(&thread_list, __ATOMIC_ACQUIRE);
}

FNP_NOINSTR uint64_t fnp_thread_nodes(void)
{
    uint64_t n = 0;
    for (struct fnp_thread *t = fnp_thread_list(); t; t = t->next)
        n += __atomic_load_n(&t->nodes, __ATOMIC_RELAXED);
    return n;
}

FNP_NOINSTR uint64_t fnp_thread_count(void)
{
    return __atomic_load_n(&threads_started, __ATOMIC_RELAXED);
}

FNP_NOINSTR void fnp_thread_after_fork(uint64_t now)
{
    struct fnp_thread *old = fnp_tls;
    /* The parent's states stay mapped (copy-on-write pages nobody touches) but unlisted. */
    __atomic_store_n(&thread_list, NULL, __ATOMIC_RELEASE);
    __atomic_store_n(&threads_started, 0, __ATOMIC_RELAXED);
    fnp_tls = NULL;
    if (fnp_tracing)
        fnp_trace_after_fork();
    if (!old || old->depth == 0)
        return;
    struct fnp_thread *t = fnp_thread_attach();
    if (!t)
        return;
    for (uint32_t i = 0; i < old->depth; i++) {
        uintptr_t fn = old->frames[i].node->fn;
        if (fnp_key_is_ghost(fn))
            fnp_cct_enter_ghost(t, fn & FNP_ADDR_MASK, old->frames[i].sp);
        else
            fnp_cct_enter(t, fn, now, old->frames[i].sp);
    }
}
