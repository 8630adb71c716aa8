/* SPDX-License-Identifier: MIT */
/*
 * PROF_TRACE: a timeline of every recorded call, written at exit as a Chrome trace
 * (profile/trace_write.c, docs/trace.md). A call is kept when it ends, as (node, start,
 * end), in chunks of the thread's own: the exit hook stores three words and bumps a
 * pointer. The calls kept are bounded by PROF_TRACE_EVENTS over all threads, and so are
 * the calls the file holds, the open ones at exit included (bound); past it, calls are
 * counted as dropped, which the file and stderr say. The pstats numbers do not
 * depend on any of this.
 *
 * A thread that ends hands its state to the next new thread (thread.c), as without a
 * trace: its calls are first copied off the state into a record of its own (its track's
 * id and name), packed in a store shared by all threads. So short threads by the hundred
 * thousand cost the calls they keep, 24 bytes each, and a record each only while there
 * are calls to keep (or, without calls, as many records as PROF_TRACE_EVENTS allows).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "runtime.h"

#define CHUNK_EVENTS 4096
#define FIRST_CHUNK_EVENTS 168 /* a chunk of one page */
#define MIN_CHUNK_EVENTS 16
#define DEFAULT_EVENTS 1000000

struct fnp_trace_chunk {
    struct fnp_trace_chunk *next;
    size_t n; /* records in use; for the newest chunk, trace_cur tells */
    size_t cap;
    uint64_t base; /* the ticks its first record's end counts from */
    struct fnp_trace_ev recs[];
};

/* The calls of a thread that ended, in the order they ended. */
struct ended_track {
    struct ended_track *next; /* newest first, published with release */
    int tid;
    char name[16];
    size_t n;
    struct fnp_trace_rec recs[];
};

/* Ended threads' tracks: the list, the store they are packed in, how many hold no call.
 * Written under store_lock by ending threads; read by fnp_trace_finish once it closed the
 * trace to them (closed, then no thread still retiring). */
static struct ended_track *ended;
static struct fnp_arena store;
static uint64_t ended_empty;
static int store_lock;
static int closed;
static unsigned retiring;
static __thread int retiring_here __attribute__((tls_model("initial-exec")));

int fnp_tracing;
int fnp_streaming;

static uint64_t budget; /* events that may still be kept */
static uint64_t limit;

int fnp_trace_init(void)
{
    if (fnp_clock_kind == FNP_CLOCK_NONE) {
        fnp_log("PROF_TRACE: a count-only run (PROF_TIMER=none) has no times to draw; no "
                "trace");
        return -EINVAL;
    }
    limit = fnp_config.trace_events ? fnp_config.trace_events : DEFAULT_EVENTS;
    budget = limit;
    if (fnp_config.trace_last) {
        if (fnp_config.trace_last == UINT64_MAX)
            return -EINVAL; /* a bad value, said by env.c */
        /* The flight recorder's file is written whole when asked for, named in the
         * process or by `fnprof symbolize` after a fatal signal: as Chrome JSON, or a
         * Perfetto file by its extension; never streamed. */
        if (fnp_config.trace_events)
            fnp_log("PROF_TRACE_EVENTS=%llu: PROF_TRACE_LAST=%llu keeps the last calls "
                    "instead; PROF_TRACE_EVENTS ignored",
                    (unsigned long long)fnp_config.trace_events,
                    (unsigned long long)fnp_config.trace_last);
        limit = fnp_config.trace_last;
        int rc = fnp_ring_init(fnp_config.trace_last);
        if (rc)
            return rc;
        fnp_tracing = 1;
        return 0;
    }
    if (fnp_trace_path_is_perfetto(fnp_config.trace)) {
        int rc = fnp_stream_init();
        if (rc)
            return rc;
    }
    fnp_tracing = 1;
    return 0;
}

static size_t chunk_bytes(size_t cap)
{
    return sizeof(struct fnp_trace_chunk) + cap * sizeof(struct fnp_trace_ev);
}

/* A chunk for take calls: the one an earlier thread left on this state when it is big
 * enough, else a new mapping. */
