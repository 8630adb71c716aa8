/* SPDX-License-Identifier: MIT */
/*
 * PROF_TRACE_LAST=N, the flight recorder: the trace keeps only the last N calls to end,
 * over all threads, in memory fixed at load, and writes them at exit, on PROF_DUMP_SIGNAL,
 * from fnprof_dump() and when a fatal signal kills the program (docs/trace.md).
 *
 * Why a pool of chunks rather than a ring per thread or one shared ring: the exit hook
 * must stay what it is with PROF_TRACE (fnp_trace_add: a store and a pointer bump into
 * the thread's own chunk), so the records still go to a chunk the thread owns alone; a
 * shared ring would need an atomic per call. The chunks come from one pool mapped at load
 * and shared by all threads. When a thread's chunk is full (the cold path, once per
 * chunk), the chunk is sealed into a queue in the order chunks fill, and the thread takes
 * a free chunk or, when none is left, the oldest sealed one, whose calls are then
 * overwritten. A thread's chunks are sealed in its own order, so each thread loses its
 * oldest calls first, and the calls kept are those of the last chunks to fill, over all
 * threads: memory is fixed (pool_chunks * chunk_recs * 16 bytes), the last calls survive.
 *
 * The calls written are those that ended after the newest overwritten call (the time the
 * ring reaches back to), at most the N that ended last: every call that ended in that
 * window is in the file, so each thread's calls are a suffix of its calls, and a call's
 * caller, which ends later, is there too (or still open: written as ending at the moment
 * of writing, as the exit trace does). The pool holds N calls plus one chunk, plus one
 * chunk for each of RESERVE threads recording at once: with one thread the window holds
 * exactly the last N calls; each thread beyond RESERVE holding a chunk makes it shorter.
 *
 * The fatal-signal path cannot name functions (no malloc, no loader lock), so it adds the
 * calls, with their functions' addresses, to the raw snapshot the handler already writes
 * (signals.c, raw.c); `fnprof symbolize --trace PATH` then names them as the exit path
 * would, and writes the JSON trace. That path reads the pool with no lock (a thread that
 * still runs may hold it): a chunk recycled while it is read is noticed by its
 * generation, read before and after its copy, and left out.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "runtime.h"

#define RESERVE 32            /* chunks for threads recording at once, beyond N's */
#define MAX_CHUNK_RECS 4096   /* 64 KiB: larger chunks would make the window coarser, not faster */
#define MIN_CHUNK_RECS 64     /* smaller ones would send the exit hook to the cold path often */
#define CHUNKS_FOR_N 16       /* N's calls over at least this many chunks: the granularity */
#define MAX_LAST (1ull << 28) /* 4 GiB of records: more is a mistake */

struct ring_chunk {
    uint64_t gen;   /* bumped each time it is recycled (the fatal path's check) */
    uint64_t base;  /* the ticks its first record's end counts from */
    uint64_t last;  /* sealed: when its last call ended */
    uint32_t n;     /* sealed: records in use */
    uint32_t calls; /* sealed: calls among them (BASE and LONG records are not) */
    uint32_t extra; /* owner: BASE and LONG records in it */
    int tid;        /* the thread that filled it */
    char name[16];  /* its name when the chunk was sealed */
    struct fnp_trace_ev recs[];
};

int fnp_ring;
static uint64_t last_n;
static size_t chunk_recs, pool_chunks, stride;
static unsigned char *pool;
/* Under ring_lock: the free chunks (a stack), the sealed ones in the order they filled (a
 * queue of pool_chunks slots), the newest end overwritten and the calls overwritten. */
static uint32_t *free_stack, *sealed;
static size_t nfree, seal_head, nsealed;
static uint64_t lost_until, overwritten;
static int ring_lock;
/* The fatal path's copy of one chunk, and its heap of the oldest ends (window_cut), mapped
 * at load: heap_cap is the pool's records less N, the most calls the window can leave out. */
static struct ring_chunk *scratch;
static uint64_t *window_heap;
static size_t heap_cap;

