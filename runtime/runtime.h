/* SPDX-License-Identifier: MIT */
/*
 * runtime/: the in-process collector behind __cyg_profile_func_enter/exit.
 *
 * Data flow: hooks.c (entry points) -> the per-thread calling-context tree (cct.c, with its
 * hot path inline below) -> at exit dump.c snapshots every thread (snapshot.c), has the
 * symbolizer name the addresses (symload.c) and the profile model write the file.
 *
 * Nothing here is compiled with -finstrument-functions (runtime/CMakeLists.txt), and the
 * hooks' steady path takes no lock, calls no malloc, makes no syscall: one timestamp per
 * event, a push or a pop, and a tree lookup that is one compare in the common case.
 */
#ifndef FNPROF_RUNTIME_H
#define FNPROF_RUNTIME_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "profile.h"

#define FNP_LIKELY(x) __builtin_expect(!!(x), 1)
#define FNP_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define FNP_NOINSTR __attribute__((no_instrument_function))
#define FNP_COLD __attribute__((noinline, cold, no_instrument_function))

/* ---- cct.c: the calling-context tree ------------------------------------------------ */

/*
 * One distinct call path (a tree node), or a link. Written by its thread only; a dumping
 * thread reads it concurrently, so the fields it reads are accessed with relaxed atomics
 * (plain moves on x86_64 and arm64), and a node becomes reachable only through a release
 * store of first_child (or of the thread's links), after it is fully initialised. Nodes
 * are never freed while the process lives. 64 bytes: one cache line.
 *
 * A link stands for a context whose calls have the numbers of another node, its target
 * (cct.c: recursion folding, and the node cap). It is keyed like a node, by the context it
 * is called from (parent) and fn, and takes the calls and ticks of that context; children
 * of a linked call are the target's. The dump adds a link's calls and ticks to its target
 * and takes its ticks off its parent's own time.
 */
struct fnp_node {
    uintptr_t fn; /* key: entry address | module generation << FNP_ADDR_BITS; 0 for a root */
    struct fnp_node *parent;
    struct fnp_node *hot; /* the child entered last: the likely next one; never NULL (at
                             first &fnp_no_child), so the hooks test it with one compare */
    union {
        struct fnp_node *first_child; /* published with release */
        uintptr_t open_flags;         /* a link of the node cap: FNP_OPEN_* of its calls,
                                         and FNP_LINK_BY_FN for a class's link (cct.c) */
    };
    struct fnp_node *next_sibling; /* a link: the next link of the thread */
    uint64_t ncalls;
    uint64_t ticks;          /* inclusive clock ticks of the calls that returned */
    struct fnp_node *target; /* NULL for a tree node; a link's target */
};

/* A link of the node cap keyed by its caller's fn, not by a node (cct.c: capped_child);
 * never written out (the FNP_OPEN_* bits are). */
#define FNP_LINK_BY_FN 8u

/*
 * Open-addressing table of nodes and links by (parent, fn), linear probing, at most half
 * full; owner thread only. A key's home slot is one of 2^(64 - shift); the array has
 * FNP_TABLE_SPILL slots more, so that a probe runs forward without wrapping (the hooks'
 * probe reads 4 slots from the home one with no bound check). A run that would go past
 * the end grows the table instead.
 */
#define FNP_TABLE_SPILL 32
struct fnp_table {
    struct fnp_node **slots;
    size_t len;     /* slots: 2^(64 - shift) homes + FNP_TABLE_SPILL */
    unsigned shift; /* fnp_cct_slot takes the hash's top 64 - shift bits */
    size_t count;
};

/* An open call on a thread's shadow stack. */
struct fnp_frame {
    struct fnp_node *node;
    uint64_t t0;  /* clock at entry */
    uintptr_t sp; /* the hook's frame address: below every callee's, above every caller's */
};

/* A block of nodes carved by bumping a pointer; grown by mmap on the cold path. */
struct fnp_arena {
    char *cur;
    char *end;
    size_t mapped; /* bytes mapped so far, for the report */
};

/*
 * Beyond the node cap, what is open on a thread's stack (cct.c: open_flags): how many
 * counted frames run each function, and each edge (caller's fn, fn). Kept by the cold
 * path alone, and only when a call beyond the cap asks: the frames counted are
 * seen[0 .. top), each the node its frame held then; a frame that no longer holds it was
 * popped, and is taken off at the next call beyond the cap. Owner thread only.
 */
struct fnp_open_count {
    uintptr_t caller; /* the caller's fn for an edge; UINTPTR_MAX for the function */
    uintptr_t fn;     /* 0: a free slot */
    uint64_t frames;
};
struct fnp_open_track {
    const struct fnp_node **seen;
    uint32_t cap, top;
    struct fnp_open_count *slots; /* open addressing, at most half full */
    size_t mask, count;
    const struct fnp_node *deep; /* the tree node made last on a deep stack ... */
    uint64_t deep_level;         /* ... and its level (cct.c: at_depth_limit) */
};

/*
 * Per-thread state. It outlives its thread (a dump may read it after the thread ended),
 * so it is mmap'd, never a TLS block. Fields marked "owner" are touched by the owning
 * thread only; "shared" ones are read by a dumping thread.
 */
struct fnp_thread {
    uint32_t depth;              /* shared: open frames; stored with release after the frame */
    uint32_t cap;                /* owner: frames available */
    struct fnp_frame *frames;    /* shared: published with release when grown; frames[-1]
                                    is a sentinel whose node is the root (cct.c) */
    struct fnp_node root;        /* shared: children are this thread's outermost calls */
    uint32_t busy;               /* owner: inside the cold path (node creation); see hooks.c */
    uint32_t in_use;             /* shared: 1 while a live thread owns this state; a thread that
                                    ends releases it for the next new thread (thread.c) */
    struct fnp_table contexts;   /* owner: (parent, fn) -> node or link */
    struct fnp_table classes[4]; /* owner: beyond the node cap (cct.c: capped_child) */
    struct fnp_open_track open;  /* owner: beyond the node cap (cct.c: open_flags) */
    struct fnp_node *links;      /* shared: every link, newest first (release) */
    struct fnp_arena arena;
    /* shared counters, reported by dump.c */
    uint64_t nodes;          /* tree nodes created */
    uint64_t merged;         /* calls of new contexts beyond the node cap */
    uint32_t merge_causes;   /* FNP_MERGED_* of those merges (cct.c: capped_child) */
    uint64_t dropped_calls;  /* calls not recorded (signal handler during node creation, out
                                of memory) */
    uint64_t unmatched;      /* exits with no matching enter (skipped by longjmp etc.) */
    uint64_t skipped;        /* owner: enters dropped whose exits are still to come */
    struct fnp_thread *next; /* shared: the global list, immutable once pushed */
    int tid;
    /* owner: the last setjmp points (interpose.c): a longjmp to one cuts the shadow stack
     * back to the depth it had there, which the stack pointer alone cannot tell when
     * callees were inlined into the function that called setjmp */
    struct {
        uintptr_t env, sp;
        uint32_t depth;
    } jmps[16];
    uint32_t jmp_next;
    /* trace.c (PROF_TRACE): completed calls, in chunks; owner writes, the dump reads after
     * recording stopped */
    struct fnp_trace_ev *trace_cur, *trace_end;
    uint64_t trace_base; /* owner: the ticks the records' ends count from */
    /* owner: 1 while a trace store or its cold path is under way; the calls of a signal
     * handler that interrupts it are counted, not kept (fnp_trace_store) */
    uint32_t trace_nest;
    struct fnp_trace_chunk *trace_chunks; /* newest first */
    struct fnp_stream_chunk *stream;      /* owner: stream.c's chunk being filled */
    int stream_busy;      /* stream.c: 1 while the owner is in the cold path, 2 once closed */
    uint64_t trace_track; /* owner: stream.c's track of this thread; 0: none */
    struct fnp_trace_chunk *trace_spare; /* owner: a chunk an ended thread left, no calls */
    uint64_t trace_dropped;              /* calls not traced: the event limit was reached */
    char name[16];                       /* the thread's name when it ended (trace.c) */
    struct fnp_mem_thread *mem;          /* owner: PROF_MEMORY's contexts (memory.c) */
    struct fnp_lc_pool *libcalls;        /* owner: PROF_LIBCALLS's calls in flight (plt.h) */
    /* shared: the function a patched entry of this thread is entering, 0 outside one
     * (patch_hooks.c); a pause keeps its exits patched, as if its call were open already
     * (patch.c: entering). FNP_ENTERING_NESTED (patch.h): a signal handler's entry inside
     * another, which hides the outer one's function: a pause waits for it to end. */
    uintptr_t patch_entering;
};