static struct fnp_trace_chunk *new_chunk(struct fnp_thread *t, size_t take)
{
    struct fnp_trace_chunk *c = t->trace_spare;
    t->trace_spare = NULL;
    if (c && c->cap >= take) {
        c->next = NULL;
        c->n = 0;
        return c;
    }
    if (c)
        munmap(c, chunk_bytes(c->cap));
    if ((c = fnp_pages(chunk_bytes(take))) != NULL)
        c->cap = take;
    return c;
}

int fnp_trace_put_cold(struct fnp_thread *t, const struct fnp_node *n, uint64_t t0, uint64_t t1)
{
    uint64_t end = t1 - t->trace_base, dur = t1 - t0;
    size_t need = 1 + (end >> 32 != 0) + (dur >> 32 != 0);
    struct fnp_trace_ev *r = t->trace_cur;
    if (!r || (size_t)(t->trace_end - r) < need)
        return -1;
    if (end >> 32) {
        *r++ = (struct fnp_trace_ev){FNP_TRACE_BASE, (uint32_t)t1, (uint32_t)(t1 >> 32)};
        t->trace_base = t1;
        end = 0;
    }
    if (dur >> 32) {
        *r++ = (struct fnp_trace_ev){FNP_TRACE_LONG, (uint32_t)t0, (uint32_t)(t0 >> 32)};
        dur = UINT32_MAX;
    }
    *r++ = (struct fnp_trace_ev){n, (uint32_t)end, (uint32_t)dur};
    t->trace_cur = r;
    return 0;
}

size_t fnp_trace_unpack(const struct fnp_trace_ev *ev, size_t n, uint64_t *base,
                        struct fnp_trace_rec *out)
{
    size_t k = 0;
    uint64_t b = *base, start = 0;
    int long_call = 0;
    for (size_t i = 0; i < n; i++) {
        const struct fnp_trace_ev *e = &ev[i];
        uint64_t whole = e->end | (uint64_t)e->dur << 32;
        if (e->node == FNP_TRACE_BASE) {
            b = whole;
        } else if (e->node == FNP_TRACE_LONG) {
            start = whole;
            long_call = 1;
        } else {
            uint64_t t1 = b + e->end;
            out[k++] = (struct fnp_trace_rec){e->node, long_call ? start : t1 - e->dur, t1};
            long_call = 0;
        }
    }
    *base = b;
    return k;
}

static FNP_NOINSTR void add_cold(struct fnp_thread *t, const struct fnp_node *n, uint64_t t0,
                                 uint64_t t1)
{
    if (fnp_ring) {
        fnp_ring_add_cold(t, n, t0, t1);
        return;
    }
    if (fnp_streaming) {
        fnp_stream_add_cold(t, n, t0, t1);
        return;
    }
    if (fnp_trace_put_cold(t, n, t0, t1) == 0)
        return;
    /* A thread's chunks grow from one page to CHUNK_EVENTS, and none takes more than a
     * sixteenth of what is left: a thread that makes few calls holds back little of the
     * budget for calls it never makes (and gives it back when it ends). */
    size_t want =
        t->trace_chunks ? (size_t)(t->trace_end - t->trace_chunks->recs) * 2 : FIRST_CHUNK_EVENTS;
    if (want > CHUNK_EVENTS)
        want = CHUNK_EVENTS;
    uint64_t left = __atomic_load_n(&budget, __ATOMIC_RELAXED), take;
    do {
        take = left / 16 > MIN_CHUNK_EVENTS ? left / 16 : MIN_CHUNK_EVENTS;
        take = take < want ? take : want;
        take = take < left ? take : left;
    } while (take && !__atomic_compare_exchange_n(&budget, &left, left - take, 1, __ATOMIC_RELAXED,
                                                  __ATOMIC_RELAXED));
    struct fnp_trace_chunk *c = take >= 3 ? new_chunk(t, take) : NULL;
    if (!c) {
        if (take) /* no memory: the events go back for other threads */
            __atomic_add_fetch(&budget, take, __ATOMIC_RELAXED);
        __atomic_store_n(&t->trace_dropped, t->trace_dropped + 1, __ATOMIC_RELAXED);
        return;
    }
    if (t->trace_chunks)
        t->trace_chunks->n = (size_t)(t->trace_cur - t->trace_chunks->recs);
    c->next = t->trace_chunks;
    c->base = t1;
    t->trace_base = t1;
    t->trace_cur = c->recs;
    t->trace_end = c->recs + take;
    __atomic_store_n(&t->trace_chunks, c, __ATOMIC_RELEASE);
    fnp_trace_put_cold(t, n, t0, t1);
}