static struct ring_chunk *chunk_at(size_t i)
{
    return (struct ring_chunk *)(pool + i * stride);
}

/* The chunk t fills: its records end at trace_end, which is the chunk's end. */
static struct ring_chunk *current(const struct fnp_thread *t)
{
    if (!t->trace_end)
        return NULL;
    return (struct ring_chunk *)((const char *)(t->trace_end - chunk_recs) -
                                 offsetof(struct ring_chunk, recs));
}

/* The pool and the fatal path's heap, with MAP_NORESERVE: many of their pages are written
 * late (a short run fills few chunks) or never (the heap serves only a dying program), and
 * a large N must be neither refused by the kernel's overcommit heuristic nor counted
 * against the commit limit for pages never touched. Pages take memory when first written,
 * as any anonymous page does. Under strict overcommit (vm.overcommit_memory=2) the kernel
 * ignores the flag and counts the whole mapping, so there it is what it was. */
static void *map_untouched(size_t size)
{
    int saved = errno;
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    errno = saved;
    return p == MAP_FAILED ? NULL : p;
}

int fnp_ring_init(uint64_t last)
{
    /* The lines below quote the setting as written (env.c took it from there), not the
     * number read from it. */
    char num[24];
    const char *said = secure_getenv("PROF_TRACE_LAST");
    if (!said || !*said) {
        snprintf(num, sizeof(num), "%llu", (unsigned long long)last);
        said = num;
    }
    if (last > MAX_LAST) {
        fnp_log("PROF_TRACE_LAST=%s: more than %llu calls; no trace", said,
                (unsigned long long)MAX_LAST);
        return -EINVAL;
    }
    chunk_recs = (size_t)(last / CHUNKS_FOR_N);
    chunk_recs = chunk_recs < MIN_CHUNK_RECS   ? MIN_CHUNK_RECS
                 : chunk_recs > MAX_CHUNK_RECS ? MAX_CHUNK_RECS
                                               : chunk_recs;
    pool_chunks = (size_t)((last + chunk_recs - 1) / chunk_recs) + 1 + RESERVE;
    stride = sizeof(struct ring_chunk) + chunk_recs * sizeof(struct fnp_trace_ev);
    stride = (stride + 63) & ~(size_t)63;
    pool = map_untouched(pool_chunks * stride);
    free_stack = fnp_pages(pool_chunks * sizeof(*free_stack));
    sealed = fnp_pages(pool_chunks * sizeof(*sealed));
    scratch = fnp_pages(stride);
    heap_cap = pool_chunks * chunk_recs - (size_t)last;
    window_heap = map_untouched(heap_cap * sizeof(*window_heap));
    if (!pool || !free_stack || !sealed || !scratch || !window_heap) {
        fnp_log("PROF_TRACE_LAST=%s: cannot map %zu bytes for the ring; no trace", said,
                pool_chunks * stride);
        return -ENOMEM;
    }
    for (size_t i = 0; i < pool_chunks; i++)
        free_stack[i] = (uint32_t)(pool_chunks - 1 - i);
    nfree = pool_chunks;
    last_n = last;
    fnp_ring = 1;
    return 0;
}

static void lock_ring(void)
{
    while (__atomic_exchange_n(&ring_lock, 1, __ATOMIC_ACQUIRE))
        sched_yield();
}

static void unlock_ring(void)
{
    __atomic_store_n(&ring_lock, 0, __ATOMIC_RELEASE);
}

/* Under the lock: t's chunk joins the sealed queue (or the free stack when it holds
 * nothing), and t is left without one. */
static void seal(struct fnp_thread *t)
{
    struct ring_chunk *c = current(t);
    if (!c)
        return;
    size_t used = (size_t)(t->trace_cur - c->recs);
    uint32_t idx = (uint32_t)(((unsigned char *)c - pool) / stride);
    t->trace_cur = t->trace_end = NULL;
    if (!used) {
        free_stack[nfree++] = idx;
        return;
    }
    /* The last record is a call's (BASE and LONG ones come before their call). */
    c->last = t->trace_base + c->recs[used - 1].end;
    c->calls = (uint32_t)used - c->extra;
    __atomic_store_n(&c->n, (uint32_t)used, __ATOMIC_RELEASE);
    sealed[(seal_head + nsealed) % pool_chunks] = idx;
    __atomic_store_n(&nsealed, nsealed + 1, __ATOMIC_RELEASE);
}