/* Home slot of (parent, fn) in a table whose shift is shift. Multiplicative (Fibonacci)
 * hashing, top bits: the children of one caller are functions at evenly spaced addresses,
 * which the multiply spreads evenly over the table. The earlier mix (low bits after an
 * xor-fold) sent 8% of 5,000 such siblings 4 or more slots past their home (bench many). */
static inline FNP_NOINSTR size_t fnp_cct_slot(const struct fnp_node *parent, uintptr_t fn,
                                              unsigned shift)
{
    uint64_t h = ((uint64_t)fn * 0x9e3779b97f4a7c15ull) ^ (uint64_t)(uintptr_t)parent;
    return (size_t)((h * 0xff51afd7ed558ccdull) >> shift);
}

/* Swaps slots s[0] (a key's home) and s[i] (where that key was found). Valid under linear
 * probing: the key moves to its own home, and the one it displaces (whose home is s[0] or
 * before) moves later within the same run of full slots. Keys found often so come to sit
 * at home, one compare away. Called with t->busy set: between the two stores a signal
 * handler's hooks would find neither key, and must not make a second node for one. */
static inline FNP_NOINSTR void fnp_cct_move_home(struct fnp_node **s, size_t i)
{
    struct fnp_node *n = s[i];
    s[i] = s[0];
    s[0] = n;
}

/* The child of parent for fn when it sits within 4 slots of its home slot (nearly all do:
 * the table is at most half full), else NULL; found past its home, it is moved there. For
 * the hooks' steady path when the hot child is another one; not while the thread is inside
 * the cold path (busy), which may be growing the table. Under a link the children are its
 * target's (fnp_cct_child); under the node cap they are found by class, which the cold path
 * does. */
static inline FNP_NOINSTR struct fnp_node *fnp_cct_probe(struct fnp_thread *t,
                                                         const struct fnp_node *from, uintptr_t fn)
{
    const struct fnp_node *parent = from->target ? from->target : from;
    if (!t->contexts.slots || t->busy || parent->target)
        return NULL;
    struct fnp_node **s = t->contexts.slots + fnp_cct_slot(parent, fn, t->contexts.shift);
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++) {
        struct fnp_node *n = s[i];
        if (!n)
            return NULL;
        if (n->parent == parent && n->fn == fn) {
            if (i > 0) {
                t->busy = 1;
                __atomic_signal_fence(__ATOMIC_SEQ_CST);
                fnp_cct_move_home(s, (size_t)i);
                __atomic_signal_fence(__ATOMIC_SEQ_CST);
                t->busy = 0;
            }
            return n;
        }
    }
    return NULL;
}

/* For pre-order walks of a thread's tree that need no stack (snapshot.c, raw.c): the node
 * after n's subtree, which is the next sibling of n or of its nearest ancestor that has
 * one; NULL at the end of the tree. *up grows by the levels climbed to find it. */
static inline FNP_NOINSTR const struct fnp_node *fnp_cct_after(const struct fnp_thread *t,
                                                               const struct fnp_node *n, size_t *up)
{
    while (!n->next_sibling) {
        n = n->parent;
        if (n == &t->root)
            return NULL;
        ++*up;
    }
    return n->next_sibling;
}

/* The hot child of a node that has none yet: its key matches no function. */
extern struct fnp_node fnp_no_child;

/*
 * Keys that are not code addresses: user space ends below 2^47, so a key with bit 47 set
 * is fnprof's own. Named regions (region.c) are FNP_REGION_TAG | their number. A ghost
 * stands on the shadow stack for a call or region entered while recording was paused
 * (control.c): it is no tree node and matches no exit, so its exit takes the cold path,
 * which pops it; calls recorded inside it are children of the recorded node below it
 * (its target), and nothing of it is ever dumped.
 */
#define FNP_GHOST_CALL (FNP_ADDR_MASK - 1)
#define FNP_GHOST_REGION (FNP_ADDR_MASK - 2)

static inline FNP_NOINSTR int fnp_key_is_ghost(uintptr_t fn)
{
    return (fn & FNP_ADDR_MASK) >= FNP_GHOST_REGION && (fn & FNP_ADDR_MASK) < FNP_ADDR_MASK;
}

static inline FNP_NOINSTR int fnp_key_is_region(uintptr_t fn)
{
    return (fn & FNP_REGION_TAG) && !fnp_key_is_ghost(fn);
}

/* Nodes and links made by every thread, against the cap (PROF_MAX_NODES). */
extern uint64_t fnp_nodes_total;
#define FNP_DEFAULT_MAX_NODES (1u << 20)

/* Cold path of enter: the child of parent for fn (a node or a link), created if new; NULL
 * when out of memory. Sets parent->hot. */
struct fnp_node *fnp_cct_child(struct fnp_thread *t, struct fnp_node *parent, uintptr_t fn);
/* A new thread's shadow stack of cap frames; 0 or -ENOMEM. */
int fnp_cct_init_stack(struct fnp_thread *t, uint32_t cap);
/* Cold path of enter: room for one more frame; 0 or -ENOMEM. */
int fnp_cct_grow_stack(struct fnp_thread *t);
/* Cold path of exit: fn is not the innermost open function. Closes the frames opened
 * above fn's (their exits were skipped) and fn's own at now; an exit with no open fn
 * is counted and ignored. */
void fnp_cct_exit_mismatch(struct fnp_thread *t, uintptr_t fn, uint64_t now);
/* Closes at now every open frame whose sp is below sp: the stack was cut back to sp by a
 * longjmp or a caught exception, and their exit hooks will never run. */
void fnp_cct_unwind(struct fnp_thread *t, uintptr_t sp, uint64_t now);
/* Closes at now the open frames from index depth up (a longjmp to a known setjmp). */
void fnp_cct_cut(struct fnp_thread *t, uint32_t depth, uint64_t now);
/* Cold path of an exit in any mode: pops a ghost, closes fn's frame (traced when tracing),
 * or repairs the stack (fnp_cct_exit_mismatch). */
void fnp_cct_exit_cold(struct fnp_thread *t, uintptr_t fn, uint64_t now);
/* Pushes a ghost (FNP_GHOST_CALL or FNP_GHOST_REGION) for a call or region entered while
 * paused; nothing is counted. */
