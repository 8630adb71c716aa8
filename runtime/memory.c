/* SPDX-License-Identifier: MIT */
/*
 * PROF_MEMORY: the allocator's entry points, interposed. libfnprof.so defines malloc, free,
 * calloc, realloc, reallocarray, posix_memalign, aligned_alloc, memalign, valloc and pvalloc,
 * so that every way of loading it (-lfnprof, LD_PRELOAD, fnprof run, the wrappers) puts
 * them ahead of libc's; C++'s operator new and delete reach them through libstdc++, which
 * calls malloc and free. Each forwards to the next definition (dlsym(RTLD_NEXT)): the
 * program gets the very pointer, alignment, errno and failure it would get without us.
 *
 * Without PROF_MEMORY a wrapper tests one flag and jumps to the real function: nothing
 * is recorded and fnprof allocates nothing. With it, a block is charged to the calling
 * thread's innermost recorded call (the top of its shadow stack) and kept in a side table
 * of live blocks, pointer -> (context, size), so that its free finds whom to credit: the
 * blocks carry no header of ours, and malloc_usable_size stays the allocator's.
 *
 * Re-entry: dlsym may call calloc before the real one is known (a static buffer serves it,
 * and free recognises and ignores its blocks); the runtime's own allocations (thread set-up,
 * snapshots, the dump, the symbolizer) run under fnp_mem_busy and are neither recorded nor
 * sent back in here; so does a signal handler that allocates while this code holds a lock.
 *
 * libfnprof.a has none of them (FNP_ALLOC_WRAPPERS, below): a program linked with it keeps
 * libc's allocator, and PROF_MEMORY says so instead of recording.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>

#include "runtime.h"

#define FNP_WRAP __attribute__((visibility("default"), no_instrument_function))

__thread unsigned fnp_mem_busy __attribute__((tls_model("initial-exec")));

/*
 * What the wrappers test first, one load: MODE_TRACK while blocks are tracked (PROF_MEMORY,
 * from load to the dump), MODE_BOOT once the bootstrap buffer has handed out a block (free
 * and realloc must then look at their pointer). Zero: forward at once.
 */
#define MODE_TRACK 1
#define MODE_BOOT 2
static int mode;
/* Allocations not recorded for want of memory for the side table. */
static uint64_t dropped;

/*
 * The wrappers exist in libfnprof.so only. libfnprof.a leaves them out: linked into a
 * program, they would replace libc's allocator in the program itself, and in a -static one
 * leave nothing to forward to. So does a runtime built with a sanitizer (the robust tests
 * link one into their programs): AddressSanitizer and ThreadSanitizer replace the allocator
 * themselves and must stay the program's.
 */
#if defined(FNP_STATIC_RUNTIME) || defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define FNP_ALLOC_WRAPPERS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define FNP_ALLOC_WRAPPERS 0
#endif
#endif
#ifndef FNP_ALLOC_WRAPPERS
#define FNP_ALLOC_WRAPPERS 1
#endif

#if FNP_ALLOC_WRAPPERS

/* Written once at load (fnp_mem_init), read by the dump: why the memory profile misses
 * allocations (the program's malloc is not fnprof's), "" when it does not. */
static char bypass_note[320];

/* Set while this thread resolves the real functions: dlsym's own allocations then come
 * from the bootstrap buffer. */
static __thread int resolving __attribute__((tls_model("initial-exec")));

/* ---- the real functions, found on first use ------------------------------------------ */

typedef void *malloc_fn(size_t);
typedef void free_fn(void *);
typedef void *calloc_fn(size_t, size_t);
typedef void *realloc_fn(void *, size_t);
typedef void *reallocarray_fn(void *, size_t, size_t);
typedef int posix_memalign_fn(void **, size_t, size_t);
typedef void *memalign_fn(size_t, size_t);

static malloc_fn boot_malloc, boot_valloc, boot_pvalloc;
static free_fn boot_free;
static calloc_fn boot_calloc;
static realloc_fn boot_realloc;
static reallocarray_fn boot_reallocarray;
static posix_memalign_fn boot_posix_memalign;
static memalign_fn boot_aligned_alloc, boot_memalign;