/* Under the lock: a chunk for t, free or the oldest sealed one; NULL when every chunk is
 * another thread's. */
static struct ring_chunk *take(void)
{
    if (nfree)
        return chunk_at(free_stack[--nfree]);
    if (!nsealed)
        return NULL;
    struct ring_chunk *c = chunk_at(sealed[seal_head]);
    __atomic_store_n(&seal_head, (seal_head + 1) % pool_chunks, __ATOMIC_RELEASE);
    __atomic_store_n(&nsealed, nsealed - 1, __ATOMIC_RELEASE);
    if (c->last > lost_until)
        __atomic_store_n(&lost_until, c->last, __ATOMIC_RELEASE);
    __atomic_store_n(&overwritten, overwritten + c->calls, __ATOMIC_RELAXED);
    /* Emptied, then a new generation: a reader without the lock that sees the new one
     * sees it empty (chunk_calls). */
    __atomic_store_n(&c->n, 0, __ATOMIC_RELEASE);
    __atomic_add_fetch(&c->gen, 1, __ATOMIC_ACQ_REL);
    return c;
}

/* The BASE and LONG records fnp_trace_put_cold writes before the call of t0 to t1. */
static uint32_t extra_for(const struct fnp_thread *t, uint64_t t0, uint64_t t1)
{
    return ((t1 - t->trace_base) >> 32 != 0) + ((t1 - t0) >> 32 != 0);
}

FNP_NOINSTR void fnp_ring_add_cold(struct fnp_thread *t, const struct fnp_node *n, uint64_t t0,
                                   uint64_t t1)
{
    /* Counted as written, so that sealing a chunk needs no pass over it. */
    uint32_t extra = extra_for(t, t0, t1);
    if (fnp_trace_put_cold(t, n, t0, t1) == 0) {
        current(t)->extra += extra; /* a BASE or LONG record, with room for it */
        return;
    }
    if (current(t)) { /* the thread's name as the chunk is sealed: its track's */
        prctl(PR_GET_NAME, current(t)->name, 0, 0, 0);
    } else if (!__atomic_load_n(&nfree, __ATOMIC_RELAXED) &&
               !__atomic_load_n(&nsealed, __ATOMIC_RELAXED)) {
        /* Every chunk is another thread's: this thread comes here at each call until one
         * is sealed, so it must not take the lock to learn it. */
        __atomic_store_n(&t->trace_dropped, t->trace_dropped + 1, __ATOMIC_RELAXED);
        return;
    }
    lock_ring();
    seal(t);
    struct ring_chunk *c = take();
    if (c) {
        c->tid = t->tid;
        c->base = t1;
        c->extra = 0;
        t->trace_base = t1;
        t->trace_cur = c->recs;
        t->trace_end = c->recs + chunk_recs;
    } else {
        __atomic_store_n(&t->trace_dropped, t->trace_dropped + 1, __ATOMIC_RELAXED);
    }
    unlock_ring();
    if (c) {
        c->extra = extra_for(t, t0, t1); /* a LONG record at most: the base is t1 */
        fnp_trace_put_cold(t, n, t0, t1);
    }
}

void fnp_ring_thread_ended(struct fnp_thread *t)
{
    struct ring_chunk *c = current(t);
    if (c)
        prctl(PR_GET_NAME, c->name, 0, 0, 0);
    /* A signal handler's calls on this thread while the lock is held are counted, not
     * kept (fnp_trace_add_cold): once seal() has left t without a chunk, they would take
     * the cold path and wait for the lock this thread holds. */
    uint32_t was = t->trace_nest;
    t->trace_nest = 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    lock_ring();
    seal(t);
    unlock_ring();
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    t->trace_nest = was;
}

