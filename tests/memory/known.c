/* SPDX-License-Identifier: MIT */
/*
 * Allocations of known sizes in known functions, every entry point of the allocator, for
 * run_memory_test.py to check the memory profile exactly. The program also checks what it
 * gets (alignment, errno, NULL, malloc_usable_size) and reports through write(2) only:
 * stdio's buffer would be an allocation of its own.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failures;

static void say(const char *s)
{
    if (write(1, s, strlen(s)) < 0)
        failures++;
}

static void check(int ok, const char *what)
{
    if (!ok) {
        say("FAIL ");
        say(what);
        say("\n");
        failures++;
    }
}

static void *keep[64];
static int nkeep;

/* 5 blocks of 100 bytes, 3 freed here: 2 leak, charged to this function */
__attribute__((noinline)) void leak_two(void)
{
    void *p[5];
    for (int i = 0; i < 5; i++)
        p[i] = malloc(100);
    for (int i = 0; i < 3; i++)
        free(p[i]);
    keep[nkeep++] = p[3];
    keep[nkeep++] = p[4];
}

/* calloc(7, 9) = 63 bytes, zeroed; freed */
__attribute__((noinline)) void zeroed(void)
{
    unsigned char *p = calloc(7, 9);
    int zero = 1;
    for (int i = 0; i < 63; i++)
        zero &= p[i] == 0;
    check(zero, "calloc zeroes");
    free(p);
}

/* realloc chain: malloc 10, realloc to 20, 30, 40 (3 allocations more, 3 frees), then
 * realloc(p, 0): a free; reallocarray(NULL, 4, 25) = 100 bytes, freed */
__attribute__((noinline)) void grow_chain(void)
{
    char *p = malloc(10);
    memset(p, 'x', 10);
    for (int n = 20; n <= 40; n += 10)
        p = realloc(p, (size_t)n);
    check(p[9] == 'x', "realloc keeps the contents");
    check(realloc(p, 0) == NULL, "realloc(p, 0) frees");
    void *q = reallocarray(NULL, 4, 25);
    free(q);
}

/* Every aligned form, each block freed: posix_memalign 64/200, aligned_alloc 128/256,
 * memalign 32/48, valloc 300, pvalloc 5000 */
__attribute__((noinline)) void aligned_forms(void)
{
    void *p = NULL;
    check(posix_memalign(&p, 64, 200) == 0 && ((uintptr_t)p & 63) == 0, "posix_memalign");
    free(p);
    p = aligned_alloc(128, 256);
    check(p && ((uintptr_t)p & 127) == 0, "aligned_alloc");
    free(p);
    p = memalign(32, 48);
    check(p && ((uintptr_t)p & 31) == 0, "memalign");
    free(p);
    long page = sysconf(_SC_PAGESIZE);
    p = valloc(300);
    check(p && ((uintptr_t)p & (uintptr_t)(page - 1)) == 0, "valloc");
    free(p);
    p = pvalloc(5000);
    check(p && ((uintptr_t)p & (uintptr_t)(page - 1)) == 0, "pvalloc");
    free(p);
}

/* What the program gets is the allocator's: NULL and ENOMEM on failure (not counted),
 * errno kept on success, the usable size of the block */
__attribute__((noinline)) void contract(void)
{
    errno = 0;
    void *p = malloc(SIZE_MAX);
    check(p == NULL && errno == ENOMEM, "malloc(SIZE_MAX) fails with ENOMEM");
    errno = 0;
    p = calloc(SIZE_MAX / 2, 4);
    check(p == NULL && errno == ENOMEM, "calloc overflow fails with ENOMEM");
    errno = 0;
    void *q = reallocarray(NULL, SIZE_MAX / 2, 4);
    check(q == NULL && errno == ENOMEM, "reallocarray overflow fails with ENOMEM");
    errno = EILSEQ;
    p = malloc(24);
    check(errno == EILSEQ, "malloc keeps errno on success");
    check(malloc_usable_size(p) >= 24, "malloc_usable_size");
    void *r = realloc(p, SIZE_MAX);
    check(r == NULL, "realloc to SIZE_MAX fails");
    free(p); /* still the program's after the failed realloc: 1 alloc, 1 free */
    check(posix_memalign(&p, 3, 8) == EINVAL, "posix_memalign rejects alignment 3");
}

__attribute__((noinline)) void outer(void)
{
    leak_two();
    zeroed();
}

int main(void)
{
    outer();
    grow_chain();
    aligned_forms();
    contract();
    say(failures ? "failures\n" : "ok\n");
    return failures != 0;
}
