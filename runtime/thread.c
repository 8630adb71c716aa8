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

static pthread_key_t exit_key;
static int exit_key_ok;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

/* A thread that ends inside instrumented code (pthread_exit from deep down) leaves frames
 * open: they end when the thread does, not when the process does. */
static FNP_NOINSTR void thread_ended(void *arg)
{
    struct fnp_thread *t = arg;
    uint64_t now = fnp_clock_now();
    for (uint32_t d = t->depth; d > 0; d--) {
        struct fnp_node *n = t->frames[d - 1].node;
        __atomic_store_n(&n->ticks, n->ticks + (now - t->frames[d - 1].t0), __ATOMIC_RELAXED);
    }
    __atomic_store_n(&t->depth, 0, __ATOMIC_RELEASE);
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
    struct fnp_thread *t = fnp_pages(sizeof(*t));
    struct fnp_frame *frames = fnp_pages(FIRST_FRAMES * sizeof(*frames));
    if (!t || !frames) {
        errno = saved;
        return NULL;
    }
    t->frames = frames;
    t->cap = FIRST_FRAMES;
    t->tid = (int)syscall(SYS_gettid);
    /* The main thread's state is made before main() and is never destroyed by a key. */
    pthread_once(&exit_key_once, make_exit_key);
    if (exit_key_ok)
        pthread_setspecific(exit_key, t);

    struct fnp_thread *head = __atomic_load_n(&thread_list, __ATOMIC_RELAXED);
    do {
        t->next = head;
    } while (!__atomic_compare_exchange_n(&thread_list, &head, t, 1, __ATOMIC_RELEASE,
                                          __ATOMIC_RELAXED));
    fnp_tls = t;
    errno = saved;
    return t;
}

FNP_NOINSTR struct fnp_thread *fnp_thread_list(void)
{
    return __atomic_load_n(&thread_list, __ATOMIC_ACQUIRE);
}
