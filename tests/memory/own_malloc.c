/* A program with its own allocator, as one that links jemalloc or mimalloc statically has:
 * malloc, free, calloc and realloc defined here (a bump allocator), so that neither libc's
 * nor fnprof's wrappers see its allocations. PROF_MEMORY must say so. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

static _Alignas(16) char heap[1 << 20];
static size_t used;

void *malloc(size_t n)
{
    size_t start = (used + 15) & ~(size_t)15;
    if (n > sizeof(heap) - start)
        return NULL;
    used = start + n;
    return heap + start;
}

void free(void *p)
{
    (void)p;
}

void *calloc(size_t k, size_t n)
{
    if (n && k > (size_t)-1 / n)
        return NULL;
    void *p = malloc(k * n);
    if (p)
        memset(p, 0, k * n);
    return p;
}

void *realloc(void *p, size_t n)
{
    void *q = malloc(n);
    if (q && p)
        memcpy(q, p, n); /* the bump heap is contiguous: reading past the old block is safe */
    return q;
}

static char *make(size_t n)
{
    char *p = malloc(n);
    if (p)
        memset(p, 'x', n);
    return p;
}

int main(void)
{
    char *a = make(100), *b = make(200);
    int ok = a && b && a[99] == 'x' && b[199] == 'x';
    free(a);
    free(b);
    puts(ok ? "ok" : "bad");
    return 0;
}
/* SPDX-License-Identifier: MIT */