/* A call of a signal handler that interrupted a store or this very path (trace_nest) is
 * counted, not kept: a chunk taken or sealed under the interrupted code would leave it
 * writing where the thread's chunk no longer is, or waiting for a lock it holds itself. */
FNP_NOINSTR void fnp_trace_add_cold(struct fnp_thread *t, const struct fnp_node *n, uint64_t t0,
                                    uint64_t t1)
{
    if (t->trace_nest) {
        __atomic_store_n(&t->trace_dropped, t->trace_dropped + 1, __ATOMIC_RELAXED);
        return;
    }
    t->trace_nest = 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    add_cold(t, n, t0, t1);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    t->trace_nest = 0;
}

static void lock_store(void)
{
    while (__atomic_exchange_n(&store_lock, 1, __ATOMIC_ACQUIRE))
        sched_yield();
}

static void unlock_store(void)
{
    __atomic_store_n(&store_lock, 0, __ATOMIC_RELEASE);
}

static size_t chunk_used(const struct fnp_thread *t, const struct fnp_trace_chunk *c)
{
    return c == t->trace_chunks ? (size_t)(t->trace_cur - c->recs) : c->n;
}

/* Moves t's calls into a track of their own, and leaves t without a call, its newest
 * chunk kept for the next thread. 0, or -ENOMEM (t keeps its calls). */
static int retire(struct fnp_thread *t)
{
    size_t n = 0, k;
    for (const struct fnp_trace_chunk *c = t->trace_chunks; c; c = c->next)
        n += chunk_used(t, c); /* records: at least the calls */
    if (n || __atomic_load_n(&ended_empty, __ATOMIC_RELAXED) < limit) {
        lock_store();
        struct ended_track *e =
            fnp_arena_alloc(&store, sizeof(*e) + n * sizeof(struct fnp_trace_rec));
        if (!e) {
            unlock_store();
            return -ENOMEM;
        }
        /* The chunks are newest first: unpacked oldest first, so that the calls are in
         * the order they ended. */
        size_t nchunks = 0;
        for (const struct fnp_trace_chunk *c = t->trace_chunks; c; c = c->next)
            nchunks++;
        k = 0;
        for (size_t skip = nchunks; skip-- > 0;) {
            const struct fnp_trace_chunk *c = t->trace_chunks;
            for (size_t j = 0; j < skip; j++)
                c = c->next;
            uint64_t base = c->base;
            k += fnp_trace_unpack(c->recs, chunk_used(t, c), &base, e->recs + k);
        }
        n = k;
        e->tid = t->tid;
        memcpy(e->name, t->name, sizeof(e->name));
        e->n = n;
        e->next = ended;
        __atomic_store_n(&ended, e, __ATOMIC_RELEASE);
        if (!n)
            ended_empty++;
        unlock_store();
    }
    struct fnp_trace_chunk *c = t->trace_chunks;
    __atomic_store_n(&t->trace_chunks, NULL, __ATOMIC_RELEASE);
    t->trace_cur = t->trace_end = NULL;
    t->name[0] = 0;
    if (c) {
        for (struct fnp_trace_chunk *o = c->next, *next; o; o = next) {
            next = o->next;
            munmap(o, chunk_bytes(o->cap));
        }
        if (t->trace_spare)
            munmap(t->trace_spare, chunk_bytes(t->trace_spare->cap));
        t->trace_spare = c;
    }
    return 0;
}

