/* SPDX-License-Identifier: MIT */
/*
 * PROF_TRACE=FILE.pftrace: every call, streamed to a Perfetto file while the program runs
 * (docs/trace.md). The exit hook writes a call into its thread's chunk, 16 bytes; a full
 * chunk goes to the writer thread, which names the functions, turns the calls back into
 * slice begins and ends in time order, and appends them to the file. Memory is the chunks:
 * one per thread being filled, and a fixed total (PROF_TRACE_BUFFER MB) of them. When all
 * are full, a thread waits for the writer (back-pressure) for at most WAIT_MS; then its
 * calls are dropped and counted until a chunk is free again.
 *
 * Calls are kept when they end, so a chunk holds them in the order they ended; a call that
 * began in an earlier chunk must have had its begin written already, in time order. So a
 * chunk handed over carries the thread's open frames (node, start) in its tail: the writer
 * writes their begins with that chunk, and knows them when they end later.
 *
 * The file: fnp_write_file_atomic, run by the writer thread for the whole run; the bytes go
 * to FILE.fnprof-XXXXXX beside FILE, renamed over it at the end (docs/output-files.md: a
 * file whole or absent, and one that grows while the program runs).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "runtime.h"

#define DEFAULT_MB 64
#define WAIT_MS 2000
#define FATAL_WAIT_MS 5000
#define FATAL_STALL_MS 100

/* Chunks: the queue (pushed by any thread, taken whole by the writer), the free list
 * (under free_lock), how many exist and may. */
static struct fnp_stream_chunk *queue;
static struct fnp_stream_chunk *free_list;
static int free_lock;
static unsigned made, most;
static uint32_t queue_word, free_word, done_word; /* futex words */
static uint64_t next_track;
static int finishing;
static pthread_t writer;
static int writer_started, finished;
static char *path;
static int write_rc;
static uint64_t calls_written, calls_dropped;
/* For the fatal path: the writer's kernel thread id, 1 while it waits for chunks (idle,
 * not blocked), and a count it bumps as it gets on. */
static int writer_tid, writer_idle;
static uint32_t writer_progress;
static __thread int in_cold __attribute__((tls_model("initial-exec")));

static long futex(uint32_t *w, int op, uint32_t v, const struct timespec *ts)
{
    return syscall(SYS_futex, w, op, v, ts, NULL, 0);
}

static void wake(uint32_t *w)
{
    __atomic_add_fetch(w, 1, __ATOMIC_RELEASE);
    futex(w, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL);
}

static void wait_ms(uint32_t *w, uint32_t seen, long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    futex(w, FUTEX_WAIT_PRIVATE, seen, &ts);
}

/* 0 when the trace is being finished and the lock stays taken: its holder may be a
 * thread a fatal signal stopped inside it (the handler runs close_all), which would
 * leave the writer spinning here, running, and the handler waiting for it. */
static int lock_free_list(void)
{
    for (unsigned spins = 0; __atomic_exchange_n(&free_lock, 1, __ATOMIC_ACQUIRE); spins++) {
        if (spins >= 1000 && __atomic_load_n(&finishing, __ATOMIC_ACQUIRE))
            return 0;
        sched_yield();
    }
    return 1;
}

static void unlock_free_list(void)
{
    __atomic_store_n(&free_lock, 0, __ATOMIC_RELEASE);
}

/* Pages for a deep stack's open frames, kept for the next hand-off rather than unmapped
 * and mapped again: a recursion 100,000 deep hands over 1.6 MB of frames with every chunk,
 * and their page faults were a sixth of its program thread's time. A slot is taken and
 * given by compare-and-swap alone, so that a hand-off in a signal handler (close_all) may
 * use them; SPARE_DEEP bounds what they keep. */
#define SPARE_DEEP 4
enum { SPARE_EMPTY, SPARE_BUSY, SPARE_FULL };
static struct {
    uint32_t state;
    void *pages;
    size_t bytes;
} spare_deep[SPARE_DEEP];