void fnp_ring_after_fork(void)
{
    /* The child's trace is of the child: the parent's chunks are forgotten, every state's
     * chunk too (thread.c lists only the forking thread's state, attached again). */
    for (size_t i = 0; i < pool_chunks; i++)
        free_stack[i] = (uint32_t)(pool_chunks - 1 - i);
    nfree = pool_chunks;
    seal_head = nsealed = 0;
    lost_until = overwritten = 0;
    ring_lock = 0;
}

/* ---- reading the ring ------------------------------------------------------------------ */

/* Calls no chunk could take, over all threads (each counts its own: no shared line). */
static uint64_t not_kept(void)
{
    uint64_t n = 0;
    for (struct fnp_thread *t = fnp_thread_list(); t; t = t->next)
        n += __atomic_load_n(&t->trace_dropped, __ATOMIC_RELAXED);
    return n;
}

/*
 * Calls each call the ring holds, sealed chunks oldest first then the threads' chunks, with
 * its thread's id and name (NULL: a live thread, whose name the caller finds). copy: the
 * fatal path's way, each chunk copied and checked against a recycling meanwhile. Returns
 * nothing; the lock is the caller's business.
 */
typedef void (*call_fn)(void *ctx, int tid, const char *name, const struct fnp_trace_rec *r);

/* The calls of c: a sealed chunk (owner NULL), or owner's current one. Its size is read
 * after its generation, so that a copy of a chunk recycled meanwhile is always noticed:
 * take() empties a chunk before it bumps the generation, and its new owner writes only
 * after. */
static void chunk_calls(const struct ring_chunk *c, const struct fnp_thread *owner, int copy,
                        call_fn fn, void *ctx)
{
    uint64_t gen = __atomic_load_n(&c->gen, __ATOMIC_ACQUIRE);
    size_t used;
    if (owner) {
        const struct fnp_trace_ev *cur = __atomic_load_n(&owner->trace_cur, __ATOMIC_ACQUIRE);
        if (current(owner) != c || cur < c->recs || cur > c->recs + chunk_recs)
            return;
        used = (size_t)(cur - c->recs);
    } else {
        used = __atomic_load_n(&c->n, __ATOMIC_ACQUIRE);
    }
    if (used > chunk_recs)
        return;
    const char *name = owner ? NULL : c->name;
    if (copy) {
        memcpy(scratch, c, offsetof(struct ring_chunk, recs) + used * sizeof(c->recs[0]));
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (__atomic_load_n(&c->gen, __ATOMIC_ACQUIRE) != gen)
            return; /* recycled while copied */
        c = scratch;
        if (name)
            name = scratch->name;
    }
    uint64_t base = c->base;
    for (size_t i = 0; i < used; i++) {
        size_t k = c->recs[i].node == FNP_TRACE_LONG && i + 1 < used ? 2 : 1;
        struct fnp_trace_rec r;
        if (fnp_trace_unpack(&c->recs[i], k, &base, &r))
            fn(ctx, c->tid, name, &r);
        i += k - 1;
    }
}

static void ring_calls(int copy, call_fn fn, void *ctx)
{
    size_t head = __atomic_load_n(&seal_head, __ATOMIC_ACQUIRE);
    size_t ns = __atomic_load_n(&nsealed, __ATOMIC_ACQUIRE);
    for (size_t i = 0; i < ns && i < pool_chunks; i++) {
        uint32_t idx = __atomic_load_n(&sealed[(head + i) % pool_chunks], __ATOMIC_RELAXED);
        if (idx < pool_chunks)
            chunk_calls(chunk_at(idx), NULL, copy, fn, ctx);
    }
    for (struct fnp_thread *t = fnp_thread_list(); t; t = t->next) {
        const struct ring_chunk *c = current(t);
        if (c && (const unsigned char *)c >= pool &&
            (const unsigned char *)c < pool + pool_chunks * stride)
            chunk_calls(c, t, copy, fn, ctx);
    }
}