int fnp_trace_thread_ended(struct fnp_thread *t)
{
    if (fnp_ring) {
        fnp_ring_thread_ended(t);
        return 1;
    }
    if (fnp_streaming) {
        fnp_stream_thread_ended(t);
        return 1;
    }
    prctl(PR_GET_NAME, t->name, 0, 0, 0);
    /* The rest of its chunk goes back for the threads still running. */
    if (t->trace_chunks && t->trace_end > t->trace_cur) {
        __atomic_add_fetch(&budget, (uint64_t)(t->trace_end - t->trace_cur), __ATOMIC_RELAXED);
        t->trace_end = t->trace_cur;
    }
    /* Not once the trace is being written (fnp_trace_finish waits for those under way). */
    int ok = 0;
    retiring_here = 1;
    __atomic_add_fetch(&retiring, 1, __ATOMIC_SEQ_CST);
    if (!__atomic_load_n(&closed, __ATOMIC_SEQ_CST))
        ok = retire(t) == 0;
    __atomic_sub_fetch(&retiring, 1, __ATOMIC_SEQ_CST);
    retiring_here = 0;
    return ok;
}

void fnp_trace_after_fork(void)
{
    if (fnp_ring)
        fnp_ring_after_fork();
    if (fnp_streaming)
        fnp_stream_after_fork();
    /* The parent's threads are not the child's (thread.c forgets their states too). */
    ended = NULL;
    ended_empty = 0;
    store = (struct fnp_arena){0};
    store_lock = 0;
    retiring = 0;
    retiring_here = 0;
}

/* No thread moves its calls after this; one under way finishes first (but this thread's
 * own, should a signal have brought it here in the middle of one). */
static void close_to_ended(void)
{
    __atomic_store_n(&closed, 1, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(&retiring, __ATOMIC_SEQ_CST) > (unsigned)retiring_here)
        sched_yield();
}

/* A live thread's name, from /proc (open and read are async-signal-safe). */
void fnp_trace_thread_name(int tid, char name[16])
{
    char path[64] = "/proc/self/task/";
    char digits[16];
    size_t n = 0, at = strlen(path);
    unsigned v = (unsigned)tid;
    do
        digits[n++] = (char)('0' + v % 10);
    while ((v /= 10) && n < sizeof(digits));
    while (n)
        path[at++] = digits[--n];
    memcpy(path + at, "/comm", 6);
    name[0] = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t r = read(fd, name, 15);
    close(fd);
    r = r < 0 ? 0 : r;
    name[r] = 0;
    if (r > 0 && name[r - 1] == '\n')
        name[r - 1] = 0;
}

/* The program's file name (no directory) in exe: the trace's process name. */
const char *fnp_trace_process(char *exe, size_t size)
{
    ssize_t len = readlink("/proc/self/exe", exe, size - 1);
    exe[len > 0 ? len : 0] = 0;
    const char *base = strrchr(exe, '/');
    return base ? base + 1 : exe;
}

/* Writes t to path whole, as this process's (its pid, name and clock): the exit trace's
 * and the flight recording's one way to a file. */
static int write_trace(const char *path, fnp_write_fn write, struct fnp_trace *t)
{
    char exe[256];
    t->pid = (int)getpid();
    t->process = fnp_trace_process(exe, sizeof(exe));
    t->tick_seconds = fnp_clock_tick_seconds();
    return fnp_write_file_atomic(path, write, t);
}

/* Ticks since recording began: the trace's time 0. */
static uint64_t since(uint64_t ticks)
{
    uint64_t origin = fnp_clock_origin();
    return ticks > origin ? ticks - origin : 0;
}

struct rank {
    size_t at;    /* the event's index */
    int kept;     /* 0 for a call still open at exit, which comes first */
    uint64_t key; /* its start (open) or its end (kept): earlier first */
};

static int by_rank(const void *a, const void *b)
{
    const struct rank *x = a, *y = b;
    if (x->kept != y->kept)
        return x->kept - y->kept;
    return x->key < y->key ? -1 : x->key > y->key;
}

