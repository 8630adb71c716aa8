/* A program for the streamed trace's fatal path (run_stream.py, case crash_in_malloc):
 * its own malloc, under a lock, which dies by a signal while holding that lock when asked
 * for SIZE_MAX - 1 bytes, as a crash inside malloc on a corrupt heap does. The trace's
 * writer needs malloc to end the file: it blocks on the lock for good, and the process
 * must still die at once. Built with -finstrument-functions.
 *   stream_crash CALLS segv|abort */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define NOI __attribute__((no_instrument_function))
#define ARENA ((size_t)1 << 32)
#define DIE_SIZE (SIZE_MAX - 1)

static pthread_mutex_t heap_lock = PTHREAD_MUTEX_INITIALIZER;
static char *arena, *cur;
static int die_by_abort;

/* A bump allocator: each block keeps its size before it, 16-aligned; free keeps all. */
static NOI void *take(size_t align, size_t n)
{
    if (n == DIE_SIZE) {
        pthread_mutex_lock(&heap_lock);
        if (die_by_abort)
            abort();
        *(volatile int *)(uintptr_t)(n - DIE_SIZE) = 1; /* SIGSEGV, the lock held */
    }
    if (align < 16)
        align = 16;
    pthread_mutex_lock(&heap_lock);
    if (!arena)
        cur = arena = mmap(NULL, ARENA, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    uintptr_t p = ((uintptr_t)cur + 16 + align - 1) & ~(uintptr_t)(align - 1);
    void *out = NULL;
    if (arena != MAP_FAILED && p + n <= (uintptr_t)arena + ARENA) {
        ((size_t *)p)[-1] = n;
        cur = (char *)(p + n);
        out = (void *)p;
    }
    pthread_mutex_unlock(&heap_lock);
    return out;
}

NOI void *malloc(size_t n)
{
    return take(16, n);
}
NOI void *calloc(size_t k, size_t n)
{
    return k && n > SIZE_MAX / k ? NULL : take(16, k * n);
}
NOI void free(void *p)
{
    (void)p;
}
NOI void *aligned_alloc(size_t a, size_t n)
{
    return take(a, n);
}
NOI void *memalign(size_t a, size_t n)
{
    return take(a, n);
}
NOI void *valloc(size_t n)
{
    return take(4096, n);
}
NOI void *pvalloc(size_t n)
{
    return take(4096, (n + 4095) & ~(size_t)4095);
}
NOI int posix_memalign(void **out, size_t a, size_t n)
{
    return (*out = take(a, n)) ? 0 : 12;
}
NOI void *realloc(void *p, size_t n)
{
    void *q = take(16, n);
    if (p && q) {
        size_t old = ((size_t *)p)[-1];
        memcpy(q, p, old < n ? old : n);
    }
    return q;
}

static volatile long sink;

static long leaf(long i)
{
    return i * 3 + 1;
}

static volatile size_t die_size = DIE_SIZE;

static void crash(void)
{
    sink += (long)malloc(die_size);
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000;
    die_by_abort = argc > 2 && strcmp(argv[2], "abort") == 0;
    for (long i = 0; i < n; i++)
        sink += leaf(i);
    crash();
    return 0;
}
/* SPDX-License-Identifier: MIT */