/* The window: calls that end after the cut are written, at most last_n of them, none from
 * before the newest overwritten call. Of the T calls held that end after it, the oldest
 * T - N go: the cut is the (T - N)-th smallest end, found in one pass that keeps the
 * smallest ends in a max-heap (no memory to sort in a signal handler: the heap is mapped at
 * load). T - N is at most the pool's records less N, the heap's size, and in the usual
 * order of the pass (oldest chunks first) a call's end is compared once with the top. */
struct smallest {
    uint64_t after, held; /* the ends counted are those after `after`: `held` of them */
    size_t n;             /* in the heap */
};

static void sift_down(uint64_t *h, size_t n, size_t i)
{
    for (size_t c; (c = 2 * i + 1) < n; i = c) {
        if (c + 1 < n && h[c + 1] > h[c])
            c++;
        if (h[i] >= h[c])
            return;
        uint64_t x = h[i];
        h[i] = h[c];
        h[c] = x;
    }
}

static void smallest_one(void *ctx, int tid, const char *name, const struct fnp_trace_rec *r)
{
    (void)tid;
    (void)name;
    struct smallest *k = ctx;
    if (r->t1 <= k->after)
        return;
    k->held++;
    uint64_t *h = window_heap;
    if (k->n < heap_cap) {
        size_t i = k->n++;
        h[i] = r->t1;
        while (i && h[(i - 1) / 2] < h[i]) { /* up */
            uint64_t x = h[i];
            h[i] = h[(i - 1) / 2];
            h[(i - 1) / 2] = x;
            i = (i - 1) / 2;
        }
    } else if (heap_cap && r->t1 < h[0]) {
        h[0] = r->t1;
        sift_down(h, k->n, 0);
    }
}

/* The cut, and through *held the calls that end after lost. */
static uint64_t window_cut(uint64_t lost, uint64_t *held)
{
    struct smallest k = {lost, 0, 0};
    ring_calls(0, smallest_one, &k);
    *held = k.held;
    if (k.held <= last_n || !k.n)
        return lost;
    /* Sorted in place (heapsort: the heap is one already), the (T - N)-th smallest is at
     * T - N - 1. More than the heap holds only if threads moved chunks during the pass:
     * then its largest, a window of more than N calls. */
    for (size_t n = k.n; n > 1; n--) {
        uint64_t x = window_heap[0];
        window_heap[0] = window_heap[n - 1];
        window_heap[n - 1] = x;
        sift_down(window_heap, n - 1, 0);
    }
    uint64_t drop = k.held - last_n;
    return window_heap[(drop <= k.n ? drop : k.n) - 1];
}

/* ---- the exit, the dump signal and fnprof_dump: named here, written as JSON ---------- */

struct collecting {
    uint64_t lost, older;
    struct fnp_ring_calls *out;
};

static void collect_one(void *ctx, int tid, const char *name, const struct fnp_trace_rec *r)
{
    struct collecting *k = ctx;
    struct fnp_ring_calls *o = k->out;
    if (r->t1 <= k->lost || o->n >= o->cap) {
        k->older++;
        return;
    }
    o->calls[o->n++] = (struct fnp_ring_call){*r, tid, name};
}

int fnp_ring_collect(struct fnp_ring_calls *out, uint64_t now)
{
    (void)now;
    /* Room for every record of the pool, taken before the lock (malloc may be slow). */
    out->cap = pool_chunks * chunk_recs;
    out->calls = malloc(out->cap * sizeof(*out->calls));
    out->n = 0;
    if (!out->calls)
        return -ENOMEM;
    /* One pass under the lock: threads that fill a chunk meanwhile wait for it, so it is
     * kept short; their current chunks may grow while read, as the exit trace's do. The
     * caller sorts and keeps the last N (memory may be allocated here). */
    lock_ring();
    struct collecting k = {__atomic_load_n(&lost_until, __ATOMIC_ACQUIRE), 0, out};
    ring_calls(0, collect_one, &k);
    out->last = last_n;
    out->overwritten = __atomic_load_n(&overwritten, __ATOMIC_RELAXED) + k.older;
    out->not_kept = not_kept();
    unlock_ring();
    return 0;
}