/* Until resolved, each points to its boot_ function, which resolves them all. */
static struct {
    malloc_fn *malloc;
    free_fn *free;
    calloc_fn *calloc;
    realloc_fn *realloc;
    reallocarray_fn *reallocarray;
    posix_memalign_fn *posix_memalign;
    memalign_fn *aligned_alloc;
    memalign_fn *memalign;
    malloc_fn *valloc;
    malloc_fn *pvalloc;
} real = {boot_malloc,         boot_free,          boot_calloc,   boot_realloc, boot_reallocarray,
          boot_posix_memalign, boot_aligned_alloc, boot_memalign, boot_valloc,  boot_pvalloc};

/* 0: not yet, 1: a thread is resolving, 2: done. */
static int resolved;

#define RESOLVE(name)                                                                              \
    do {                                                                                           \
        void *f = dlsym(RTLD_NEXT, #name);                                                         \
        if (f)                                                                                     \
            __atomic_store_n((void **)&real.name, f, __ATOMIC_RELAXED);                            \
    } while (0)

/* Finds the next definitions. Returns 0 when they are known, -1 when this thread is inside
 * dlsym (its allocations then take the bootstrap buffer). Another thread's resolution is
 * waited for: it cannot take long, and before it ends there is nothing to forward to. */
static FNP_COLD int resolve(void)
{
    int state = __atomic_load_n(&resolved, __ATOMIC_ACQUIRE);
    if (state == 2)
        return 0;
    if (resolving)
        return -1;
    if (state == 0 &&
        __atomic_compare_exchange_n(&resolved, &state, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        int saved = errno;
        resolving = 1;
        RESOLVE(malloc);
        RESOLVE(free);
        RESOLVE(calloc);
        RESOLVE(realloc);
        RESOLVE(reallocarray);
        RESOLVE(posix_memalign);
        RESOLVE(aligned_alloc);
        RESOLVE(memalign);
        RESOLVE(valloc);
        RESOLVE(pvalloc);
        resolving = 0;
        errno = saved;
        __atomic_store_n(&resolved, 2, __ATOMIC_RELEASE);
        return 0;
    }
    while (__atomic_load_n(&resolved, __ATOMIC_ACQUIRE) != 2)
        sched_yield();
    return 0;
}

/* ---- the bootstrap buffer: dlsym's allocations before the real functions are known ---- */

#define BOOT_SIZE (64 * 1024)
static _Alignas(64) char boot_buf[BOOT_SIZE];
static size_t boot_used;

static inline FNP_NOINSTR int in_boot(const void *p)
{
    return (uintptr_t)p - (uintptr_t)boot_buf < BOOT_SIZE;
}

/* size bytes aligned to align (a power of two), zeroed (the buffer is never reused), the
 * size kept in the 8 bytes before the block for realloc; NULL when the buffer is spent. */
static FNP_COLD void *boot_alloc(size_t size, size_t align)
{
    if (align < 16)
        align = 16;
    if (size > BOOT_SIZE || align > BOOT_SIZE / 4)
        return NULL;
    size_t used = __atomic_load_n(&boot_used, __ATOMIC_RELAXED), start;
    do {
        start = (used + 8 + align - 1) & ~(align - 1);
        if (start + size > BOOT_SIZE)
            return NULL;
    } while (!__atomic_compare_exchange_n(&boot_used, &used, start + size, 1, __ATOMIC_RELAXED,
                                          __ATOMIC_RELAXED));
    memcpy(boot_buf + start - 8, &(uint64_t){size}, 8);
    __atomic_or_fetch(&mode, MODE_BOOT, __ATOMIC_RELAXED);
    return boot_buf + start;
}

static size_t boot_size(const void *p)
{
    uint64_t size;
    memcpy(&size, (const char *)p - 8, 8);
    return (size_t)size;
}

/* A boot_ function: resolve, then call the real one; inside dlsym, the buffer. */
#define BOOT_FN(ret, name, params, args, fallback)                                                 \
    static FNP_COLD ret boot_##name params                                                         \
    {                                                                                              \
        if (resolve() == 0 && real.name != boot_##name)                                            \
            return real.name args;                                                                 \
        fallback;                                                                                  \
    }

BOOT_FN(void *, malloc, (size_t n), (n), return boot_alloc(n, 16))
BOOT_FN(void *, calloc, (size_t k, size_t n), (k, n),
        return n && k > SIZE_MAX / n ? NULL : boot_alloc(k * n, 16))
BOOT_FN(void *, aligned_alloc, (size_t a, size_t n), (a, n), return boot_alloc(n, a))
BOOT_FN(void *, memalign, (size_t a, size_t n), (a, n), return boot_alloc(n, a))
BOOT_FN(void *, valloc, (size_t n), (n), return boot_alloc(n, 4096))
BOOT_FN(void *, pvalloc, (size_t n), (n), return boot_alloc(n, 4096))
BOOT_FN(int, posix_memalign, (void **p, size_t a, size_t n), (p, a, n),
        return (*p = boot_alloc(n, a)) ? 0 : ENOMEM)
/* A block freed before the real free is known cannot be handed on: it stays (once, in
 * start-up), as the bootstrap buffer's own do. */
BOOT_FN(void, free, (void *p), (p), return )
BOOT_FN(void *, realloc, (void *p, size_t n), (p, n), {
    void *q = boot_alloc(n, 16);
    if (q && p)
        memcpy(q, p, in_boot(p) && boot_size(p) < n ? boot_size(p) : n);
    return q;
})
BOOT_FN(void *, reallocarray, (void *p, size_t k, size_t n), (p, k, n),
        return n && k > SIZE_MAX / n ? NULL : boot_realloc(p, k *n))

/* ---- the side table of live blocks ---------------------------------------------------- */

/*
 * Sharded by the pointer's hash, each shard an open-addressing table (linear probing, at
 * most half full, deletion by backward shift: no tombstones) under a spin lock held for a
 * probe or two; grown with mmap, never with malloc. 24 bytes a slot.
 */
struct block {
    uintptr_t ptr; /* 0: empty */
    struct fnp_mem_ctx *ctx;
    uint64_t size;
};

#define SHARD_BITS 6
#define SHARD_FIRST 1024

struct shard {
    uintptr_t lock; /* 0, or the holder's token (lock_shard) */
    struct block *slots;
    size_t mask; /* slots - 1; slots a power of two */
    size_t count;
} __attribute__((aligned(64)));

static struct shard shards[1 << SHARD_BITS];

static inline FNP_NOINSTR uint64_t hash_ptr(uintptr_t p)
{
    return (uint64_t)(p >> 4) * 0x9e3779b97f4a7c15ull;
}

static inline FNP_NOINSTR struct shard *shard_of(uint64_t h)
{
    return &shards[h >> (64 - SHARD_BITS)];
}

static inline FNP_NOINSTR size_t home_of(uint64_t h, size_t mask)
{
    return (size_t)(h >> 16) & mask;
}

/* A lock word holds its holder's token, the address of a thread-local byte, set in the one
 * atomic step that takes it: a fork from a signal handler that interrupted this thread
 * inside a table operation can tell the shard it holds itself, and must not wait for. */
static __thread char token_byte __attribute__((tls_model("initial-exec")));

static inline FNP_NOINSTR uintptr_t my_token(void)
{
    return (uintptr_t)&token_byte;
}

static FNP_NOINSTR void lock_shard(struct shard *s)
{
    unsigned spins = 0;
    uintptr_t me = my_token(), free_word = 0;
    while (!__atomic_compare_exchange_n(&s->lock, &free_word, me, 0, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED)) {
        free_word = 0;
        while (__atomic_load_n(&s->lock, __ATOMIC_RELAXED)) {
            if (++spins > 100)
                sched_yield(); /* the holder may be descheduled: let it run */
#if defined(__x86_64__)
            else
                __builtin_ia32_pause();
#endif
        }
    }
}

static inline FNP_NOINSTR void unlock_shard(struct shard *s)
{
    __atomic_store_n(&s->lock, 0, __ATOMIC_RELEASE);
}

/* Doubles s (the first table: SHARD_FIRST slots). 0 or -ENOMEM. */
static FNP_COLD int grow(struct shard *s)
{
    size_t len = s->slots ? 2 * (s->mask + 1) : SHARD_FIRST;
    struct block *slots = fnp_pages(len * sizeof(*slots));
    if (!slots)
        return -ENOMEM;
    for (size_t i = 0; s->slots && i <= s->mask; i++) {
        if (!s->slots[i].ptr)
            continue;
        size_t j = home_of(hash_ptr(s->slots[i].ptr), len - 1);
        while (slots[j].ptr)
            j = (j + 1) & (len - 1);
        slots[j] = s->slots[i];
    }
    if (s->slots)
        munmap(s->slots, (s->mask + 1) * sizeof(*s->slots));
    s->slots = slots;
    s->mask = len - 1;
    return 0;
}

/* Keeps p -> (ctx, size). A pointer already there is a block whose free we missed (freed
 * while fnprof's own code ran on that thread): the new block replaces it. 0 or -ENOMEM. */
static FNP_NOINSTR int table_put(uintptr_t p, struct fnp_mem_ctx *ctx, uint64_t size)
{
    uint64_t h = hash_ptr(p);
    struct shard *s = shard_of(h);
    int rc = 0;
    lock_shard(s);
    if ((!s->slots || 2 * (s->count + 1) > s->mask + 1) && grow(s)) {
        rc = -ENOMEM;
    } else {
        size_t i = home_of(h, s->mask);
        while (s->slots[i].ptr && s->slots[i].ptr != p)
            i = (i + 1) & s->mask;
        if (!s->slots[i].ptr)
            s->count++;
        s->slots[i] = (struct block){p, ctx, size};
    }
    unlock_shard(s);
    return rc;
}

/* Takes p out of the table into *out; 0 when it was not there (a block allocated before
 * tracking began, or while it was paused). */
static FNP_NOINSTR int table_take(uintptr_t p, struct block *out)
{
    uint64_t h = hash_ptr(p);
    struct shard *s = shard_of(h);
    lock_shard(s);
    if (!s->slots) {
        unlock_shard(s);
        return 0;
    }
    size_t mask = s->mask, i = home_of(h, mask);
    while (s->slots[i].ptr != p) {
        if (!s->slots[i].ptr) {
            unlock_shard(s);
            return 0;
        }
        i = (i + 1) & mask;
    }
    *out = s->slots[i];
    /* Backward shift: later entries of the run whose home is not in (i, j] move into the
     * hole, so that every entry stays reachable from its home without tombstones. */
    for (size_t j = i;;) {
        j = (j + 1) & mask;
        if (!s->slots[j].ptr)
            break;
        size_t k = home_of(hash_ptr(s->slots[j].ptr), mask);
        int stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
        if (!stays) {
            s->slots[i] = s->slots[j];
            i = j;
        }
    }
    s->slots[i].ptr = 0;
    s->count--;
    unlock_shard(s);
    return 1;
}

/* ---- contexts ------------------------------------------------------------------------ */

static inline FNP_NOINSTR size_t ctx_home(const struct fnp_node *n, size_t mask)
{
    return (size_t)(((uint64_t)(uintptr_t)n * 0x9e3779b97f4a7c15ull) >> 20) & mask;
}

/* The context of node n on thread t, made if new; NULL when out of memory. */
static FNP_COLD struct fnp_mem_ctx *ctx_lookup(struct fnp_thread *t, const struct fnp_node *n)
{
    struct fnp_mem_thread *m = t->mem;
    if (!m) {
        if (!(m = fnp_pages(sizeof(*m))))
            return NULL;
        __atomic_store_n(&t->mem, m, __ATOMIC_RELEASE); /* read by the dump */
    }
    if (!m->slots || 2 * (m->count + 1) > m->mask + 1) {
        size_t len = m->slots ? 2 * (m->mask + 1) : 256;
        struct fnp_mem_ctx **slots = fnp_pages(len * sizeof(*slots));
        if (!slots)
            return NULL;
        for (size_t i = 0; m->slots && i <= m->mask; i++) {
            if (!m->slots[i])
                continue;
            size_t j = ctx_home(m->slots[i]->node, len - 1);
            while (slots[j])
                j = (j + 1) & (len - 1);
            slots[j] = m->slots[i];
        }
        if (m->slots)
            munmap(m->slots, (m->mask + 1) * sizeof(*m->slots));
        m->slots = slots;
        m->mask = len - 1;
    }
    size_t i = ctx_home(n, m->mask);
    while (m->slots[i] && m->slots[i]->node != n)
        i = (i + 1) & m->mask;
    struct fnp_mem_ctx *c = m->slots[i];
    if (!c) {
        if (!(c = fnp_arena_alloc(&m->arena, sizeof(*c))))
            return NULL;
        c->node = n;
        c->owner = t;
        c->next = m->list;
        __atomic_store_n(&m->list, c, __ATOMIC_RELEASE);
        m->slots[i] = c;
        m->count++;
    }
    m->last_node = n;
    m->last = c;
    return c;
}

/* The context the calling thread allocates in now: its innermost recorded call's node
 * (a ghost's or a link's target: where the timing tree counts that call), or its root
 * outside every call. A thread that has made no recorded call yet is attached here. */
static inline FNP_NOINSTR struct fnp_mem_ctx *current_ctx(void)
{
    struct fnp_thread *t = fnp_tls;
    if (!t && !(t = fnp_thread_attach()))
        return NULL;
    const struct fnp_node *n = t->frames[(ptrdiff_t)t->depth - 1].node;
    if (n->target)
        n = n->target;
    struct fnp_mem_thread *m = t->mem;
    if (FNP_LIKELY(m && m->last_node == n))
        return m->last;
    return ctx_lookup(t, n);
}

/* ---- recording ------------------------------------------------------------------------ */

static inline FNP_NOINSTR int recording_now(void)
{
    uint64_t rec = __atomic_load_n(&fnp_recording, __ATOMIC_RELAXED);
    return rec && !(rec & FNP_ON_PAUSED);
}

/* A block of size bytes at p was allocated by this thread. */
static FNP_NOINSTR void note_alloc(void *p, size_t size)
{
    if (fnp_mem_busy || !(__atomic_load_n(&mode, __ATOMIC_RELAXED) & MODE_TRACK) ||
        !recording_now())
        return;
    fnp_mem_hold();
    int saved = errno;
    struct fnp_mem_ctx *c = current_ctx();
    if (c && table_put((uintptr_t)p, c, size) == 0) {
        uint64_t bytes = c->bytes + size;
        __atomic_store_n(&c->allocs, c->allocs + 1, __ATOMIC_RELAXED);
        __atomic_store_n(&c->bytes, bytes, __ATOMIC_RELAXED);
        uint64_t live = bytes - c->freed - __atomic_load_n(&c->rfreed, __ATOMIC_RELAXED);
        if (live > c->peak)
            __atomic_store_n(&c->peak, live, __ATOMIC_RELAXED);
    } else {
        __atomic_add_fetch(&dropped, 1, __ATOMIC_RELAXED);
    }
    errno = saved;
    fnp_mem_release();
}

/* The block b was freed by this thread: its context is credited. */
static FNP_NOINSTR void credit_free(const struct block *b)
{
    struct fnp_mem_ctx *c = b->ctx;
    if (c->owner == fnp_tls) {
        __atomic_store_n(&c->frees, c->frees + 1, __ATOMIC_RELAXED);
        __atomic_store_n(&c->freed, c->freed + b->size, __ATOMIC_RELAXED);
    } else {
        __atomic_add_fetch(&c->rfrees, 1, __ATOMIC_RELAXED);
        __atomic_add_fetch(&c->rfreed, b->size, __ATOMIC_RELAXED);
    }
}

/* p is about to be freed (or moved by realloc): out of the table, into *b; 0 when it was
 * not tracked. Frees count while paused too: the block was allocated while recording. */
static FNP_NOINSTR int take_block(void *p, struct block *b)
{
    if (!p || fnp_mem_busy || !(__atomic_load_n(&mode, __ATOMIC_RELAXED) & MODE_TRACK))
        return 0;
    fnp_mem_hold();
    int found = table_take((uintptr_t)p, b);
    fnp_mem_release();
    return found;
}

static FNP_NOINSTR void note_free(void *p)
{
    struct block b;
    if (take_block(p, &b)) {
        fnp_mem_hold();
        credit_free(&b);
        fnp_mem_release();
    }
}

/* ---- the wrappers ---------------------------------------------------------------------- */

/* The real functions run under fnp_mem_busy: one that calls another through the PLT
 * (glibc's reallocarray calls realloc) is then counted once, by its own wrapper. */
static FNP_COLD void *malloc_slow(size_t n)
{
    fnp_mem_hold();
    void *p = real.malloc(n);
    fnp_mem_release();
    if (p)
        note_alloc(p, n);
    return p;
}

FNP_WRAP void *malloc(size_t n)
{
    if (FNP_LIKELY(!__atomic_load_n(&mode, __ATOMIC_RELAXED)))
        return real.malloc(n);
    return malloc_slow(n);
}

static FNP_COLD void free_slow(void *p)
{
    if (in_boot(p))
        return;
    note_free(p);
    fnp_mem_hold();
    real.free(p);
    fnp_mem_release();
}

FNP_WRAP void free(void *p)
{
    if (FNP_LIKELY(!__atomic_load_n(&mode, __ATOMIC_RELAXED)))
        return real.free(p);
    free_slow(p);
}

static FNP_COLD void *calloc_slow(size_t k, size_t n)
{
    fnp_mem_hold();
    void *p = real.calloc(k, n);
    fnp_mem_release();
    if (p)
        note_alloc(p, k * n); /* the real calloc refused an overflowing product */
    return p;
}

FNP_WRAP void *calloc(size_t k, size_t n)
{
    if (FNP_LIKELY(!__atomic_load_n(&mode, __ATOMIC_RELAXED)))
        return real.calloc(k, n);
    return calloc_slow(k, n);
}

/*
 * realloc and reallocarray: a free of the old block and an allocation of the new size,
 * as glibc does it: realloc(NULL, n) allocates, realloc(p, 0) frees (and returns NULL).
 * The old block leaves the table before the real call (no other thread can be given its
 * address meanwhile: it is still allocated) and goes back unchanged if the call fails.
 */
static FNP_COLD void *realloc_slow(void *p, size_t k, size_t n, int array)
{
    if (in_boot(p)) {
        size_t size = k * n, old = boot_size(p);
        if (array && n && k > SIZE_MAX / n) {
            errno = ENOMEM;
            return NULL;
        }
        void *q = malloc(size);
        if (q)
            memcpy(q, p, old < size ? old : size);
        return q;
    }
    struct block b;
    int tracked = take_block(p, &b);
    fnp_mem_hold();
    void *q = array ? real.reallocarray(p, k, n) : real.realloc(p, n);
    fnp_mem_release();
    int overflow = array && n && k > SIZE_MAX / n;
    size_t size = k * n;
    if (tracked) {
        fnp_mem_hold();
        int saved = errno;
        if (q || (size == 0 && !overflow)) /* realloc(p, 0) freed p */
            credit_free(&b);
        else if (table_put(b.ptr, b.ctx, b.size)) /* failed: the old block lives on */
            __atomic_add_fetch(&dropped, 1, __ATOMIC_RELAXED);
        errno = saved;
        fnp_mem_release();
    }
    if (q)
        note_alloc(q, size);
    return q;
}

FNP_WRAP void *realloc(void *p, size_t n)
{
    if (FNP_LIKELY(!__atomic_load_n(&mode, __ATOMIC_RELAXED)))
        return real.realloc(p, n);
    return realloc_slow(p, 1, n, 0);
}

FNP_WRAP void *reallocarray(void *p, size_t k, size_t n)
{
    if (FNP_LIKELY(!__atomic_load_n(&mode, __ATOMIC_RELAXED)))
        return real.reallocarray(p, k, n);
    return realloc_slow(p, k, n, 1);
}

static FNP_COLD int posix_memalign_slow(void **out, size_t align, size_t n)
{
    fnp_mem_hold();
    int rc = real.posix_memalign(out, align, n);
    fnp_mem_release();
    if (rc == 0 && *out)
        note_alloc(*out, n);
    return rc;
}

FNP_WRAP int posix_memalign(void **out, size_t align, size_t n)
{
    if (FNP_LIKELY(!__atomic_load_n(&mode, __ATOMIC_RELAXED)))
        return real.posix_memalign(out, align, n);
    return posix_memalign_slow(out, align, n);
}

/* The aligned forms that return the block: one slow path, told which real function. */
static FNP_COLD void *aligned_slow(memalign_fn *fn, size_t align, size_t n)
{
    fnp_mem_hold();
    void *p = fn(align, n);
    fnp_mem_release();
    if (p)
        note_alloc(p, n);
    return p;
}

static FNP_COLD void *page_slow(malloc_fn *fn, size_t n)
{
    fnp_mem_hold();
    void *p = fn(n);
    fnp_mem_release();
    if (p)
        note_alloc(p, n);
    return p;
}

FNP_WRAP void *aligned_alloc(size_t align, size_t n)
{
    if (FNP_LIKELY(!__atomic_load_n(&mode, __ATOMIC_RELAXED)))
        return real.aligned_alloc(align, n);
    return aligned_slow(real.aligned_alloc, align, n);
}

FNP_WRAP void *memalign(size_t align, size_t n)
{
    if (FNP_LIKELY(!__atomic_load_n(&mode, __ATOMIC_RELAXED)))
        return real.memalign(align, n);
    return aligned_slow(real.memalign, align, n);
}

FNP_WRAP void *valloc(size_t n)
{
    if (FNP_LIKELY(!__atomic_load_n(&mode, __ATOMIC_RELAXED)))
        return real.valloc(n);
    return page_slow(real.valloc, n);
}

FNP_WRAP void *pvalloc(size_t n)
{
    if (FNP_LIKELY(!__atomic_load_n(&mode, __ATOMIC_RELAXED)))
        return real.pvalloc(n);
    return page_slow(real.pvalloc, n);
}

/* ---- load, fork, stop -------------------------------------------------------------------- */

/* fork: no shard may be locked by a thread that does not exist in the child. The forking
 * thread holds them all across the fork, busy so that an allocation by an atfork handler
 * meanwhile does not wait for a lock it holds itself. */
/* The shard this thread held when it forked (from a signal handler), or NULL. */
static __thread struct shard *held_at_fork __attribute__((tls_model("initial-exec")));

static void before_fork(void)
{
    fnp_mem_hold();
    /* A fork from a signal handler may interrupt this thread inside a table operation: the
     * shard it holds stays as it is (held, by this thread, in both processes). */
    held_at_fork = NULL;
    for (size_t i = 0; i < sizeof(shards) / sizeof(shards[0]); i++) {
        if (__atomic_load_n(&shards[i].lock, __ATOMIC_RELAXED) == my_token())
            held_at_fork = &shards[i];
        else
            lock_shard(&shards[i]);
    }
}

static void after_fork_parent(void)
{
    for (size_t i = 0; i < sizeof(shards) / sizeof(shards[0]); i++)
        if (&shards[i] != held_at_fork)
            unlock_shard(&shards[i]);
    fnp_mem_release();
}

/* The child's memory profile, like its timing profile, begins at the fork: the parent's
 * blocks are forgotten (their frees are not the child's to count) and its contexts stay
 * with the parent's thread states, which the child no longer lists. */
static void after_fork_child(void)
{
    for (size_t i = 0; i < sizeof(shards) / sizeof(shards[0]); i++) {
        struct shard *s = &shards[i];
        /* The shard an interrupted operation holds (a fork from a signal handler) is left
         * as it is: that operation goes on in the child too, with the table it was using.
         * Its entries, the parent's blocks, stay: a rare miscount, never a crash. */
        if (s == held_at_fork)
            continue;
        if (s->slots)
            munmap(s->slots, (s->mask + 1) * sizeof(*s->slots));
        s->slots = NULL;
        s->mask = s->count = 0;
        unlock_shard(s);
    }
    __atomic_store_n(&dropped, 0, __ATOMIC_RELAXED);
    fnp_mem_release();
}

/*
 * Whose malloc the program calls. A program that defines its own (jemalloc or mimalloc
 * linked in statically, a bump allocator), or another allocator loaded ahead of
 * libfnprof.so, is first in the loader's search order: its calls never reach the wrappers,
 * and the memory profile would say 0 allocations as if that were the truth. Asked once at
 * load, where the loader answers the program's own lookups (RTLD_DEFAULT): each entry point
 * not defined in this library is named in *out (copied, at most size bytes), and *owner
 * gets the library that defines the first of them (borrowed: the loader's string), "" when
 * it is the executable. Returns how many there are.
 */
static int bypassing(char *out, size_t size, const char **owner)
{
    static const char *const names[] = {"malloc", "free", "calloc", "realloc"};
    Dl_info self, info, exe = {0};
    int count = 0;
    size_t len = 0;
    *out = 0;
    *owner = "";
    if (!dladdr((void *)fnp_mem_init, &self))
        return 0;
    /* The executable's program headers lie in its first mapping: its name is argv[0]'s
     * to the loader, so it is told by its base. */
    const void *phdr = (const void *)getauxval(AT_PHDR);
    if (phdr && !dladdr(phdr, &exe))
        exe.dli_fbase = NULL;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        void *f = dlsym(RTLD_DEFAULT, names[i]);
        if (!f || !dladdr(f, &info) || info.dli_fbase == self.dli_fbase)
            continue;
        if (!count++ && info.dli_fname && info.dli_fbase != exe.dli_fbase)
            *owner = info.dli_fname;
        int k = snprintf(out + len, size - len, "%s%s", len ? ", " : "", names[i]);
        if (k > 0 && (size_t)k < size - len)
            len += (size_t)k;
    }
    return count;
}

/* Fills bypass_note when the program's allocator is not reached through the wrappers. */
static FNP_COLD void note_bypass(void)
{
    char names[64];
    const char *owner;
    int n = bypassing(names, sizeof(names), &owner);
    if (!n)
        return;
    /* A library is named by its file name. */
    const char *slash = strrchr(owner, '/'), *base = slash ? slash + 1 : owner;
    if (strncmp(base, "libc.so", 7) == 0) {
        /* libc's own allocator ahead of the wrappers: libfnprof.so came after libc in the
         * search order (opened with dlopen, not preloaded or linked). */
        snprintf(bypass_note, sizeof(bypass_note),
                 "libfnprof.so was loaded after libc (not preloaded or linked), so %s %s "
                 "libc's directly: fnprof sees no allocation made through %s",
                 names, n > 1 ? "reach" : "reaches", n > 1 ? "them" : "it");
        return;
    }
    snprintf(bypass_note, sizeof(bypass_note),
             "%s %s %s%s, not libc's: fnprof sees no allocation made through %s", names,
             n > 1 ? "are" : "is", *base ? base : "the program's own", *base ? "'s" : "",
             n > 1 ? "them" : "it");
}

/* The next allocator's functions are found when the library loads, PROF_MEMORY or not:
 * left to the process's first allocation, the lookup could run inside dlopen while another
 * thread waits in dlsym for the loader's lock that dlopen holds. */
__attribute__((constructor)) static void resolve_at_load(void)
{
    resolve();
}

#endif /* FNP_ALLOC_WRAPPERS */

int fnp_mem_init(void)
{
#if !FNP_ALLOC_WRAPPERS
    fnp_log("PROF_MEMORY needs libfnprof.so (a program linked with libfnprof.a, or a runtime "
            "built with a sanitizer, keeps its allocator): no memory profile");
    return -ENOTSUP;
#else
    /* The real functions first, here at load rather than in some thread's first malloc. */
    resolve();
    note_bypass();
    if (*bypass_note)
        fnp_log("PROF_MEMORY: incomplete memory profile: %s", bypass_note);
    pthread_atfork(before_fork, after_fork_parent, after_fork_child);
    __atomic_or_fetch(&mode, MODE_TRACK, __ATOMIC_RELEASE);
    return 0;
#endif
}

const char *fnp_mem_incomplete(void)
{
#if FNP_ALLOC_WRAPPERS
    if (*bypass_note)
        return bypass_note;
#endif
    return NULL;
}

int fnp_mem_stop(void)
{
    return (__atomic_fetch_and(&mode, ~MODE_TRACK, __ATOMIC_ACQ_REL) & MODE_TRACK) != 0;
}

uint64_t fnp_mem_dropped(void)
{
    return __atomic_load_n(&dropped, __ATOMIC_RELAXED);
}