/* At most limit events of the k collected (open[i]: event i is a call still open at exit),
 * so that the file holds no more calls than PROF_TRACE_EVENTS, open ones included: those
 * open at exit come first (the outermost, which started first, before the others), as
 * they show what was running; then the kept calls that ended first. The others are
 * counted in *dropped. The events keep their order. Returns their number, or -ENOMEM. */
static ptrdiff_t bound(struct fnp_trace_event *ev, const struct fnp_node **nd, const uint8_t *open,
                       size_t k, uint64_t *dropped)
{
    if (k <= limit)
        return (ptrdiff_t)k;
    struct rank *r = malloc(k * sizeof(*r));
    uint8_t *keep = calloc(k, 1);
    if (!r || !keep) {
        free(r);
        free(keep);
        return -ENOMEM;
    }
    for (size_t i = 0; i < k; i++)
        r[i] = (struct rank){i, !open[i], open[i] ? ev[i].start : ev[i].end};
    qsort(r, k, sizeof(*r), by_rank);
    for (size_t i = 0; i < limit; i++)
        keep[r[i].at] = 1;
    size_t m = 0;
    for (size_t i = 0; i < k; i++)
        if (keep[i]) {
            ev[m] = ev[i];
            nd[m++] = nd[i];
        }
    *dropped += k - m;
    free(r);
    free(keep);
    return (ptrdiff_t)m;
}

/* Every kept call, and every call still open (ending now), as events whose func holds
 * the node's key until named, at most PROF_TRACE_EVENTS of them (bound); the tracks,
 * one per thread state. */
static int collect(struct fnp_trace_event **out, size_t *nout, const struct fnp_node ***nodes,
                   struct fnp_trace_track **tracks, size_t *ntracks, char (**names)[16],
                   uint64_t *dropped, uint64_t now)
{
    size_t n = 0, nt = 0;
    for (const struct ended_track *e = __atomic_load_n(&ended, __ATOMIC_ACQUIRE); e; e = e->next) {
        nt++;
        n += e->n;
    }
    for (struct fnp_thread *t = fnp_thread_list(); t; t = t->next) {
        nt++;
        n += __atomic_load_n(&t->depth, __ATOMIC_ACQUIRE);
        for (struct fnp_trace_chunk *c = t->trace_chunks; c; c = c->next)
            n += c == t->trace_chunks ? (size_t)(t->trace_cur - c->recs) : c->n;
    }
    struct fnp_trace_event *ev = malloc((n ? n : 1) * sizeof(*ev));
    const struct fnp_node **nd = malloc((n ? n : 1) * sizeof(*nd));
    struct fnp_trace_track *tr = calloc(nt ? nt : 1, sizeof(*tr));
    char(*nm)[16] = calloc(nt ? nt : 1, sizeof(*nm));
    uint8_t *open = calloc(n ? n : 1, 1);
    *out = ev;
    *nodes = nd;
    *tracks = tr;
    *names = nm;
    if (!ev || !nd || !tr || !nm || !open) {
        free(open);
        return -ENOMEM;
    }
    size_t k = 0, track = 0;
    *dropped = 0;
    for (struct fnp_thread *t = fnp_thread_list(); t; t = t->next) {
        if (!__atomic_load_n(&t->in_use, __ATOMIC_ACQUIRE)) {
            /* its threads' calls are on ended tracks (retire), its drops still here */
            *dropped += __atomic_load_n(&t->trace_dropped, __ATOMIC_RELAXED);
            continue;
        }
        /* Oldest chunk first and, after them, open calls innermost first: calls in the
         * order they ended, which the writer uses to order calls of equal times. */
        size_t nchunks = 0;
        for (struct fnp_trace_chunk *c = t->trace_chunks; c; c = c->next)
            nchunks++;
        for (size_t skip = nchunks; skip-- > 0;) {
            struct fnp_trace_chunk *c = t->trace_chunks;
            for (size_t j = 0; j < skip; j++)
                c = c->next;
            size_t used = c == t->trace_chunks ? (size_t)(t->trace_cur - c->recs) : c->n;
            uint64_t base = c->base;
            for (size_t i = 0; i < used && k < n; i++) {
                /* a LONG record and the call it starts unpack together */
                size_t take = c->recs[i].node == FNP_TRACE_LONG && i + 1 < used ? 2 : 1;
                struct fnp_trace_rec r;
                if (!fnp_trace_unpack(&c->recs[i], take, &base, &r))
                    continue;
                i += take - 1;
                ev[k] = (struct fnp_trace_event){since(r.t0), since(r.t1), 0, (uint32_t)track};
                nd[k++] = r.node;
            }
        }
        uint32_t depth = __atomic_load_n(&t->depth, __ATOMIC_ACQUIRE);
        for (uint32_t i = depth; i-- > 0 && k < n;) {
            const struct fnp_node *node = t->frames[i].node;
            if (!node || fnp_key_is_ghost(node->fn))
                continue;
            ev[k] =
                (struct fnp_trace_event){since(t->frames[i].t0), since(now), 0, (uint32_t)track};
            open[k] = 1;
            nd[k++] = node;
        }
        *dropped += __atomic_load_n(&t->trace_dropped, __ATOMIC_RELAXED);
        if (t->name[0])
            memcpy(nm[track], t->name, sizeof(nm[track]));
        else
            fnp_trace_thread_name(t->tid, nm[track]);
        tr[track] = (struct fnp_trace_track){t->tid, nm[track][0] ? nm[track] : NULL};
        track++;
    }
    for (const struct ended_track *e = __atomic_load_n(&ended, __ATOMIC_ACQUIRE); e;
         e = e->next, track++) {
        for (size_t i = 0; i < e->n && k < n; i++, k++) {
            ev[k] = (struct fnp_trace_event){since(e->recs[i].t0), since(e->recs[i].t1), 0,
                                             (uint32_t)track};
            nd[k] = e->recs[i].node;
        }
        memcpy(nm[track], e->name, sizeof(nm[track]));
        tr[track] = (struct fnp_trace_track){e->tid, nm[track][0] ? nm[track] : NULL};
    }
    ptrdiff_t kept = bound(ev, nd, open, k, dropped);
    free(open);
    if (kept < 0)
        return -ENOMEM;
    *nout = (size_t)kept;
    *ntracks = track;
    return 0;
}

