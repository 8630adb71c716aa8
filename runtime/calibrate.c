/* SPDX-License-Identifier: MIT */
/*
 * The hook pair's own cost in this process, measured once at load and kept in every timed
 * profile's metadata, so that its times can be compensated (PROF_COMPENSATE=1 at the
 * dump, or `fnprof report --compensate` later: profile/compensate.c does the arithmetic).
 *
 * What is measured is what the tree will hold. A caller P makes PAIRS calls of an empty
 * function F through the exported hooks, the very entry points the program's calls reach
 * (the loader picked them for this run's mode: timed, tracing, filtering, or the clock
 * that is a call), so F's node gets PAIRS times the part of a pair inside a call's
 * measured interval (c_in: from the enter hook's clock reading to the body, and from the
 * body to the exit hook's), and P's own time PAIRS times the rest (c_out), which in a
 * real run lands in the caller's own time. The calls go to a thread state of its own,
 * swapped into the thread's TLS slot for the measurement and never listed: nothing of it
 * reaches a profile.
 *
 * Noise only adds time (an interrupt, a cache line lost), so a low percentile of BATCHES
 * batches is taken, after WARMUP batches that make the nodes and warm the caches. About
 * 4,600 pairs: 0.1-0.3 ms at start (docs/compensation.md has the figures).
 *
 * One calibration per process, not per thread: every thread runs the same instructions
 * on the same kind of state (initial-exec TLS, a node of its own tree), so what could
 * differ between threads is the CPU they run on at the moment, which a measurement at a
 * thread's start would not capture either, and would cost every short-lived thread as
 * much as its calls.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "runtime.h"

#define PAIRS 256
#define WARMUP 2
#define BATCHES 16
/* The percentile taken: the 4th lowest of 16 batches. */
#define RANK 3

/* Written once by fnp_calibrate at load, before recording starts; read at each dump. A
 * negative value: no calibration. */
static double in_ticks = -1, out_ticks = -1;

/* Two addresses that are no function's: the keys of the calibration's caller and callee
 * (never symbolized: their nodes never reach a profile). */
static char keys[2];

/* Where the tracing pair keeps the calibration's calls: each batch starts it again. */
static struct fnp_trace_ev trace_buf[PAIRS + 4];

/* One batch: P calls F PAIRS times, four calls an iteration so that the loop's own
 * instructions, which the caller's time would hold, are few. */