void fnp_cct_enter_ghost(struct fnp_thread *t, uintptr_t ghost, uintptr_t sp);

/* Pushes the frame of a call of node n at depth d and counts the call; timed is a
 * constant (the hooks' count-only path passes 0 and leaves t0 alone: in count-only mode
 * nothing writes it, so it stays 0 from the zeroed pages).
 * Async-signal reentrancy: the frame is filled before depth is published, and rewritten
 * after, because a signal handler arriving in between pushes and pops its own frames in
 * the same slot (it cannot touch the slot once depth is published). ncalls is bumped
 * after publishing, so a handler never increments the same node concurrently. */
static inline __attribute__((always_inline)) FNP_NOINSTR void
fnp_cct_push_as(struct fnp_thread *t, uint32_t d, struct fnp_node *n, uint64_t now, uintptr_t sp,
                int timed)
{
    /* Relaxed stores (plain moves): a dumping thread reads frames concurrently. */
    struct fnp_frame *f = &t->frames[d];
    __atomic_store_n(&f->node, n, __ATOMIC_RELAXED);
    if (timed)
        __atomic_store_n(&f->t0, now, __ATOMIC_RELAXED);
    f->sp = sp;
    __atomic_store_n(&t->depth, d + 1, __ATOMIC_RELEASE);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    __atomic_store_n(&f->node, n, __ATOMIC_RELAXED);
    if (timed)
        __atomic_store_n(&f->t0, now, __ATOMIC_RELAXED);
    f->sp = sp;
    __atomic_store_n(&n->ncalls, n->ncalls + 1, __ATOMIC_RELAXED);
}

static inline FNP_NOINSTR void fnp_cct_push(struct fnp_thread *t, uint32_t d, struct fnp_node *n,
                                            uint64_t now, uintptr_t sp)
{
    fnp_cct_push_as(t, d, n, now, sp, 1);
}

/* The child for fn of the current node (found or made), counted as one more call, and its
 * frame pushed: the whole of an enter, for the cold path and for tests. */
static inline FNP_NOINSTR void fnp_cct_enter(struct fnp_thread *t, uintptr_t fn, uint64_t now,
                                             uintptr_t sp)
{
    uint32_t d = t->depth;
    if (FNP_UNLIKELY(d >= t->cap) && fnp_cct_grow_stack(t)) {
        __atomic_store_n(&t->dropped_calls, t->dropped_calls + 1, __ATOMIC_RELAXED);
        return;
    }
    struct fnp_node *parent = t->frames[(ptrdiff_t)d - 1].node; /* [-1]: the root */
    struct fnp_node *n = parent->hot;
    if (FNP_UNLIKELY(n->fn != fn)) {
        n = fnp_cct_child(t, parent, fn);
        if (FNP_UNLIKELY(!n))
            return;
    }
    fnp_cct_push(t, d, n, now, sp);
}

/* The innermost frame closed, if it is fn's (an address: the generation may have changed
 * since the enter, by a dlclose in between); timed as for fnp_cct_push_as. */
static inline __attribute__((always_inline)) FNP_NOINSTR void
fnp_cct_exit_as(struct fnp_thread *t, uintptr_t fn, uint64_t now, int timed)
{
    uint32_t d = t->depth;
    /* at depth 0 the sentinel frame's root (fn 0) is no function's: a mismatch too */
    struct fnp_frame *f = &t->frames[(ptrdiff_t)d - 1];
    struct fnp_node *n = f->node;
    if (FNP_UNLIKELY((n->fn & FNP_ADDR_MASK) != fn)) {
        fnp_cct_exit_mismatch(t, fn, now);
        return;
    }
    if (timed)
        __atomic_store_n(&n->ticks, n->ticks + (now - f->t0), __ATOMIC_RELAXED);
    __atomic_store_n(&t->depth, d - 1, __ATOMIC_RELEASE);
}

static inline FNP_NOINSTR void fnp_cct_exit(struct fnp_thread *t, uintptr_t fn, uint64_t now)
{
    fnp_cct_exit_as(t, fn, now, 1);
}

/* ---- arena.c ------------------------------------------------------------------------ */

/* size bytes, zeroed, 16-aligned, from the thread's arena; NULL when mmap fails. */
void *fnp_arena_alloc(struct fnp_arena *a, size_t size);
/* Zeroed pages straight from mmap (never freed); NULL on failure. Async-signal-safe. */
void *fnp_pages(size_t size);

/* ---- thread.c ----------------------------------------------------------------------- */

/* The calling thread's state; NULL until its first recorded call. initial-exec TLS: one
 * %fs-relative load, no __tls_get_addr call (-fPIC would default to global-dynamic). */
extern __thread struct fnp_thread *fnp_tls __attribute__((tls_model("initial-exec")));

/* Cold path of the first call on a thread: creates, registers and returns its state, or
 * NULL when recording is off or memory ran out. Keeps errno. */
struct fnp_thread *fnp_thread_attach(void);
/* Every thread state ever registered, newest first (acquire load of the list head). */
struct fnp_thread *fnp_thread_list(void);
/* Nodes created by every thread so far. */
uint64_t fnp_thread_nodes(void);
/* Threads that recorded a call since the profile began (states are reused, so this is
 * not the length of the list). */
uint64_t fnp_thread_count(void);
/* In a forked child: a profile of its own. Forgets every thread state (the parent's
 * threads do not exist here) and gives the calling thread a new one whose open frames
 * repeat the ones it had, each counted as one call starting now. */
void fnp_thread_after_fork(uint64_t now);

/* ---- clock.c ------------------------------------------------------------------------ */

enum fnp_clock_kind {
    FNP_CLOCK_TSC,       /* rdtsc: invariant TSC on x86_64 */
    FNP_CLOCK_MONOTONIC, /* clock_gettime(CLOCK_MONOTONIC) through the vDSO */
    FNP_CLOCK_NONE,      /* count-only (PROF_TIMER=none): no timestamp is taken */
    /* PROF_COMPENSATE=1: the same clocks, each read fenced on both sides (clock.c says
     * why); a clock that is a call, so every event takes the hooks' cold path */
    FNP_CLOCK_TSC_ORDERED,
    FNP_CLOCK_MONOTONIC_ORDERED,
};

/* Written once by fnp_clock_init before recording starts. */
extern int fnp_clock_kind;

/* Picks the clock (PROF_TIMER or the best available), its reads ordered or not, and notes
 * the calibration start. */
void fnp_clock_init(const char *want, int ordered);
/* Whether the clock's reads are ordered (fenced), for the metadata. */
int fnp_clock_ordered(void);
/* Seconds per tick, from the ticks and nanoseconds elapsed since fnp_clock_init; 1 in
 * count-only mode, where a tick is one call (see fnp_dump). */
double fnp_clock_tick_seconds(void);
/* Name of the clock in use, for the report. */
const char *fnp_clock_name(void);
/* The clock's reading when recording began: the trace's time 0. */
uint64_t fnp_clock_origin(void);

static inline FNP_NOINSTR uint64_t fnp_clock_monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The hooks' inline clock: rdtsc, when fnp_recording has no FNP_ON_MODES bit. */
static inline FNP_NOINSTR uint64_t fnp_clock_tsc(void)
{
#if defined(__x86_64__)
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return (uint64_t)hi << 32 | lo;
#else
    return 0; /* fnp_clock_init never picks FNP_CLOCK_TSC here */
#endif
}

/* Every instruction before it done, none after it begun: lfence on x86_64, which Linux
 * makes dispatch-serializing on AMD as Intel documents it. */