/* A trace's names: a profile built as the dump builds one, with the run's metadata. */
static int build_named(struct fnp_profile *p, struct fnp_raw *r, void *ctx)
{
    (void)ctx;
    int rc = fnp_dump_build(p, r);
    return rc ? rc : fnp_meta_fill(p);
}

/* Names the keys of the events: one root per distinct key, built like a profile. */
static int name_events(struct fnp_profile *prof, struct fnp_trace_event *ev,
                       const struct fnp_node **nd, size_t n, uint8_t **is_region)
{
    uint64_t *key = malloc((n ? n : 1) * sizeof(*key));
    uint32_t *func = malloc((n ? n : 1) * sizeof(*func));
    int rc = key && func ? 0 : -ENOMEM;
    for (size_t i = 0; i < n && !rc; i++)
        key[i] = nd[i]->fn;
    const struct fnp_raw tmpl = {.tick_seconds = 1};
    if (!rc)
        rc = fnp_profile_name_keys(prof, &tmpl, key, n, func, build_named, NULL);
    if (!rc && !(*is_region = calloc(prof->nfuncs ? prof->nfuncs : 1, 1)))
        rc = -ENOMEM;
    for (size_t i = 0; i < n && !rc; i++) {
        ev[i].func = func[i];
        if (fnp_key_is_region(key[i]))
            (*is_region)[func[i]] = fnp_region_is_frame(key[i]) ? 2 : 1;
    }
    free(key);
    free(func);
    return rc;
}