/* Pages for at least bytes (*got: how many), or NULL. */
static void *deep_pages(size_t bytes, size_t *got)
{
    for (int i = 0; i < SPARE_DEEP; i++) {
        uint32_t full = SPARE_FULL;
        if (!__atomic_compare_exchange_n(&spare_deep[i].state, &full, SPARE_BUSY, 0,
                                         __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
            continue;
        void *p = spare_deep[i].pages;
        size_t b = spare_deep[i].bytes;
        __atomic_store_n(&spare_deep[i].state, SPARE_EMPTY, __ATOMIC_RELEASE);
        if (b >= bytes) {
            *got = b;
            return p;
        }
        munmap(p, b);
    }
    void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    *got = bytes;
    return m;
}

static void deep_pages_back(void *p, size_t bytes)
{
    for (int i = 0; i < SPARE_DEEP; i++) {
        uint32_t empty = SPARE_EMPTY;
        if (__atomic_compare_exchange_n(&spare_deep[i].state, &empty, SPARE_BUSY, 0,
                                        __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
            spare_deep[i].pages = p;
            spare_deep[i].bytes = bytes;
            __atomic_store_n(&spare_deep[i].state, SPARE_FULL, __ATOMIC_RELEASE);
            return;
        }
    }
    munmap(p, bytes);
}

static void give_back(struct fnp_stream_chunk *c)
{
    if (c->open_deep) {
        deep_pages_back(c->open_deep, c->open_bytes);
        c->open_deep = NULL;
    }
    if (!lock_free_list())
        return; /* the run is ending: the chunk is not needed again */
    c->next = free_list;
    free_list = c;
    unlock_free_list();
    wake(&free_word);
}

/* A new chunk, if fewer than cap were made (*m: how many were); NULL if not, or when no
 * memory is left (then not counted). */
static struct fnp_stream_chunk *make_one(unsigned cap, unsigned *m)
{
    *m = __atomic_load_n(&made, __ATOMIC_RELAXED);
    if (*m >= cap ||
        !__atomic_compare_exchange_n(&made, m, *m + 1, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        return NULL;
    struct fnp_stream_chunk *c = fnp_pages(sizeof(*c));
    if (!c)
        __atomic_sub_fetch(&made, 1, __ATOMIC_RELAXED);
    return c;
}

/* A free chunk, a new one while fewer than most exist, or (wait) one the writer frees
 * within WAIT_MS; else NULL. */
static struct fnp_stream_chunk *take(int wait)
{
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        uint32_t seen = __atomic_load_n(&free_word, __ATOMIC_ACQUIRE);
        if (!lock_free_list())
            return NULL;
        struct fnp_stream_chunk *c = free_list;
        if (c)
            free_list = c->next;
        unlock_free_list();
        unsigned m;
        if (c || (c = make_one(most, &m)) != NULL)
            return c;
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        long spent = (now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000;
        if (!wait || spent >= WAIT_MS || __atomic_load_n(&finishing, __ATOMIC_ACQUIRE))
            return NULL;
        wait_ms(&free_word, seen, WAIT_MS - spent);
    }
}

/* t's chunk to the writer, with t's open frames (all of them but ghosts: the frame of a
 * call being recorded now ends in the next chunk). own: t is this thread's; else t's owner
 * may still be in a hook (close_all): its fields are left alone, and what it writes still
 * lands below FNP_STREAM_OPEN_AT, in calls the writer does not read. */
static void send(struct fnp_thread *t, struct fnp_stream_chunk *c, uint32_t flags,
                 uint64_t close_at)
{
    size_t room = FNP_STREAM_RECS - FNP_STREAM_OPEN_AT, k = 0;
    uint32_t depth = __atomic_load_n(&t->depth, __ATOMIC_ACQUIRE);
    struct fnp_trace_ev *open = c->recs + FNP_STREAM_OPEN_AT;
    /* Deeper than the room (a deep recursion): every frame's begin is due before its end,
     * so the frames go to pages of their own rather than be cut (mmap: async-signal-safe,
     * as close_all may run in a handler). Only when that fails do the innermost go. */
    c->open_deep = NULL;
    if (depth > room) {
        size_t bytes = ((size_t)depth * sizeof(*open) + 4095) & ~(size_t)4095, got;
        void *m = deep_pages(bytes, &got);
        if (m) {
            c->open_deep = open = m;
            c->open_bytes = got;
            room = depth;
        }
    }
    for (uint32_t i = 0; i < depth && k < room; i++) {
        const struct fnp_node *node = t->frames[i].node;
        uint64_t t0 = t->frames[i].t0;
        if (!node || fnp_key_is_ghost(node->fn))
            continue;
        open[k++] = (struct fnp_trace_ev){node, (uint32_t)t0, (uint32_t)(t0 >> 32)};
    }
    c->nopen = k;
    c->flags = flags;
    c->close_at = close_at;
    c->tid = t->tid;
    if (flags & FNP_STREAM_ENDED)
        memcpy(c->name, t->name, sizeof(c->name));
    struct fnp_stream_chunk *head = __atomic_load_n(&queue, __ATOMIC_RELAXED);
    do
        c->next = head;
    while (!__atomic_compare_exchange_n(&queue, &head, c, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED));
    /* A queue that held chunks already had its wake, which the writer has yet to act on
     * (it takes the whole queue at once): a wake per chunk would only add context
     * switches (short threads by the thousand, each ending with a chunk). */
    if (!head)
        wake(&queue_word);
}

static void hand_off(struct fnp_thread *t, uint32_t flags, uint64_t close_at, int own)
{
    struct fnp_stream_chunk *c = t->stream;
    if (!c)
        return;
    c->n = (size_t)(__atomic_load_n(&t->trace_cur, __ATOMIC_ACQUIRE) - c->recs);
    if (own) {
        t->stream = NULL;
        t->trace_cur = t->trace_end = NULL;
    }
    send(t, c, flags, close_at);
}

/* The owner's claim on its stream state, for the cold path: 0 once close_all closed it
 * (the trace is being finished: calls are dropped from then on). */
static int claim_own(struct fnp_thread *t)
{
    int free_ = 0;
    if (!__atomic_compare_exchange_n(&t->stream_busy, &free_, 1, 0, __ATOMIC_SEQ_CST,
                                     __ATOMIC_SEQ_CST))
        return 0;
    if (__atomic_load_n(&finishing, __ATOMIC_SEQ_CST)) {
        __atomic_store_n(&t->stream_busy, 0, __ATOMIC_RELEASE);
        return 0;
    }
    return 1;
}

static void release_own(struct fnp_thread *t)
{
    __atomic_store_n(&t->stream_busy, 0, __ATOMIC_RELEASE);
}

FNP_NOINSTR void fnp_stream_add_cold(struct fnp_thread *t, const struct fnp_node *n, uint64_t t0,
                                     uint64_t t1)
{
    if (fnp_trace_put_cold(t, n, t0, t1) == 0)
        return;
    if (in_cold || !claim_own(t)) {
        /* a signal handler's call inside this path, or the trace is being closed */
        __atomic_store_n(&t->trace_dropped, t->trace_dropped + 1, __ATOMIC_RELAXED);
        return;
    }
    in_cold = 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    int had = t->stream != NULL;
    if (had)
        hand_off(t, 0, 0, 1);
    /* Waits only while the thread was keeping calls: once it dropped one for want of a
     * chunk, it tries again without waiting until it has one. */
    struct fnp_stream_chunk *c = take(had || !t->trace_dropped);
    if (!c) {
        __atomic_store_n(&t->trace_dropped, t->trace_dropped + 1, __ATOMIC_RELAXED);
    } else {
        if (!t->trace_track)
            t->trace_track = __atomic_add_fetch(&next_track, 1, __ATOMIC_RELAXED);
        c->track = t->trace_track;
        c->dropped = __atomic_exchange_n(&t->trace_dropped, 0, __ATOMIC_RELAXED);
        c->name[0] = 0;
        c->base = t1;
        t->trace_base = t1;
        t->trace_cur = c->recs;
        t->trace_end = c->recs + FNP_STREAM_OPEN_AT;
        t->stream = c;
        fnp_trace_put_cold(t, n, t0, t1);
    }
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    in_cold = 0;
    release_own(t);
}

void fnp_stream_thread_ended(struct fnp_thread *t)
{
    prctl(PR_GET_NAME, t->name, 0, 0, 0);
    if (in_cold || !claim_own(t))
        return; /* the trace is being finished: close_all has this thread's calls */
    in_cold = 1;
    if (t->stream)
        hand_off(t, FNP_STREAM_ENDED, 0, 1);
    else if (t->trace_track) {
        /* no call since its last chunk: an empty one says the track ended */
        struct fnp_stream_chunk *c = take(1);
        if (c) {
            c->track = t->trace_track;
            c->dropped = __atomic_exchange_n(&t->trace_dropped, 0, __ATOMIC_RELAXED);
            c->base = 0;
            t->stream = c;
            t->trace_cur = c->recs;
            hand_off(t, FNP_STREAM_ENDED, 0, 1);
        }
    }
    __atomic_add_fetch(&calls_dropped, __atomic_exchange_n(&t->trace_dropped, 0, __ATOMIC_RELAXED),
                       __ATOMIC_RELAXED);
    t->trace_track = 0;
    t->name[0] = 0;
    in_cold = 0;
    release_own(t);
}

/* ---- the writer thread ------------------------------------------------------------ */

static struct fnp_stream_chunk *pending;

/* The next chunk for the writer, oldest first; NULL once the run ended and all are in. */
static struct fnp_stream_chunk *next_chunk(void *ctx)
{
    (void)ctx;
    for (;;) {
        if (pending) {
            struct fnp_stream_chunk *c = pending;
            pending = c->next;
            return c;
        }
        uint32_t seen = __atomic_load_n(&queue_word, __ATOMIC_ACQUIRE);
        struct fnp_stream_chunk *c = __atomic_exchange_n(&queue, NULL, __ATOMIC_ACQUIRE);
        if (c) {
            /* pushed newest first: reversed, a thread's chunks come in their order */
            struct fnp_stream_chunk *r = NULL;
            while (c) {
                struct fnp_stream_chunk *nx = c->next;
                c->next = r;
                r = c;
                c = nx;
            }
            pending = r;
            continue;
        }
        if (__atomic_load_n(&finishing, __ATOMIC_ACQUIRE) == 2)
            return NULL;
        __atomic_store_n(&writer_idle, 1, __ATOMIC_RELEASE);
        wait_ms(&queue_word, seen, 100);
        __atomic_store_n(&writer_idle, 0, __ATOMIC_RELEASE);
    }
}

static void chunk_done(void *ctx, struct fnp_stream_chunk *c)
{
    (void)ctx;
    give_back(c);
    __atomic_add_fetch(&writer_progress, 1, __ATOMIC_RELAXED);
}

static int discard; /* before an exec that keeps no profile: the temporary goes */

static int write_stream(struct fnp_sink *s, void *ctx)
{
    (void)ctx;
    fnp_stream_write_all(s, next_chunk, chunk_done, NULL);
    return __atomic_load_n(&discard, __ATOMIC_ACQUIRE) ? -ECANCELED : 0;
}

static void *writer_main(void *arg)
{
    (void)arg;
    __atomic_store_n(&writer_tid, (int)syscall(SYS_gettid), __ATOMIC_RELEASE);
    fnp_mem_hold();
    int rc = fnp_write_file_atomic(path, write_stream, NULL);
    /* A failed write still took every chunk (the program never waits on a dead file). */
    __atomic_store_n(&write_rc, rc ? rc : 1, __ATOMIC_RELEASE);
    wake(&done_word);
    fnp_mem_release();
    return NULL;
}

static int start_writer(void)
{
    path = fnp_env_path(fnp_config.trace, 0);
    if (!path)
        return -ENOMEM;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&writer, NULL, writer_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc) {
        fnp_log("PROF_TRACE: cannot start the trace's writer thread: %s", strerror(rc));
        return -rc;
    }
    writer_started = 1;
    return 0;
}

int fnp_stream_init(void)
{
    uint64_t mb = fnp_config.trace_buffer_mb ? fnp_config.trace_buffer_mb : DEFAULT_MB;
    most = (unsigned)(mb * 1024 * 1024 / sizeof(struct fnp_stream_chunk));
    if (most < 2)
        most = 2;
    fnp_streaming = 1;
    int rc = start_writer();
    if (rc)
        fnp_streaming = 0;
    return rc;
}

static long ms_since(const struct timespec *t0)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - t0->tv_sec) * 1000 + (now.tv_nsec - t0->tv_nsec) / 1000000;
}

/* A chunk while the trace is being closed: a free one, a new one within the cap, one the
 * writer (still draining) frees before wait_ms_ since t0 passed, or then a new one within
 * twice the cap. */
static struct fnp_stream_chunk *take_closing(const struct timespec *t0, long wait_ms_)
{
    for (;;) {
        uint32_t seen = __atomic_load_n(&free_word, __ATOMIC_ACQUIRE);
        /* Tried, not waited for: a fatal signal may have stopped its holder for good. */
        struct fnp_stream_chunk *c = NULL;
        if (!__atomic_exchange_n(&free_lock, 1, __ATOMIC_ACQUIRE)) {
            if ((c = free_list) != NULL)
                free_list = c->next;
            unlock_free_list();
        }
        unsigned m;
        if (c || (c = make_one(most, &m)) != NULL)
            return c;
        long spent = ms_since(t0);
        if (spent >= wait_ms_ && m < 2 * most) {
            /* the writer is slow (a slow disk): one past the cap, as the track must end */
            __atomic_add_fetch(&made, 1, __ATOMIC_RELAXED);
            return fnp_pages(sizeof(*c));
        }
        if (spent >= wait_ms_)
            return NULL;
        wait_ms(&free_word, seen, wait_ms_ - spent < 100 ? wait_ms_ - spent : 100);
    }
}

/* Every live thread's chunk, its open frames ending at now, to the writer. Other threads
 * may still be in a hook (at exit recording stopped, but one under way finishes; before an
 * exec it goes on): as the exit dump does, this reads their records and never waits for
 * their hooks, whose writes land where the writer does not read (hand_off). Their cold
 * path, which moves chunks, is claimed first (stream_busy: 2 closes it for good), waiting
 * at most wait_ms for a thread inside it; a thread still there after that is left out. */
static void close_all(uint64_t now, long wait_ms_)
{
    __atomic_store_n(&finishing, 1, __ATOMIC_SEQ_CST);
    wake(&free_word);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    struct fnp_thread *self = fnp_tls;
    for (struct fnp_thread *t = fnp_thread_list(); t; t = t->next) {
        if (!__atomic_load_n(&t->in_use, __ATOMIC_ACQUIRE))
            continue;
        int busy = 0;
        while (!__atomic_compare_exchange_n(&t->stream_busy, &busy, 2, 0, __ATOMIC_SEQ_CST,
                                            __ATOMIC_SEQ_CST)) {
            if (busy == 2 || (t == self && in_cold))
                break; /* closed already; or this thread's own cold path, interrupted */
            if (ms_since(&t0) >= wait_ms_)
                break;
            sched_yield();
            busy = 0;
        }
        if (busy != 0)
            continue;
        __atomic_add_fetch(&calls_dropped, t->trace_dropped, __ATOMIC_RELAXED);
        if (t->stream) {
            hand_off(t, FNP_STREAM_FINAL, now, t == self);
        } else if (t->trace_track) {
            /* No chunk (its calls were being dropped), frames still open: an empty one,
             * freed by the writer meanwhile, ends the track. */
            struct fnp_stream_chunk *c = take_closing(&t0, wait_ms_);
            if (c) {
                c->track = t->trace_track;
                c->dropped = 0;
                c->base = 0;
                c->n = 0;
                send(t, c, FNP_STREAM_FINAL, now);
            }
        }
    }
    __atomic_store_n(&finishing, 2, __ATOMIC_RELEASE);
    wake(&queue_word);
}

void fnp_stream_finish(void)
{
    if (!fnp_streaming || !writer_started || __atomic_exchange_n(&finished, 1, __ATOMIC_ACQ_REL))
        return;
    close_all(fnp_clock_now(), 1000);
    pthread_join(writer, NULL);
    int rc = __atomic_load_n(&write_rc, __ATOMIC_ACQUIRE);
    if (discard)
        return;
    if (rc < 0)
        fnp_log("%s: cannot write the trace: %s", path, fnp_write_file_strerror(rc));
    else if (calls_dropped)
        fnp_log("%s: %llu calls were not traced (PROF_TRACE_BUFFER: the writer fell behind); "
                "the profile has them all",
                path, (unsigned long long)calls_dropped);
    else if (!fnp_config.quiet)
        fnp_log("wrote %s (%llu calls)", path, (unsigned long long)calls_written);
}

void fnp_stream_before_exec(int keep)
{
    if (!keep)
        __atomic_store_n(&discard, 1, __ATOMIC_RELEASE);
    fnp_stream_finish();
}

/* The writer's scheduling state from /proc (async-signal-safe: open, read, close): 'R'
 * running, 'D' in the disk, 'S' asleep (a futex: a lock), ...; 0 when unknown. */
static char writer_state(void)
{
    char p[64] = "/proc/self/task/", buf[256];
    char *q = p + strlen(p);
    char digits[16];
    int n = 0;
    for (unsigned v = (unsigned)__atomic_load_n(&writer_tid, __ATOMIC_ACQUIRE); v || !n; v /= 10)
        digits[n++] = (char)('0' + v % 10);
    while (n)
        *q++ = digits[--n];
    memcpy(q, "/stat", 6);
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t r = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (r <= 0)
        return 0;
    buf[r] = 0;
    /* "tid (comm) S ...": the comm may hold parentheses, the state follows the last ")" */
    char *e = strrchr(buf, ')');
    return e && e[1] == ' ' ? e[2] : 0;
}

/*
 * From a fatal signal's handler, in the dying thread. The writer finishes the file (it
 * names the functions: the symbolizer and malloc), and this waits for it, but never on
 * something the dying thread may hold: a crash inside malloc (a corrupt heap aborts there)
 * or under any lock of the program's leaves the writer asleep on it for good, and the
 * process would not die until the wait ran out. The writer cannot be made to do without
 * malloc (the symbolizer allocates), so the wait watches it instead: as long as it runs
 * or reads the disk, or hands chunks back, the file is coming (a slow disk, a first
 * symbolization: up to FATAL_WAIT_MS); asleep outside its own wait for chunks for
 * FATAL_STALL_MS with nothing done, it is blocked, most likely on the dying thread. Then
 * the temporary is removed (the file is whole or absent) and one line says so. Without
 * /proc to tell, no progress for ten times as long counts as blocked.
 */
void fnp_stream_on_fatal(void)
{
    if (!fnp_streaming || !writer_started || __atomic_exchange_n(&finished, 1, __ATOMIC_ACQ_REL))
        return;
    close_all(fnp_clock_now(), FATAL_STALL_MS);
    uint32_t progress = __atomic_load_n(&writer_progress, __ATOMIC_RELAXED);
    int stalled = 0;
    for (int waited = 0; waited < FATAL_WAIT_MS; waited += 10) {
        uint32_t seen = __atomic_load_n(&done_word, __ATOMIC_ACQUIRE);
        if (__atomic_load_n(&write_rc, __ATOMIC_ACQUIRE))
            return;
        wait_ms(&done_word, seen, 10);
        uint32_t now = __atomic_load_n(&writer_progress, __ATOMIC_RELAXED);
        char st = writer_state();
        int idle = __atomic_load_n(&writer_idle, __ATOMIC_ACQUIRE);
        if (now != progress || idle || st == 'R' || st == 'D')
            stalled = 0;
        else
            stalled += 10;
        progress = now;
        if (stalled >= (st ? FATAL_STALL_MS : 10 * FATAL_STALL_MS))
            break;
    }
    if (__atomic_load_n(&write_rc, __ATOMIC_ACQUIRE))
        return;
    fnp_write_file_abandon();
    static const char what[] = "fnprof: PROF_TRACE: the trace's writer is blocked (by the "
                               "dying thread?): ";
    static const char left[] = " not written\n";
    int fd = fnp_log_fd(); /* fd 2 only while it is still the stderr fnprof started with */
    if (fd < 0)
        return;
    ssize_t ignored = write(fd, what, sizeof(what) - 1);
    if (path)
        ignored = write(fd, path, strlen(path));
    ignored = write(fd, left, sizeof(left) - 1);
    (void)ignored;
}

void fnp_stream_after_fork(void)
{
    /* The parent's chunks and writer are not the child's: the child starts its own file
     * (fnp_env_path names it apart), with a pool of its own. */
    queue = NULL;
    free_list = NULL;
    pending = NULL;
    free_lock = 0;
    made = 0;
    finishing = 0;
    finished = 0;
    write_rc = 0;
    discard = 0;
    calls_written = calls_dropped = 0;
    writer_started = 0;
    writer_idle = 0;
    in_cold = 0;
    if (fnp_tls)
        fnp_tls->stream_busy = 0;
    free(path);
    path = NULL;
    fnp_stream_write_after_fork();
    if (fnp_streaming && start_writer() != 0)
        finishing = 2; /* no writer: calls are dropped, counted */
}

void fnp_stream_count(uint64_t written)
{
    __atomic_add_fetch(&calls_written, written, __ATOMIC_RELAXED);
}