/* ---- the fatal path: into the raw snapshot ------------------------------------------- */

struct raw_out {
    struct fnp_raw_out *o;
    uint64_t cut, after_cut; /* calls read that end after the cut, written or not */
};

static void raw_one(void *ctx, int tid, const char *name, const struct fnp_trace_rec *r)
{
    (void)name;
    struct raw_out *k = ctx;
    if (r->t1 <= k->cut)
        return;
    k->after_cut++;
    if (!r->node || fnp_key_is_ghost(r->node->fn))
        return;
    fnp_raw_put(k->o, "F", 1);
    fnp_raw_put_u64(k->o, (uint64_t)(int64_t)tid);
    fnp_raw_put_u64(k->o, r->node->fn);
    fnp_raw_put_u64(k->o, r->t0);
    fnp_raw_put_u64(k->o, r->t1);
}

static void raw_track(struct fnp_raw_out *o, int tid, const char *name)
{
    size_t len = strnlen(name, 15);
    fnp_raw_put(o, "K", 1);
    fnp_raw_put_u64(o, (uint64_t)(int64_t)tid);
    fnp_raw_put_u64(o, len);
    fnp_raw_put(o, name, len);
}

void fnp_ring_put_raw(struct fnp_raw_out *o, uint64_t now)
{
    if (!fnp_ring)
        return;
    /* Two passes over the pool: one finds the window, the other copies and writes it. */
    uint64_t lost = __atomic_load_n(&lost_until, __ATOMIC_ACQUIRE), held;
    uint64_t cut = window_cut(lost, &held);
    struct raw_out k = {o, cut, 0};
    ring_calls(1, raw_one, &k);
    uint64_t held_older = held > k.after_cut ? held - k.after_cut : 0; /* before the window */
    /* The calls still open end now: outermost last, as the exit trace has them. */
    for (struct fnp_thread *t = fnp_thread_list(); t; t = t->next) {
        if (!__atomic_load_n(&t->in_use, __ATOMIC_ACQUIRE))
            continue;
        uint32_t depth = __atomic_load_n(&t->depth, __ATOMIC_ACQUIRE);
        const struct fnp_frame *frames = __atomic_load_n(&t->frames, __ATOMIC_ACQUIRE);
        for (uint32_t i = depth; i-- > 0;) {
            const struct fnp_node *node = __atomic_load_n(&frames[i].node, __ATOMIC_RELAXED);
            if (!node)
                continue;
            struct fnp_trace_rec r = {node, __atomic_load_n(&frames[i].t0, __ATOMIC_RELAXED), now};
            struct raw_out open_k = {o, 0, 0};
            raw_one(&open_k, t->tid, NULL, &r);
        }
    }
    /* Track names: the sealed chunks' (the newest per thread last), then live threads'. */
    size_t head = __atomic_load_n(&seal_head, __ATOMIC_ACQUIRE);
    size_t ns = __atomic_load_n(&nsealed, __ATOMIC_ACQUIRE);
    for (size_t i = 0; i < ns && i < pool_chunks; i++) {
        uint32_t idx = __atomic_load_n(&sealed[(head + i) % pool_chunks], __ATOMIC_RELAXED);
        if (idx < pool_chunks)
            raw_track(o, chunk_at(idx)->tid, chunk_at(idx)->name);
    }
    for (struct fnp_thread *t = fnp_thread_list(); t; t = t->next) {
        if (!__atomic_load_n(&t->in_use, __ATOMIC_ACQUIRE))
            continue;
        char name[16];
        fnp_trace_thread_name(t->tid, name);
        raw_track(o, t->tid, name);
    }
    fnp_raw_put(o, "W", 1);
    fnp_raw_put_u64(o, last_n);
    fnp_raw_put_u64(o, __atomic_load_n(&overwritten, __ATOMIC_RELAXED) + held_older);
    fnp_raw_put_u64(o, not_kept());
    fnp_raw_put_u64(o, fnp_clock_origin());
    fnp_raw_put_u64(o, (uint64_t)getpid());
}