void fnp_trace_finish(void)
{
    if (!fnp_tracing)
        return;
    if (fnp_ring) {
        fnp_trace_dump(fnp_config.quiet);
        return;
    }
    if (fnp_streaming) {
        fnp_stream_finish();
        return;
    }
    close_to_ended();
    uint64_t now = fnp_clock_now();
    struct fnp_trace_event *ev = NULL;
    const struct fnp_node **nd = NULL;
    struct fnp_trace_track *tracks = NULL;
    char(*names)[16] = NULL;
    uint8_t *is_region = NULL;
    size_t n = 0, ntracks = 0;
    uint64_t dropped = 0;
    struct fnp_profile prof;
    fnp_profile_init(&prof);
    char *path = fnp_env_path(fnp_config.trace, 0);
    int rc = path ? collect(&ev, &n, &nd, &tracks, &ntracks, &names, &dropped, now) : -ENOMEM;
    if (!rc)
        rc = name_events(&prof, ev, nd, n, &is_region);
    struct fnp_trace tr = {.prof = &prof,
                           .events = ev,
                           .nevents = n,
                           .tracks = tracks,
                           .ntracks = ntracks,
                           .is_region = is_region,
                           .dropped = dropped,
                           .limit = limit};
    if (!rc)
        rc = write_trace(path, fnp_trace_write_fn, &tr);
    if (rc)
        fnp_log("%s: cannot write the trace: %s", path ? path : fnp_config.trace,
                fnp_write_file_strerror(rc));
    else if (dropped)
        fnp_log("%s: the trace holds %llu calls; %llu more were not traced "
                "(PROF_TRACE_EVENTS=%llu); the profile has them all",
                path, (unsigned long long)(n), (unsigned long long)dropped,
                (unsigned long long)limit);
    else if (!fnp_config.quiet)
        fnp_log("wrote %s (%zu calls, %zu thread%s)", path, n, ntracks, ntracks == 1 ? "" : "s");
    fnp_profile_free(&prof);
    free(ev);
    free(nd);
    free(tracks);
    free(names);
    free(is_region);
    free(path);
}

/* ---- PROF_TRACE_LAST: the flight recording, written from the process ------------------ */

static int by_end(const void *a, const void *b)
{
    const struct fnp_ring_call *x = a, *y = b;
    if (x->rec.t1 != y->rec.t1)
        return x->rec.t1 < y->rec.t1 ? -1 : 1;
    /* Equal ends: the order the ring gave (a thread's calls in the order they ended). */
    return x < y ? -1 : x > y;
}

static size_t track_of(struct fnp_trace_track *tr, char (*nm)[16], size_t *nt, int tid,
                       const char *name)
{
    size_t k = 0;
    while (k < *nt && tr[k].tid != tid)
        k++;
    if (k == *nt) {
        (*nt)++;
        tr[k] = (struct fnp_trace_track){tid, NULL};
        nm[k][0] = 0;
    }
    if (name && name[0]) { /* a later chunk's name is the thread's newer name */
        memcpy(nm[k], name, sizeof(nm[k]));
        nm[k][15] = 0;
        tr[k].name = nm[k];
    }
    return k;
}

/* The flight recording to PROF_TRACE: at exit, on PROF_DUMP_SIGNAL, from fnprof_dump. The
 * window's calls (trace_ring.c), the calls still open ending now; named as the exit trace
 * names its calls, written by the same writer. */
