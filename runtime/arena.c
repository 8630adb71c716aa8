/* SPDX-License-Identifier: MIT */
/*
 * Memory for the collector: anonymous mappings only. malloc could be the very function the
 * host is profiling (or be called re-entrantly from a hook inside it), and a thread's nodes
 * must outlive the thread for the exit dump, so nothing here is ever freed.
 */
#include <errno.h>
#include <sys/mman.h>

#include "runtime.h"

#define FIRST_CHUNK (64 * 1024)
#define MAX_CHUNK (4 * 1024 * 1024)

FNP_NOINSTR void *fnp_pages(size_t size)
{
    int saved = errno; /* the host may be between a failing call and its errno check */
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    errno = saved;
    return p == MAP_FAILED ? NULL : p;
}

FNP_NOINSTR void *fnp_arena_alloc(struct fnp_arena *a, size_t size)
{
    size = (size + 15) & ~(size_t)15;
    if ((size_t)(a->end - a->cur) < size) {
        /* Chunks double so that a thread with a big tree maps few times, and a thread
         * with a tiny one costs one small mapping. */
        size_t chunk = a->mapped ? a->mapped : FIRST_CHUNK;
        if (chunk > MAX_CHUNK)
            chunk = MAX_CHUNK;
        if (chunk < size)
            chunk = size;
        char *p = fnp_pages(chunk);
        if (!p)
            return NULL;
        a->cur = p;
        a->end = p + chunk;
        a->mapped += chunk;
    }
    void *r = a->cur;
    a->cur += size;
    return r;
}