static FNP_NOINSTR __attribute__((noinline)) void batch(fnp_hook_pair_fn *enter_fn,
                                                        fnp_hook_pair_fn *exit_fn)
{
    void *site = __builtin_return_address(0);
    enter_fn(&keys[0], site);
    for (unsigned i = 0; i < PAIRS; i += 4) {
        enter_fn(&keys[1], site);
        exit_fn(&keys[1], site);
        enter_fn(&keys[1], site);
        exit_fn(&keys[1], site);
        enter_fn(&keys[1], site);
        exit_fn(&keys[1], site);
        enter_fn(&keys[1], site);
        exit_fn(&keys[1], site);
    }
    exit_fn(&keys[0], site);
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The node keyed k, a tree node (not a link, not merged), among from's children. */
static const struct fnp_node *child(const struct fnp_node *from, const void *k)
{
    for (const struct fnp_node *n = from->first_child; n; n = n->next_sibling)
        if ((n->fn & FNP_ADDR_MASK) == (uintptr_t)k && !n->target)
            return n;
    return NULL;
}

/* Gives back what the calibration's state mapped: the cold path made two nodes (one
 * arena chunk), a table and the stack. */
static void release(struct fnp_thread *t)
{
    uint64_t made = t->nodes;
    for (const struct fnp_node *l = t->links; l; l = l->next_sibling)
        made++;
    __atomic_sub_fetch(&fnp_nodes_total, made, __ATOMIC_RELAXED);
    if (t->arena.mapped)
        munmap(t->arena.end - t->arena.mapped, t->arena.mapped);
    if (t->contexts.slots)
        munmap(t->contexts.slots, t->contexts.len * sizeof(*t->contexts.slots));
    for (size_t i = 0; i < sizeof(t->classes) / sizeof(t->classes[0]); i++)
        if (t->classes[i].slots)
            munmap(t->classes[i].slots, t->classes[i].len * sizeof(*t->classes[i].slots));
    munmap(t->frames - 1, ((size_t)t->cap + 1) * sizeof(*t->frames));
    munmap(t, sizeof(*t));
}

FNP_NOINSTR void fnp_calibrate(uint64_t modes)
{
    if (modes & FNP_ON_COUNT)
        return;                /* no times to compensate */
    in_ticks = out_ticks = -1; /* a calibration that fails leaves none */
    struct fnp_thread *t = fnp_pages(sizeof(*t));
    if (!t)
        return;
    if (fnp_cct_init_stack(t, 16)) {
        munmap(t, sizeof(*t));
        return;
    }
    fnp_hook_pair_fn *enter_fn, *exit_fn;
    fnp_hooks_exported(&enter_fn, &exit_fn);
    double in[BATCHES], out[BATCHES];
    size_t got = 0;
    uint64_t p0 = 0, f0 = 0;
    struct fnp_thread *own = fnp_tls;
    fnp_tls = t;
    /* Another thread that runs instrumented code now (one a constructor started) records
     * from this moment, a few hundred microseconds before the load ends. */
    __atomic_store_n(&fnp_recording, modes, __ATOMIC_RELEASE);
    for (unsigned b = 0; b < WARMUP + BATCHES; b++) {
        t->trace_cur = trace_buf;
        t->trace_end = trace_buf + sizeof(trace_buf) / sizeof(trace_buf[0]);
        /* the records' times are 32-bit offsets from it: the batch never takes the cold
         * path, which would count its calls against the trace's budget */
        t->trace_base = fnp_clock_now();
        batch(enter_fn, exit_fn);
        const struct fnp_node *p = child(&t->root, &keys[0]);
        const struct fnp_node *f = p ? child(p, &keys[1]) : NULL;
        /* None: the program's calls reach other hooks than fnprof's (dump.c says so). */
        if (!f || f->ncalls != (uint64_t)PAIRS * (b + 1) || t->depth)
            break;
        uint64_t dp = p->ticks - p0, df = f->ticks - f0;
        p0 = p->ticks;
        f0 = f->ticks;
        if (b < WARMUP)
            continue;
        /* P's own time holds the pairs' c_out and, once, P's own c_in. */
        in[got] = (double)df / PAIRS;
        out[got] = ((double)dp - (double)df - in[got]) / PAIRS;
        got++;
    }
    __atomic_store_n(&fnp_recording, 0, __ATOMIC_RELEASE);
    fnp_tls = own;
    t->trace_cur = t->trace_end = NULL;
    release(t);
    if (got < BATCHES)
        return;
    qsort(in, BATCHES, sizeof(in[0]), by_value);
    qsort(out, BATCHES, sizeof(out[0]), by_value);
    in_ticks = in[RANK];
    out_ticks = out[RANK] > 0 ? out[RANK] : 0;
}

int fnp_calibration_ticks(double *in, double *out)
{
    if (in_ticks < 0)
        return -ENOENT;
    *in = in_ticks;
    *out = out_ticks;
    return 0;
}

void fnp_calibrate_note(struct fnp_profile *p)
{
    static int said;
    const char *why = NULL;
    if (p->tree_kind != FNP_TREE_TIME)
        why = "a count-only run (PROF_TIMER=none) has no times to compensate";
    else if (fnp_frames_keyed())
        why = "the profile holds an interpreter's frames, whose cost the calibration of the "
              "hooks does not measure";
    else if (in_ticks < 0)
        why = "the hooks could not be calibrated at start (the program's calls reach "
              "another library's hooks, or memory ran out)";
    else if (fnp_calibration_put(p, in_ticks * p->tick_seconds * 1e9,
                                 out_ticks * p->tick_seconds * 1e9))
        why = "the calibration could not be stored";
    if (!fnp_config.compensate)
        return;
    int rc = why ? 0 : fnp_profile_compensate(p, NULL);
    if (rc)
        why = fnp_compensate_strerror(rc);
    if (why && !said) {
        said = 1;
        fnp_log("PROF_COMPENSATE: %s; times not compensated", why);
    }
}