static inline FNP_NOINSTR void fnp_clock_fence(void)
{
#if defined(__x86_64__)
    __asm__ volatile("lfence" ::: "memory");
#elif defined(__aarch64__)
    __asm__ volatile("isb" ::: "memory");
#else
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

/* The TSC read after everything before it is done and before anything after it begins:
 * the compensating hooks' clock (PROF_COMPENSATE=1, clock.c). */
static inline FNP_NOINSTR uint64_t fnp_clock_tsc_ordered(void)
{
    fnp_clock_fence();
    uint64_t now = fnp_clock_tsc();
    fnp_clock_fence();
    return now;
}

/* A timestamp of the clock in use (0 in count-only mode). */
static inline FNP_NOINSTR uint64_t fnp_clock_now(void)
{
    if (FNP_LIKELY(fnp_clock_kind == FNP_CLOCK_TSC))
        return fnp_clock_tsc();
    if (fnp_clock_kind == FNP_CLOCK_NONE)
        return 0;
    if (fnp_clock_kind == FNP_CLOCK_MONOTONIC)
        return fnp_clock_monotonic_ns();
    if (fnp_clock_kind == FNP_CLOCK_TSC_ORDERED)
        return fnp_clock_tsc_ordered();
    fnp_clock_fence();
    uint64_t now = fnp_clock_monotonic_ns();
    fnp_clock_fence();
    return now;
}

/* The mode bits of fnp_recording for the clock in use (dump.c). */
uint64_t fnp_clock_mode(void);

/* ---- env.c: every variable, read once at load ------------------------------------- */

struct fnp_config {
    char *output;             /* PROF_OUTPUT made absolute at load; NULL: fnprof stays inert */
    int quiet;                /* PROF_QUIET=1: no line on success */
    const char *timer;        /* PROF_TIMER: auto, tsc, monotonic, none */
    int child;                /* not the process that owns output (forked, or PROF_OWNER says
                                 so): the file gets a .PID suffix unless it has %p */
    int image;                /* n-th image of this process after execs that wrote a profile
                                 (PROF_EXEC): the file gets a .exec<n> suffix */
    int pid;                  /* the process this state belongs to (a vfork child is another) */
    uint64_t inherited_calls; /* in a forked child: the nodes repeating the parent's stack */
    uint64_t max_nodes;       /* PROF_MAX_NODES; 0: FNP_DEFAULT_MAX_NODES */
    const char *debug_dirs;   /* PROF_DEBUG_DIR: roots for separate debug files */
    const char *start;        /* PROF_START: running (default) or paused */
    const char *schedule;     /* PROF_SCHEDULE */
    const char *dump_signal;  /* PROF_DUMP_SIGNAL */
    const char *toggle;       /* PROF_TOGGLE_SIGNAL */
    char *trace;              /* PROF_TRACE made absolute at load */
    uint64_t trace_events;    /* PROF_TRACE_EVENTS; 0: the default */
    uint64_t trace_buffer_mb; /* PROF_TRACE_BUFFER (MB, streaming); 0: the default */
    uint64_t trace_last;      /* PROF_TRACE_LAST: the flight recorder's calls; 0: off */
    const char *filter;       /* PROF_FILTER: a Score-P filter file */
    struct fnp_launch launch; /* the MPI rank and size a launcher gave us (outname.c) */
    int patch_refuse;         /* PROF_TEST_PATCH_REFUSE=1 (tests only): patch.c behaves as if
                                 mprotect refused to make code writable */
    char *memory;             /* PROF_MEMORY made absolute at load; NULL: no memory profile */
    char *owner_mark;         /* "PROF_OWNER=<pid>:<file>" for the images this process starts
                                 (exec.c; never in its own environ); NULL: none */
    const char *libcalls;     /* PROF_LIBCALLS: which library calls to record (plt.c) */
    int compensate;           /* PROF_COMPENSATE=1: times without the hooks' cost (calibrate.c) */
};

extern struct fnp_config fnp_config;

static inline uint64_t fnp_max_nodes(void)
{
    return fnp_config.max_nodes ? fnp_config.max_nodes : FNP_DEFAULT_MAX_NODES;
}

/* Reads the environment (secure_getenv: a setuid program ignores it). 0 or -errno. */
int fnp_env_load(void);
/* A file name for this process from pattern (PROF_OUTPUT's or PROF_TRACE's): %p expanded
 * to the pid, %n to cycle, ".cycle<n>" appended for a cycle when there is no %n, ".PID" in
 * a child (see PROF_OWNER in env.c), ".exec<n>" in a later image. Caller frees; NULL when
 * pattern is NULL or out of memory. */
char *fnp_env_path(const char *pattern, uint64_t cycle);
/* fnp_env_path of PROF_OUTPUT, no cycle. */
char *fnp_env_output_path(void);

/*
 * Defines void name(void), which makes the mutex lock safe across fork: the forking thread
 * holds it across the fork (pthread_atfork), so that a child never finds it held by a
 * thread it does not have (it would wait for it for ever). For a leaf lock, whose holder
 * takes no other lock of fnprof's; dump.c's fnp_load registers them in order.
 */
#define FNP_FORK_SAFE_LOCK(name, lock)                                                             \
    static void name##_prepare(void)                                                               \
    {                                                                                              \
        pthread_mutex_lock(&(lock));                                                               \
    }                                                                                              \
    static void name##_release(void)                                                               \
    {                                                                                              \
        pthread_mutex_unlock(&(lock));                                                             \
    }                                                                                              \
    void name(void)                                                                                \
    {                                                                                              \
        pthread_atfork(name##_prepare, name##_release, name##_release);                            \
    }

/* ---- log.c -------------------------------------------------------------------------- */

/* One line "fnprof: ..." on fd 2 with a single write(2); never stdio, never stdout.
 * Nothing when fd 2 is no longer the file it was at load (fnp_log_fd). */
void fnp_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* 2 while fd 2 is the file it was when the library loaded, else -1 (closed then, or
 * closed since and reused): the only fd a message may go to. Async-signal-safe. */
int fnp_log_fd(void);

/* ---- snapshot.c --------------------------------------------------------------------- */

/* Every thread's tree, flattened: parent before child (the model's input, profile.h). */
struct fnp_snapshot {
    struct fnp_raw_node *nodes;
    size_t n;
    size_t cap;
    size_t threads;        /* threads with at least one call */
    uint64_t open;         /* frames still open, closed at the snapshot's time */
    uint64_t dropped;      /* calls not recorded */
    uint64_t unmatched;    /* exits with no matching enter */
    uint64_t merged;       /* calls of new contexts beyond the node cap */
    unsigned merge_causes; /* FNP_MERGED_*: why */
    /* fnp_snapshot_take_nodes only: from[i] is the tree node nodes[i] was copied from */
    const struct fnp_node **from;
    size_t from_cap;
    int keep_from;
};

/*
 * What was recorded up to a reset (fnprof_reset, a new cycle of the step schedule): every
 * node's calls and ticks then, which later snapshots subtract. A call open at the reset
 * counts as one call of the new period, beginning at the reset, as a forked child counts
 * the calls it inherits open.
 */
struct fnp_baseline {
    struct fnp_base_entry *e; /* by node address */
    size_t n, cap;
    uint64_t dropped, unmatched, merged;
};

/* Copies every thread's tree; calls still open are closed at now (as cProfile's
 * flush_unmatched does). With since, only what was recorded after that baseline (contexts
 * with no call since are left out); with next, the totals are also kept there, to be the
 * next baseline. Returns 0 or -ENOMEM; caller frees with fnp_snapshot_free. Its callers
 * (fnp_dump, the control lock, the memory dump) hold fnp_mem_hold: the snapshot's
 * allocations are fnprof's, not the program's. */
int fnp_snapshot_take(struct fnp_snapshot *s, uint64_t now, const struct fnp_baseline *since,
                      struct fnp_baseline *next);
/* Appends one thread's tree to s (zeroed first by the caller); what fnp_snapshot_take does
 * for each registered thread. Returns 0 or -ENOMEM. */
int fnp_snapshot_add_thread(struct fnp_snapshot *s, struct fnp_thread *t, uint32_t thread,
                            uint64_t now);
/* fnp_snapshot_take of everything, no baseline, and s->from filled (the memory profile's
 * way back from a snapshot's node to its tree node). */
int fnp_snapshot_take_nodes(struct fnp_snapshot *s, uint64_t now);
void fnp_snapshot_free(struct fnp_snapshot *s);
void fnp_baseline_free(struct fnp_baseline *b);

/* ---- symload.c ---------------------------------------------------------------------- */

/* Notes where libfnprof.so lives (at load, before the program can chdir). */
void fnp_symload_init(void);
/* The fnprof command installed beside libfnprof.so (bin/ next to lib/), or the installed
 * one for libfnprof.a; NULL when unknown. */
const char *fnp_symload_tool(void);
/* Fills api; 0, or -ENOENT with a message logged once when the symbolizer cannot load. */
int fnp_symload_get(struct fnp_symbolizer_api *api);

/* ---- exclude.c: PROF_FILTER ----------------------------------------------------------- */

/* Whether any function is left out; written once at load, before recording starts. */
extern int fnp_exclude_on;
/* Decides, at load, which functions the filter file at path leaves out (one line on
 * stderr when it cannot: then every function is recorded). */
void fnp_exclude_init(const char *path);
/* addr (an entry address, no generation bits) is left out. Async-signal-safe. */
int fnp_exclude_has(uintptr_t addr);
/* 1 when PROF_FILTER leaves out an interpreter's frame (file, name): fnprof_frame_key. */
int fnp_exclude_frame(const char *file, const char *name);
/* The key under which an excluded function's placeholder is found among a node's
 * children: no code address, no region's number, no ghost (FNP_REGION_TAG | address). */
static inline FNP_NOINSTR uintptr_t fnp_excluded_key(uintptr_t key)
{
    return key | FNP_REGION_TAG;
}
/* An exit of fn, not the innermost frame's, is an excluded function's: nothing to pop. */
static inline FNP_NOINSTR int fnp_exclude_exit(const struct fnp_thread *t, uintptr_t fn)
{
    if (!fnp_exclude_on || (fn & FNP_REGION_TAG))
        return 0;
    const struct fnp_node *top = t->frames[(ptrdiff_t)t->depth - 1].node;
    if ((top->hot->fn & FNP_ADDR_MASK) == fnp_excluded_key(fn))
        return 1;
    return fnp_exclude_has(fn);
}

/* ---- coverage.c --------------------------------------------------------------------- */

struct fnp_modmap;
/* After prof is built: names the program's own loaded libraries that call no hook, in one
 * line on stderr (with the share of the function with the most own time) and in the
 * metadata ("uninstrumented"). */
void fnp_coverage_note(struct fnp_profile *prof, const struct fnp_modmap *map,
                       const struct fnp_symbolizer_api *api);

/* ---- interpose.c ------------------------------------------------------------------ */

/* Finds the real longjmp family (before main: never from a wrapper). */
void fnp_interpose_init(void);
/* exec.c: finds the real exec family. */
void fnp_exec_init(void);
/* Makes exec.c's lock (system and popen) safe across fork. */
void fnp_exec_atfork(void);

/* ---- unload.c: dlclose --------------------------------------------------------------- */

/* A library that was unloaded while recording: its calls are named from it at the dump. */
struct fnp_retired {
    struct fnp_raw_module mod;
    struct fnp_retired *next; /* immutable once pushed */
};

/* Every library unloaded so far, newest first (acquire load). */
struct fnp_retired *fnp_retired_list(void);
/* Finds the real dlclose (at load). */
void fnp_unload_init(void);

/* ---- patch.c, patch_sites.c, patch_hooks.c: patchable builds (x86_64) ---------------- */

/*
 * A patchable build (docs/patchable.md) has no hook calls: its functions hold no-op sites at
 * their entry and before every return, listed in a table per object (gcc through fnprof's
 * assembler filter: section fnprof_sites; clang: XRay's xray_instr_map). While recording,
 * the sites are patched into calls of the trampolines of patch_hooks.c, which reach the same
 * tree as the hooks; paused or off, they are no-ops again.
 */
/* The file at path has a table of sites (coverage.c, exclude.c, plt.c: such an object is
 * instrumented though it calls no hook). */
int fnp_sites_in_file(const char *path);

/* At load, once recording started or paused: patches every loaded object when recording. */
void fnp_patch_init(void);
/* After fnp_recording changed (control.c, under its lock): recording, every site is patched;
 * paused, entries are not, and exits are only for functions with a call open on some thread
 * (docs/controls.md: an open call closes when it really returns). */
void fnp_patch_sync(void);
/* unload.c, around the real dlclose of handle: the object is left alone meanwhile, and
 * forgotten after if it was unmapped. begin returns the token end takes (0: nothing to do). */
uint64_t fnp_patch_close_begin(void *handle);
void fnp_patch_close_end(uint64_t token);
/* Makes the patch lock safe across fork (fnp_load: the order of the fork handlers). */
void fnp_patch_atfork(void);
/* Patching was refused (mprotect): said already, so the dump adds no line of its own when
 * nothing was recorded. */
int fnp_patch_refused(void);

/* ---- raw.c, signals.c: a profile from a dying process --------------------------------- */

/* Writes the raw snapshot (profile.h: FNP_RAW_MAGIC) of every thread to fd; open calls
 * are closed at now. Async-signal-safe. Returns 0 or -errno. */
int fnp_raw_write(int fd, uint64_t now, double tick_seconds);
/* Installs the handlers for signals whose action is the default one; tool is the fnprof
 * command that turns the raw snapshot into pstats (NULL: none known); memory: PROF_MEMORY
 * is recorded (a death by signal says its profile is lost). At load. */
void fnp_signals_init(const char *tool, int memory);
/* Recomputes the paths the handler writes (a forked child's output path changes). */
void fnp_signals_paths(void);
/* Around the exit dump, by the thread that writes it: a signal that comes meanwhile is
 * held until the end, which then ends the process by it (a fault, or a second signal,
 * ends it at once, with one line). */
void fnp_signals_exit_begin(void);
void fnp_signals_exit_end(void);
/* In a forked child: no thread of the parent's is handling a signal or dumping. */
void fnp_signals_after_fork(void);

/* ---- peek.c, hooks.c: the hooks picked at relocation ---------------------------------- */

#if defined(__x86_64__) && defined(__linux__) && defined(__GLIBC__) && !defined(FNP_NO_IFUNC)
#define FNP_HAVE_IFUNC 1
/* For code the loader runs before the process is set up (ifunc resolvers): no
 * instrumentation, no stack protector (its canary is in TLS), no sanitizer (not started). */
#define FNP_EARLY                                                                                  \
    __attribute__((no_instrument_function, no_stack_protector,                                     \
                   no_sanitize("address", "thread", "undefined")))
/* What the environment the process started with asks for: FNP_PEEK_OUTPUT when
 * PROF_OUTPUT is set and not empty, FNP_PEEK_COUNT when PROF_TIMER is "none"; -1 when it
 * cannot tell. Safe before relocation, TLS and sanitizers: raw system calls only. */
#define FNP_PEEK_OUTPUT 1
#define FNP_PEEK_COUNT 2
#define FNP_PEEK_TRACE 4
#define FNP_PEEK_FILTER 8
/* PROF_MEMORY without PROF_OUTPUT: reported as FNP_PEEK_OUTPUT | FNP_PEEK_COUNT, since the
 * calls are then recorded for the memory profile alone, without timestamps (dump.c). */
#define FNP_PEEK_MEMORY 16
/* PROF_COMPENSATE=1: the compensating pair, whose clock reads are ordered (clock.c) */
#define FNP_PEEK_COMPENSATE 32
int fnp_peek(void);
#else
#define FNP_HAVE_IFUNC 0
#endif

/* ---- dump.c ------------------------------------------------------------------------- */

/*
 * Read by every hook: 0 when not recording (PROF_OUTPUT unset, or after the exit dump);
 * else FNP_ON with the clock's mode bits, and the module generation in the bits from
 * FNP_ADDR_BITS up. The enter hook ORs the generation into the function's key and tests
 * the mode, so the one load serves all three purposes.
 */
extern uint64_t fnp_recording;
#define FNP_GEN_ONE (UINT64_C(1) << FNP_ADDR_BITS)
#define FNP_ON UINT64_C(1)
#define FNP_ON_COUNT UINT64_C(2)      /* count-only (PROF_TIMER=none): no timestamp */
#define FNP_ON_CLOCK_CALL UINT64_C(4) /* the clock is a call: every event takes a cold path */
#define FNP_ON_PAUSED                                                                              \
    UINT64_C(8)                   /* fnprof_pause, a NONE step: enters push ghosts; with it        \
                                     no other mode bit is set (control.c) */
#define FNP_ON_TRACE UINT64_C(16) /* PROF_TRACE: exits keep their calls (trace.c) */
/* PROF_COMPENSATE=1 on the TSC: every read fenced (clock.c); only the compensating hook
 * pair takes it inline, everything else reads the clock on its cold path */
#define FNP_ON_ORDERED UINT64_C(32)
#define FNP_ON_MODES                                                                               \
    (FNP_ON_COUNT | FNP_ON_CLOCK_CALL | FNP_ON_PAUSED | FNP_ON_TRACE | FNP_ON_ORDERED)
/* the bits of fnp_recording below the module generation */
#define FNP_ON_BITS (FNP_GEN_ONE - 1)

static inline FNP_NOINSTR uintptr_t fnp_key(uintptr_t fn, uint64_t recording)
{
    return fn | (uintptr_t)(recording & ~FNP_ADDR_MASK);
}

struct fnp_dump_opts {
    int quiet;                        /* no line on success */
    uint64_t cycle;                   /* the schedule's cycle, for the metadata; 0: none */
    const struct fnp_baseline *since; /* leave out what was recorded before it */
    struct fnp_baseline *next;        /* keep the totals there (a reset) ... */
    int next_taken;                   /* ... set when they were */
};

/* Names the nodes of raw (the modules loaded and unloaded, the symbolizer if it loads) and
 * builds prof from them. Returns 0 or -errno. */
int fnp_dump_build(struct fnp_profile *prof, struct fnp_raw *raw);
/* fnp_dump_build with a symbolizer kept in *kept across calls (made at the first; the
 * caller ends it with fnp_dump_build_end). */
int fnp_dump_build_kept(struct fnp_profile *prof, struct fnp_raw *raw,
                        struct fnp_symbolizer **kept);
void fnp_dump_build_end(struct fnp_symbolizer *kept);

/* Writes the profile to path now (every thread, open calls closed at this moment).
 * Returns 0 or -errno; reports on stderr unless quiet. Called under control.c's lock. */
int fnp_dump(const char *path, struct fnp_dump_opts *o);

/* Starts recording on request when PROF_OUTPUT did not (fnprof_frame_start). 0, or
 * -ESRCH after the exit dump. */
int fnp_start_frames(void);

/* ---- control.c: pause, the step schedule, resets, dumps ------------------------------ */

/* At load: PROF_START and PROF_SCHEDULE, with modes the bits recording runs with. */
void fnp_control_init(uint64_t modes);
/* The bits fnp_recording starts with: modes, or paused. */
uint64_t fnp_control_modes(void);
/* The bits recording runs with when not paused (patch.c picks its trampolines by them). */
uint64_t fnp_control_running_modes(void);
void fnp_control_pause(int paused);
void fnp_control_step(void);
void fnp_control_reset(void);
/* fnp_dump of what was recorded since the last reset. */
int fnp_control_dump(const char *path, int quiet);
/* The exit dump (the whole run, or the cycle in progress), then the trace. */
void fnp_control_exit(void);
/* fnprof_step calls so far. */
uint64_t fnp_control_steps(void);
void fnp_control_atfork(void);
/* PROF_TOGGLE_SIGNAL (dumpsig.c): flips the user pause; returns the new one (1 paused). */
int fnp_control_toggle(void);
/* FNP_LIVE_RECORDING, _PAUSED, _SCHEDULED or _ENDED (profile.h), for fnprof record. */
char fnp_control_state(void);
/* fnprof record's window: the mark starts it (what was recorded so far is left out of the
 * window's dump, open calls counting as calls from the mark, as after a reset); the
 * window's dump writes what came since, whatever resets and cycles came between. */
void fnp_control_mark(void);
int fnp_control_window(const char *path, int quiet);

/* ---- region.c: named regions ------------------------------------------------------- */

/* The regions interned so far, for naming them at the dump: regions[i] has key
 * FNP_REGION_TAG | (i + 1). Entries are immutable once published; *n is read with acquire. */
const struct fnp_raw_region *fnp_regions(size_t *n);
/* key is an interpreter's frame (fnprof_frame_key: a Python function), not a region. */
int fnp_region_is_frame(uintptr_t key);
/* Makes the region lock safe across fork (fnp_load: the order of the fork handlers). */
void fnp_region_atfork(void);
/* An interpreter's frames were keyed (fnprof_frame_key): its own binary and modules are
 * uninstrumented by nature, and coverage.c does not list them. */
int fnp_frames_keyed(void);

/* Interns (file, line, name) as a region's key (its strings copied; file is told apart by
 * its address, so pass the same pointer for the same file): FNP_REGION_TAG | n, or 0 when
 * there is no room or memory. plt.c keys library calls so. */
uintptr_t fnp_region_key(const char *file, int line, const char *name);

/* ---- plt.c, plt_call.c: PROF_LIBCALLS (docs/libcalls.md) ---------------------------- */

/* Set once library calls are hooked: the tree's cold path then reports new functions. */
extern int fnp_libcalls_watch;
/* At load: hooks what the pattern text asks for in the instrumented objects loaded. */
void fnp_libcalls_init(const char *text);
/* Hooks the objects loaded since (a dlopen wrapper's, after the real dlopen). */
void fnp_libcalls_loaded(void);
/* The tree's cold path makes a node for key (an address with its module generation): if no
 * object seen so far holds it, a new object came, and is hooked. */
void fnp_libcalls_seen(uintptr_t key);
/* A longjmp from sp from to sp to: the library calls in flight between are gone. */
void fnp_libcalls_jump(uintptr_t from, uintptr_t to);
/* A thread ended: its calls in flight are gone (its state is reused). */
void fnp_libcalls_thread_ended(struct fnp_thread *t);
/* Library calls let through unrecorded for want of room, over every thread. */
uint64_t fnp_libcalls_dropped(void);

/* ---- meta.c: the run's metadata ---------------------------------------------------- */

/* Notes the start time and host (at load). */
void fnp_meta_init(void);
/* Puts the run's metadata into p: program, pid, start, host, fnprof, clock, then the
 * program's own pairs (fnprof_add_metadata). Returns 0 or -ENOMEM. */
int fnp_meta_fill(struct fnp_profile *p);
/* Makes the metadata lock safe across fork (fnp_load: the order of the fork handlers). */
void fnp_meta_atfork(void);

/* ---- calibrate.c: the hook pair's own cost ------------------------------------------- */

/* hooks.c: the exported __cyg_profile_func_enter and _exit, as bound for this process. */
typedef void fnp_hook_pair_fn(void *fn, void *call_site);
void fnp_hooks_exported(fnp_hook_pair_fn **enter, fnp_hook_pair_fn **exit);

/* At load, before recording starts: measures the cost of a hook pair in the mode modes
 * (the bits recording will run with), inside and outside the measured interval of a call;
 * nothing when count-only. */
void fnp_calibrate(uint64_t modes);
/* The calibration, in clock ticks: 0, or -ENOENT when there is none. */
int fnp_calibration_ticks(double *in, double *out);
/* At a dump, p built: the calibration into p's metadata, and p's times compensated when
 * PROF_COMPENSATE=1 (one line on stderr, once, when they cannot be). */
void fnp_calibrate_note(struct fnp_profile *p);

/* ---- dumpsig.c: PROF_DUMP_SIGNAL, PROF_TOGGLE_SIGNAL, fnprof record's requests ------- */

/* With PROF_DUMP_SIGNAL or PROF_TOGGLE_SIGNAL (either, both, or neither: then nothing):
 * installs the handlers and starts the thread that does what the signals ask. */
void fnp_dumpsig_init(void);
/* In a forked child: a semaphore and a thread of its own. */
void fnp_dumpsig_after_fork(void);
/* The state of recording changed (control.c): the thread shows it again. */
void fnp_dumpsig_notify(void);

/* ---- trace.c: PROF_TRACE ------------------------------------------------------------- */

/* One traced call, as trace.c keeps an ended thread's calls. */
struct fnp_trace_rec {
    const struct fnp_node *node;
    uint64_t t0, t1;
};

/*
 * One traced call as the exit hook writes it: 16 bytes. It ends at its chunk's base plus
 * end (the chunk starts a new base when that would not fit 32 bits), and lasts dur ticks.
 * A call of 2^32 ticks or more (over a second) is two records: first one whose node is
 * FNP_TRACE_LONG, its end and dur holding the start's low and high halves, then the call.
 */
struct fnp_trace_ev {
    const struct fnp_node *node;
    uint32_t end, dur;
};
#define FNP_TRACE_LONG ((const struct fnp_node *)1)
/* A record whose node is FNP_TRACE_BASE moves the base to its end and dur (low, high). */
#define FNP_TRACE_BASE ((const struct fnp_node *)2)
/* The cold path's store: a BASE and a LONG record first where needed. 0, or -1 when the
 * chunk has no room for them (trace_cur may be NULL). */
int fnp_trace_put_cold(struct fnp_thread *t, const struct fnp_node *n, uint64_t t0, uint64_t t1);
/* The calls of n records into out (at most n), in order; *base: the chunk's base in, the
 * last one out. Returns the calls. */
size_t fnp_trace_unpack(const struct fnp_trace_ev *ev, size_t n, uint64_t *base,
                        struct fnp_trace_rec *out);

/* Set at load when PROF_TRACE is set (and the clock has timestamps). */
extern int fnp_tracing;
/* The program's file name without its directory, read into exe: a trace's process name. */
const char *fnp_trace_process(char *exe, size_t size);
/* A live thread's name (/proc/self/task/TID/comm), "" when gone; async-signal-safe. */
void fnp_trace_thread_name(int tid, char name[16]);
/* At load: the event budget; 0 or -errno. */
int fnp_trace_init(void);
void fnp_trace_add_cold(struct fnp_thread *t, const struct fnp_node *n, uint64_t t0, uint64_t t1);
/* The steady store of fnp_trace_add: 1, or 0 when the call needs the cold path (a full
 * chunk, a base or a call past 32 bits), which the caller takes. */
static inline FNP_NOINSTR int fnp_trace_store(struct fnp_thread *t, const struct fnp_node *n,
                                              uint64_t t0, uint64_t t1)
{
    /* A signal handler's calls may interrupt this store. Once trace_nest is set they go to
     * the cold path, which counts them: had one of them moved the thread to another chunk,
     * this store would put back a pointer into the old one, and the next calls would write
     * past its end. */
    if (FNP_UNLIKELY(t->trace_nest))
        return 0;
    t->trace_nest = 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    struct fnp_trace_ev *r = t->trace_cur;
    uint64_t end = t1 - t->trace_base, dur = t1 - t0;
    int kept = r != t->trace_end && !((end | dur) >> 32);
    if (FNP_LIKELY(kept)) {
        r->node = n;
        r->end = (uint32_t)end;
        r->dur = (uint32_t)dur;
        t->trace_cur = r + 1;
    }
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    t->trace_nest = 0;
    return kept;
}
/* Keeps the call of n from t0 to t1 in t's trace; the cold path takes a new chunk, a long
 * call or the end of the limit (trace.c), or hands the chunk to the writer (stream.c). */
static inline FNP_NOINSTR void fnp_trace_add(struct fnp_thread *t, const struct fnp_node *n,
                                             uint64_t t0, uint64_t t1)
{
    if (FNP_UNLIKELY(!fnp_trace_store(t, n, t0, t1)))
        fnp_trace_add_cold(t, n, t0, t1);
}
/* Writes PROF_TRACE (at exit, recording stopped). */
void fnp_trace_finish(void);
/* PROF_TRACE_LAST: writes the flight recording now (a dump: recording goes on). */
void fnp_trace_dump(int quiet);
/* A thread ends: its calls move to a track of their own, named, and t is left without a
 * call for the next thread; 1, or 0 when t must keep them (the trace is being written, or
 * no memory): then t is its track and is not reused. */
int fnp_trace_thread_ended(struct fnp_thread *t);
/* In a forked child: the parent's ended threads are not the child's. */
void fnp_trace_after_fork(void);

/* ---- trace_ring.c: PROF_TRACE_LAST, the flight recorder ----------------------------- */

/* Set at load when PROF_TRACE_LAST is: the trace keeps the last calls, in a fixed pool. */
extern int fnp_ring;
/* At load: maps the pool for the last calls; 0 or -errno (said; then no trace). */
int fnp_ring_init(uint64_t last);
/* fnp_trace_add's cold path with PROF_TRACE_LAST: seals the full chunk, takes another. */
void fnp_ring_add_cold(struct fnp_thread *t, const struct fnp_node *n, uint64_t t0, uint64_t t1);
/* A thread ends: its chunk is sealed, with its name; t keeps no chunk. */
void fnp_ring_thread_ended(struct fnp_thread *t);
void fnp_ring_after_fork(void);
/* One call of the window, with its thread's id and name (NULL: a live thread). */
struct fnp_ring_call {
    struct fnp_trace_rec rec;
    int tid;
    const char *name;
};
struct fnp_ring_calls {
    struct fnp_ring_call *calls; /* malloc'd: the sealed chunks' first, in the order they ended
                                    per thread */
    size_t n, cap;
    uint64_t last;        /* PROF_TRACE_LAST */
    uint64_t overwritten; /* older calls overwritten in the pool */
    uint64_t not_kept;    /* calls not kept: every chunk was another thread's, or a signal handler
                             interrupted */
};
/* The calls the pool holds that ended after the newest overwritten one (the open ones
 * are the caller's; the caller keeps the last `last` of them). 0 or -ENOMEM. */
int fnp_ring_collect(struct fnp_ring_calls *out, uint64_t now);
/* raw.c's writer, for the fatal path's records (async-signal-safe). */
struct fnp_raw_out;
void fnp_raw_put(struct fnp_raw_out *o, const void *p, size_t len);
void fnp_raw_put_u64(struct fnp_raw_out *o, uint64_t v);
/* In the raw snapshot, from the fatal signal's handler: the window's calls, the open ones
 * ending now, the threads' names and the recording's numbers (profile.h, raw format). */
void fnp_ring_put_raw(struct fnp_raw_out *o, uint64_t now);

/* ---- stream.c: PROF_TRACE to a Perfetto file, written while the program runs -------- */

#define FNP_STREAM_RECS 32768                       /* a chunk: 512 KiB */
#define FNP_STREAM_OPEN_AT (FNP_STREAM_RECS - 1024) /* the open frames; calls stay below */
#define FNP_STREAM_ENDED 1u                         /* the thread ended: its track ends */
#define FNP_STREAM_FINAL 2u /* the run ends: the open frames end at close_at */

/* A thread's calls handed to the writer: recs[0, n) in the order they ended, and its
 * open frames at recs[FNP_STREAM_OPEN_AT, +nopen), outermost first, as records (node,
 * start's low half, high half): apart, so that a hook still under way in the owner
 * while another thread closes the chunk (exit, exec) writes where the writer never reads.
 * More open frames than that room holds go to pages of their own, open_deep (open_bytes
 * long, unmapped when the chunk is given back), all nopen of them. */
struct fnp_stream_chunk {
    struct fnp_stream_chunk *next; /* in the writer's queue, or the free list */
    uint64_t track;                /* one per thread; a reused state is a new track */
    int tid;
    uint32_t flags;
    uint64_t base;     /* the first record's base */
    uint64_t close_at; /* FNP_STREAM_FINAL */
    uint64_t dropped;  /* calls of this track dropped before this chunk */
    size_t n, nopen;
    struct fnp_trace_ev *open_deep; /* NULL: the open frames are in recs */
    size_t open_bytes;
    char name[16];
    struct fnp_trace_ev recs[FNP_STREAM_RECS];
};

/* Set at load when PROF_TRACE names a .pftrace or .perfetto-trace file. */
extern int fnp_streaming;
/* At load: starts the writer thread; 0 or -errno (then no trace). */
int fnp_stream_init(void);
/* The cold path of fnp_trace_add when streaming. */
void fnp_stream_add_cold(struct fnp_thread *t, const struct fnp_node *n, uint64_t t0, uint64_t t1);
/* A thread ends (its frames closed): its chunk goes to the writer, the state comes back
 * empty for the next thread. */
void fnp_stream_thread_ended(struct fnp_thread *t);
/* At exit, before exec (recording stopped): every thread's calls, the open ones ending
 * now, written; the file renamed into place. Waits for the writer. */
void fnp_stream_finish(void);
/* From a fatal signal's handler: the same, waiting a bounded time (async-signal-safe in
 * this thread: atomics, futex and nanosleep; the writer thread does the writing). */
void fnp_stream_on_fatal(void);
void fnp_stream_after_fork(void);
/* Before an exec replaces the image: the trace finished as at exit (keep), or, for an
 * image that keeps no profile (a forked child that recorded nothing), its file dropped. */
void fnp_stream_before_exec(int keep);
/* stream_write.c, in the writer thread: the chunks next gives, in order, as Perfetto
 * packets into s, each given back to done once written; until next returns NULL. */
/* In a forked child, before its writer starts. */
void fnp_stream_write_after_fork(void);
void fnp_stream_write_all(struct fnp_sink *s, struct fnp_stream_chunk *(*next)(void *),
                          void (*done)(void *, struct fnp_stream_chunk *), void *ctx);
/* Calls written so far (stream_write.c counts them). */
void fnp_stream_count(uint64_t written);

/* ---- memory.c, memory_dump.c: PROF_MEMORY ------------------------------------------- */

/*
 * The allocations of one calling context: a tree node of one thread (or the thread's root,
 * for allocations made outside every recorded call). Kept beside the tree, not in struct
 * fnp_node, whose 64 bytes the hooks touch on every call. Allocations are counted by the
 * owner thread only (a context belongs to one thread's tree); frees by the owner too, and
 * frees by any other thread in the atomic r* fields. The dump reads them all with relaxed
 * loads.
 */
struct fnp_mem_ctx {
    const struct fnp_node *node;
    const struct fnp_thread *owner;
    struct fnp_mem_ctx *next; /* the thread's contexts, newest first (release) */
    uint64_t allocs, bytes;   /* owner: blocks allocated here, their bytes */
    uint64_t frees, freed;    /* owner: of those, freed by the owner */
    uint64_t peak;            /* owner: the most bytes of this context live at once */
    uint64_t rfrees, rfreed;  /* any thread: freed by other threads (atomic adds) */
};

/* A thread's contexts by node: a table the owner alone probes, and the list the dump walks. */
struct fnp_mem_thread {
    const struct fnp_node *last_node; /* the context found last: the likely next one */
    struct fnp_mem_ctx *last;
    struct fnp_mem_ctx **slots;
    size_t mask, count;
    struct fnp_mem_ctx *list; /* shared: every context, newest first (release) */
    struct fnp_arena arena;
};

/* Per-thread guard, initial-exec TLS: nonzero while the thread runs fnprof's own code that
 * may allocate (a dump, a snapshot, a thread's set-up, the allocator wrappers themselves),
 * whose allocations are then neither recorded nor sent back into the wrappers' work. */
extern __thread unsigned fnp_mem_busy __attribute__((tls_model("initial-exec")));

static inline FNP_NOINSTR void fnp_mem_hold(void)
{
    fnp_mem_busy++;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static inline FNP_NOINSTR void fnp_mem_release(void)
{
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    fnp_mem_busy--;
}

/* At load, when PROF_MEMORY is set: starts tracking blocks (the wrappers then record
 * every allocation while recording is on). 0, or -ENOTSUP in libfnprof.a, whose wrappers
 * are never reached (said on stderr). */
int fnp_mem_init(void);
/* Stops tracking: the wrappers forward, and record nothing more. Returns whether blocks
 * were being tracked. */
int fnp_mem_stop(void);
/* Allocations left out for want of memory for the table of live blocks. */
uint64_t fnp_mem_dropped(void);
/* Why the memory profile misses allocations (the program calls a malloc that is not
 * fnprof's: its own, or another library's ahead of libfnprof.so), or NULL. Borrowed, set at
 * load. */
const char *fnp_mem_incomplete(void);

/* memory_dump.c: at exit (recording stopped), writes PROF_MEMORY. */
void fnp_mem_dump(void);

#endif