static int write_ring(const char *path, uint64_t now, size_t *nended, size_t *nopen_out,
                      struct fnp_ring_calls *w)
{
    *w = (struct fnp_ring_calls){0};
    /* The pool's lock is held through the collection: a signal handler's calls on this
     * thread meanwhile are counted, not kept (fnp_trace_add_cold), rather than wait for it. */
    struct fnp_thread *self = fnp_tls;
    uint32_t was = self ? self->trace_nest : 0;
    if (self)
        self->trace_nest = 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    int err = fnp_ring_collect(w, now);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (self)
        self->trace_nest = was;
    if (err)
        return err;
    qsort(w->calls, w->n, sizeof(*w->calls), by_end);
    /* The pool holds N calls and some chunks more: the N that ended last stay. */
    size_t from = w->n > w->last ? w->n - (size_t)w->last : 0;
    w->overwritten += from;
    size_t nopen = 0, nthreads = 0;
    for (struct fnp_thread *t = fnp_thread_list(); t; t = t->next, nthreads++)
        if (__atomic_load_n(&t->in_use, __ATOMIC_ACQUIRE))
            nopen += __atomic_load_n(&t->depth, __ATOMIC_ACQUIRE);
    size_t cap = w->n - from + nopen, maxtracks = w->n - from + nthreads;
    struct fnp_trace_event *ev = malloc((cap ? cap : 1) * sizeof(*ev));
    const struct fnp_node **nd = malloc((cap ? cap : 1) * sizeof(*nd));
    struct fnp_trace_track *tr = calloc(maxtracks ? maxtracks : 1, sizeof(*tr));
    char(*nm)[16] = calloc(maxtracks ? maxtracks : 1, sizeof(*nm));
    uint8_t *is_region = NULL;
    struct fnp_profile prof;
    fnp_profile_init(&prof);
    err = ev && nd && tr && nm ? 0 : -ENOMEM;
    size_t k = 0, nt = 0;
    for (size_t i = from; i < w->n && !err; i++) {
        const struct fnp_ring_call *c = &w->calls[i];
        if (!c->rec.node || fnp_key_is_ghost(c->rec.node->fn))
            continue;
        size_t track = track_of(tr, nm, &nt, c->tid, c->name);
        ev[k] = (struct fnp_trace_event){since(c->rec.t0), since(c->rec.t1), 0, (uint32_t)track};
        nd[k++] = c->rec.node;
    }
    *nended = k;
    for (struct fnp_thread *t = fnp_thread_list(); t && !err; t = t->next) {
        if (!__atomic_load_n(&t->in_use, __ATOMIC_ACQUIRE))
            continue;
        char name[16];
        fnp_trace_thread_name(t->tid, name);
        size_t track = track_of(tr, nm, &nt, t->tid, name);
        uint32_t depth = __atomic_load_n(&t->depth, __ATOMIC_ACQUIRE);
        for (uint32_t i = depth; i-- > 0 && k < cap;) {
            const struct fnp_node *node = t->frames[i].node;
            if (!node || fnp_key_is_ghost(node->fn))
                continue;
            ev[k] =
                (struct fnp_trace_event){since(t->frames[i].t0), since(now), 0, (uint32_t)track};
            nd[k++] = node;
        }
    }
    if (!err)
        err = name_events(&prof, ev, nd, k, &is_region);
    struct fnp_trace t = {.prof = &prof,
                          .events = ev,
                          .nevents = k,
                          .tracks = tr,
                          .ntracks = nt,
                          .is_region = is_region,
                          .dropped = w->not_kept,
                          .limit = w->last,
                          .last = w->last,
                          .overwritten = w->overwritten};
    if (!err)
        err = write_trace(
            path,
            fnp_trace_path_is_perfetto(path) ? fnp_trace_write_pftrace_fn : fnp_trace_write_fn, &t);
    *nopen_out = k - *nended;
    fnp_profile_free(&prof);
    free(ev);
    free(nd);
    free(tr);
    free(nm);
    free(is_region);
    free(w->calls);
    w->calls = NULL;
    return err;
}

void fnp_trace_dump(int quiet)
{
    if (!fnp_ring)
        return;
    char *path = fnp_env_path(fnp_config.trace, 0);
    size_t n = 0, open = 0;
    struct fnp_ring_calls info;
    int rc = path ? write_ring(path, fnp_clock_now(), &n, &open, &info) : -ENOMEM;
    if (rc)
        fnp_log("%s: cannot write the flight recording: %s", path ? path : fnp_config.trace,
                fnp_write_file_strerror(rc));
    else if (info.not_kept) /* never silent, as the exit trace's drops */
        fnp_log("%s: the flight recording holds the last %zu calls; %llu were not traced "
                "(every chunk was another thread's, or a signal handler's calls interrupted "
                "the recording of another)",
                path, n, (unsigned long long)info.not_kept);
    else if (!quiet)
        fnp_log("wrote %s (flight recording: the last %zu calls, %zu still running; %llu older "
                "ones overwritten)",
                path, n, open, (unsigned long long)info.overwritten);
    free(path);
}
