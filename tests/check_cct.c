/*
 * The runtime's calling-context tree driven with a fake clock, then snapshotted and turned
 * into cProfile's numbers: the worked example of docs/pstats.md, open calls at dump time,
 * skipped exits, wide and deep trees.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "profile.h"
#include "runtime.h"

static uint64_t clk;
static struct fnp_thread *T;

enum { MAIN = 0x1000, FIB = 0x2000, A = 0x3000, B = 0x4000, F = 0x5000, G = 0x6000 };

static void enter(uintptr_t fn)
{
    /* a stack growing down, 64 bytes a frame */
    fnp_cct_enter(T, fn, clk, ((uintptr_t)1 << 40) - 64 * (uintptr_t)T->depth);
}

static void leave(uintptr_t fn)
{
    fnp_cct_exit(T, fn, clk);
}

static struct fnp_thread *new_thread(void)
{
    struct fnp_thread *t = fnp_pages(sizeof(*t));
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(fnp_cct_init_stack(t, 4), 0); /* small, so that tests grow it */
    return t;
}

static void setup(void)
{
    clk = 0;
    T = new_thread();
    fnp_nodes_total = 0;
}

static const char *name_of(uint64_t fn)
{
    static char buf[32];
    switch (fn) {
    case MAIN:
        return "main";
    case FIB:
        return "fib";
    case A:
        return "a";
    case B:
        return "b";
    case F:
        return "f";
    case G:
        return "g";
    }
    snprintf(buf, sizeof(buf), "fn%llx", (unsigned long long)fn);
    return buf;
}

/* Snapshot T at `now` and derive the profile, 1 tick = 1 second. */
static void derive(struct fnp_profile *p, uint64_t now)
{
    struct fnp_snapshot s;
    memset(&s, 0, sizeof(s));
    ck_assert_int_eq(fnp_snapshot_add_thread(&s, T, 0, now), 0);
    fnp_profile_init(p);
    struct fnp_tree_node *tree = calloc(s.n + 1, sizeof(*tree));
    for (size_t i = 0; i < s.n; i++) {
        struct fnp_key key = {"test.c", 1, name_of(s.nodes[i].fn)};
        int64_t f = fnp_profile_func(p, &key);
        ck_assert_int_ge(f, 0);
        tree[i] = (struct fnp_tree_node){(uint32_t)f,
                                         s.nodes[i].parent,
                                         s.nodes[i].ncalls,
                                         s.nodes[i].ticks,
                                         s.nodes[i].back,
                                         s.nodes[i].flags,
                                         0};
    }
    ck_assert_int_eq(fnp_profile_add_tree(p, tree, s.n, 1.0), 0);
    free(tree);
    fnp_snapshot_free(&s);
}

static const struct fnp_stats *func(const struct fnp_profile *p, const char *name)
{
    for (size_t i = 0; i < p->nfuncs; i++)
        if (strcmp(p->funcs[i].key.name, name) == 0)
            return &p->funcs[i].st;
    ck_abort_msg("no function %s", name);
    return NULL;
}

static const struct fnp_stats *edge(const struct fnp_profile *p, const char *caller,
                                    const char *callee)
{
    for (size_t i = 0; i < p->nedges; i++)
        if (strcmp(p->funcs[p->edges[i].caller].key.name, caller) == 0 &&
            strcmp(p->funcs[p->edges[i].callee].key.name, callee) == 0)
            return &p->edges[i].st;
    ck_abort_msg("no edge %s -> %s", caller, callee);
    return NULL;
}

#define ck_stats(st, nc, pc, tt, ct)                                                               \
    do {                                                                                           \
        const struct fnp_stats *st_ = (st);                                                        \
        ck_assert_uint_eq(st_->ncalls, (nc));                                                      \
        ck_assert_uint_eq(st_->pcalls, (pc));                                                      \
        ck_assert_double_eq(st_->tottime, (tt));                                                   \
        ck_assert_double_eq(st_->cumtime, (ct));                                                   \
    } while (0)

static void fib(int n)
{
    enter(FIB);
    clk += 1;
    if (n >= 2) {
        fib(n - 1);
        fib(n - 2);
    }
    leave(FIB);
}

static void b(int n);

static void a(int n)
{
    enter(A);
    clk += 1;
    b(n);
    leave(A);
}

static void b(int n)
{
    enter(B);
    clk += 10;
    if (n > 0)
        a(n - 1);
    leave(B);
}

START_TEST(worked_example_matches_cprofile)
{
    enter(MAIN);
    clk += 100;
    fib(5);
    a(1);
    leave(MAIN);
    struct fnp_profile p;
    derive(&p, clk);
    ck_stats(func(&p, "fib"), 15, 1, 15, 15);
    ck_stats(edge(&p, "fib", "fib"), 14, 2, 14, 14);
    ck_stats(edge(&p, "main", "fib"), 1, 1, 1, 15);
    ck_stats(func(&p, "a"), 2, 1, 2, 22);
    ck_stats(edge(&p, "b", "a"), 1, 1, 1, 11);
    ck_stats(edge(&p, "main", "a"), 1, 1, 1, 22);
    ck_stats(func(&p, "b"), 2, 1, 20, 21);
    ck_stats(edge(&p, "a", "b"), 2, 1, 20, 21);
    ck_stats(func(&p, "main"), 1, 1, 100, 137);
    ck_assert_uint_eq(p.nedges, 5);
    fnp_profile_free(&p);
}
END_TEST

START_TEST(two_fib18_runs_give_cprofile_counts)
{
    enter(MAIN);
    fib(18);
    fib(18);
    leave(MAIN);
    struct fnp_profile p;
    derive(&p, clk);
    ck_assert_uint_eq(func(&p, "fib")->ncalls, 16722);
    ck_assert_uint_eq(func(&p, "fib")->pcalls, 2);
    ck_assert_uint_eq(edge(&p, "fib", "fib")->ncalls, 16720);
    ck_assert_uint_eq(edge(&p, "fib", "fib")->pcalls, 4);
    fnp_profile_free(&p);
}
END_TEST

START_TEST(open_calls_are_closed_at_the_snapshot)
{
    enter(MAIN);
    clk += 3;
    enter(F);
    clk += 4;
    /* exit() called inside f: neither returns before the dump */
    struct fnp_profile p;
    derive(&p, clk + 2);
    ck_stats(func(&p, "main"), 1, 1, 3, 9);
    ck_stats(func(&p, "f"), 1, 1, 6, 6);
    fnp_profile_free(&p);
    /* the live tree is untouched: the calls can still return normally */
    ck_assert_uint_eq(T->depth, 2);
}
END_TEST

START_TEST(skipped_exits_close_with_the_enclosing_function)
{
    enter(MAIN);
    enter(F);
    clk += 1;
    enter(G);
    clk += 2;
    /* longjmp from g back into main: f's and g's exit hooks never run */
    clk += 5;
    leave(MAIN);
    ck_assert_uint_eq(T->depth, 0);
    struct fnp_profile p;
    derive(&p, clk);
    ck_stats(func(&p, "main"), 1, 1, 0, 8);
    ck_stats(func(&p, "f"), 1, 1, 1, 8);
    ck_stats(func(&p, "g"), 1, 1, 7, 7);
    ck_assert_uint_eq(T->unmatched, 0);
    fnp_profile_free(&p);
}
END_TEST

START_TEST(unwind_closes_the_frames_below_the_landing_point)
{
    enter(MAIN);
    enter(F);
    uintptr_t landing = T->frames[T->depth - 1].sp; /* f catches, or setjmp'd */
    clk += 1;
    enter(G);
    enter(A);
    clk += 2;
    fnp_cct_unwind(T, landing, clk); /* thrown from a, caught in f */
    ck_assert_uint_eq(T->depth, 2);
    clk += 4;
    enter(B); /* f goes on and calls b: b is f's child, not a's */
    leave(B);
    leave(F);
    leave(MAIN);
    ck_assert_uint_eq(T->unmatched, 0);
    struct fnp_profile p;
    derive(&p, clk);
    ck_stats(func(&p, "f"), 1, 1, 5, 7);
    ck_stats(func(&p, "g"), 1, 1, 0, 2);
    ck_stats(func(&p, "a"), 1, 1, 2, 2);
    ck_stats(edge(&p, "f", "b"), 1, 1, 0, 0);
    fnp_profile_free(&p);
}
END_TEST

START_TEST(exit_without_entry_is_counted_and_ignored)
{
    leave(F);
    enter(MAIN);
    leave(G);
    leave(MAIN);
    ck_assert_uint_eq(T->unmatched, 2);
    ck_assert_uint_eq(T->depth, 0);
    struct fnp_profile p;
    derive(&p, clk);
    ck_assert_uint_eq(p.nfuncs, 1);
    ck_assert_uint_eq(func(&p, "main")->ncalls, 1);
    fnp_profile_free(&p);
}
END_TEST

START_TEST(wide_tree_keeps_every_child)
{
    /* 5000 callees of one caller in a scrambled order: the hash table grows many times and
     * the "hot child" guess is mostly wrong. */
    enter(MAIN);
    for (int round = 0; round < 3; round++) {
        for (uint32_t i = 0; i < 5000; i++) {
            uintptr_t fn = 0x100000 + ((i * 7919u) % 5000u) * 16;
            enter(fn);
            clk += 1;
            leave(fn);
        }
    }
    leave(MAIN);
    ck_assert_uint_eq(T->nodes, 5001);
    struct fnp_profile p;
    derive(&p, clk);
    ck_assert_uint_eq(p.nfuncs, 5001);
    ck_assert_uint_eq(p.nedges, 5000);
    for (size_t i = 0; i < p.nfuncs; i++)
        if (strcmp(p.funcs[i].key.name, "main") != 0)
            ck_stats(&p.funcs[i].st, 3, 3, 3, 3);
    ck_stats(func(&p, "main"), 1, 1, 0, 15000);
    fnp_profile_free(&p);
}
END_TEST

/* Fills fns with n function addresses whose home slot under parent is home in the first
 * table (256 slots), or, for SIZE_MAX, the first address's; returns that slot. */
static size_t keys_at_home(const struct fnp_node *parent, size_t home, uintptr_t *fns, int n)
{
    int got = 0;
    for (uintptr_t fn = 0x100000; got < n; fn += 16) {
        size_t h = fnp_cct_slot(parent, fn, 64 - 8);
        if (home == SIZE_MAX)
            home = h;
        if (h == home)
            fns[got++] = fn;
    }
    return home;
}

START_TEST(a_run_past_the_table_end_grows_it)
{
    /* 40 callees whose home is the first table's last slot: the run cannot fit in the
     * spill slots after it, so the table grows (more than once, as the keys share their
     * top bits). Every child must stay found, by the cold lookup and the hooks' probe. */
    enter(MAIN);
    struct fnp_node *main_node = T->frames[0].node;
    uintptr_t fns[40];
    keys_at_home(main_node, 255, fns, 40);
    for (int round = 0; round < 2; round++)
        for (int i = 0; i < 40; i++) {
            enter(fns[i]);
            clk += 1;
            leave(fns[i]);
        }
    for (int i = 0; i < 40; i++) {
        struct fnp_node *c = fnp_cct_probe(T, main_node, fns[i]);
        if (c) {
            ck_assert_ptr_eq(c->parent, main_node);
            ck_assert_uint_eq(c->fn, fns[i]);
        }
    }
    leave(MAIN);
    ck_assert_uint_eq(T->nodes, 41);
    ck_assert_uint_ge(T->contexts.len, 1024 + FNP_TABLE_SPILL);
    struct fnp_profile p;
    derive(&p, clk);
    ck_assert_uint_eq(p.nfuncs, 41);
    for (size_t i = 0; i < p.nfuncs; i++)
        if (strcmp(p.funcs[i].key.name, "main") != 0)
            ck_stats(&p.funcs[i].st, 2, 2, 2, 2);
    fnp_profile_free(&p);
}
END_TEST

START_TEST(a_key_found_past_its_home_moves_there)
{
    /* Three callees sharing a home slot fill it and the two after it. Each found by the
     * hooks' probe must then sit at home, and every one must still be found, by the probe
     * and by the cold path, with exact counts. */
    enter(MAIN);
    struct fnp_node *main_node = T->frames[0].node;
    uintptr_t fns[3];
    size_t home = keys_at_home(main_node, SIZE_MAX, fns, 3);
    for (int i = 0; i < 3; i++) {
        enter(fns[i]);
        leave(fns[i]);
    }
    struct fnp_node **slots = T->contexts.slots;
    ck_assert_uint_eq(slots[home]->fn, fns[0]);
    ck_assert_uint_eq(slots[home + 2]->fn, fns[2]);
    for (int round = 0; round < 2; round++)
        for (int i = 2; i >= 0; i--) {
            struct fnp_node *c = fnp_cct_probe(T, main_node, fns[i]);
            ck_assert_ptr_nonnull(c);
            ck_assert_uint_eq(c->fn, fns[i]);
            ck_assert_ptr_eq(slots[home], c);
            enter(fns[i]); /* the cold path's lookup, through a missed hot child */
            leave(fns[i]);
        }
    leave(MAIN);
    ck_assert_uint_eq(T->nodes, 4);
    struct fnp_profile p;
    derive(&p, clk);
    for (int i = 0; i < 3; i++) {
        char name[32];
        snprintf(name, sizeof(name), "fn%llx", (unsigned long long)fns[i]);
        ck_assert_uint_eq(func(&p, name)->ncalls, 3);
    }
    fnp_profile_free(&p);
}
END_TEST

START_TEST(deep_recursion_grows_the_stack)
{
    enum { DEPTH = 100000 };
    for (int i = 0; i < DEPTH; i++) {
        enter(i % 2 ? A : B);
        clk++;
    }
    ck_assert_uint_eq(T->depth, DEPTH);
    for (int i = DEPTH - 1; i >= 0; i--)
        leave(i % 2 ? A : B);
    ck_assert_uint_eq(T->depth, 0);
    ck_assert_uint_eq(T->dropped_calls, 0);
    struct fnp_profile p;
    derive(&p, clk);
    ck_stats(func(&p, "a"), DEPTH / 2, 1, DEPTH / 2, DEPTH - 1);
    ck_stats(func(&p, "b"), DEPTH / 2, 1, DEPTH / 2, DEPTH);
    ck_stats(edge(&p, "b", "a"), DEPTH / 2, 1, DEPTH / 2, DEPTH - 1);
    ck_stats(edge(&p, "a", "b"), DEPTH / 2 - 1, 1, DEPTH / 2 - 1, DEPTH - 2);
    fnp_profile_free(&p);
}
END_TEST

/* ---- an oracle: cProfile's own algorithm (_lsprof.c), on the same events ---------- */

enum { NFN = 6, MAXD = 40000 };

struct ref_stats {
    uint64_t ncalls, rec; /* rec: calls made while one was open (pcalls = ncalls - rec) */
    int64_t tt, it;       /* cumulative (primitive calls only) and own time */
    int level;            /* open activations */
};

static struct ref_stats rf[NFN], re[NFN + 1][NFN]; /* re[caller + 1][callee]; 0: no caller */
static struct {
    int fn;
    uint64_t t0, sub;
} rstack[MAXD];
static int rdepth;

static uintptr_t fn_addr(int f)
{
    return 0x10000 + 0x100 * (uintptr_t)f;
}

static void both_enter(int f)
{
    struct ref_stats *e = &re[rdepth ? rstack[rdepth - 1].fn + 1 : 0][f];
    rf[f].level++;
    e->level++;
    rstack[rdepth].fn = f;
    rstack[rdepth].t0 = clk;
    rstack[rdepth++].sub = 0;
    enter(fn_addr(f));
}

static void ref_stop(struct ref_stats *x, int64_t tt, int64_t it)
{
    if (--x->level == 0)
        x->tt += tt;
    else
        x->rec++;
    x->it += it;
    x->ncalls++;
}

static void both_leave(void)
{
    int f = rstack[--rdepth].fn;
    int64_t tt = (int64_t)(clk - rstack[rdepth].t0), it = tt - (int64_t)rstack[rdepth].sub;
    ref_stop(&rf[f], tt, it);
    ref_stop(&re[rdepth ? rstack[rdepth - 1].fn + 1 : 0][f], tt, it);
    if (rdepth)
        rstack[rdepth - 1].sub += (uint64_t)tt;
    leave(fn_addr(f));
}

static uint64_t rng = 88172645463325252ull;

static unsigned rnd(unsigned n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng % n);
}

/* A random call tree, biased to call what is already open: recursion of every shape. */
static void random_calls(int depth, int budget)
{
    int f = depth && rnd(3) ? rstack[rnd((unsigned)rdepth)].fn : (int)rnd(NFN);
    both_enter(f);
    clk += rnd(4);
    for (int k = rnd(depth < 12 ? 4 : 2); k > 0 && depth < budget; k--) {
        random_calls(depth + 1, budget);
        clk += rnd(3);
    }
    both_leave();
}

/* How much of the oracle's numbers fnprof must give. */
enum oracle {
    EXACT,       /* every count and time */
    SPLIT_BOUND, /* beyond the node cap's slack: counts, functions' times and edges' cumtimes
                    exact; an edge's tottime between 0 and its cumtime, the edges into a
                    function summing to its tottime (cct.c: capped_child) */
};

/* fnprof's numbers against the oracle's for every function and edge. */
static void check_against_oracle(enum oracle want)
{
    struct fnp_profile p;
    derive(&p, clk);
    for (int f = 0; f < NFN; f++) {
        if (!rf[f].ncalls)
            continue;
        char name[32];
        snprintf(name, sizeof(name), "fn%llx", (unsigned long long)fn_addr(f));
        const struct fnp_stats *st = func(&p, name);
        ck_assert_uint_eq(st->ncalls, rf[f].ncalls);
        ck_assert_uint_eq(st->pcalls, rf[f].ncalls - rf[f].rec);
        ck_assert_double_eq(st->tottime, (double)rf[f].it);
        ck_assert_double_eq(st->cumtime, (double)rf[f].tt);
        double edges_tottime = 0;
        for (int c = 0; c < NFN; c++) {
            const struct ref_stats *x = &re[c + 1][f];
            if (!x->ncalls)
                continue;
            char caller[32];
            snprintf(caller, sizeof(caller), "fn%llx", (unsigned long long)fn_addr(c));
            const struct fnp_stats *es = edge(&p, caller, name);
            ck_assert_uint_eq(es->ncalls, x->ncalls);
            ck_assert_uint_eq(es->pcalls, x->ncalls - x->rec);
            ck_assert_double_eq(es->cumtime, (double)x->tt);
            if (want == EXACT)
                ck_assert_double_eq(es->tottime, (double)x->it);
            ck_assert_double_ge(es->tottime, 0);
            ck_assert_double_le(es->tottime, es->cumtime);
            edges_tottime += es->tottime;
        }
        if (!re[0][f].ncalls) /* every call through an edge: they split its tottime */
            ck_assert_double_le(fabs(edges_tottime - st->tottime), 1e-6 * st->tottime + 1e-9);
    }
    fnp_profile_free(&p);
}

START_TEST(random_recursion_matches_lsprof)
{
    /* Recursion of every shape gets folded (cct.c: fold_target); the numbers must not
     * notice. 200 random trees, each up to 40 deep. */
    rng += (uint64_t)_i * 7919;
    for (int i = 0; i < 200; i++)
        random_calls(0, 40);
    check_against_oracle(EXACT);
}
END_TEST

START_TEST(periodic_recursion_takes_a_few_nodes)
{
    /* a -> b -> c -> a ... 30,000 deep: folded after two cycles. */
    for (int i = 0; i < 30000; i++) {
        both_enter(i % 3);
        clk += 1;
    }
    while (rdepth)
        both_leave();
    ck_assert_uint_le(T->nodes, 12);
    check_against_oracle(EXACT);
}
END_TEST

/* comb.c of the e2e tests: walk(d) calls 4 functions that each walk(d - 1). */
static void comb_walk(int d)
{
    both_enter(0);
    clk++;
    for (int k = 1; d > 0 && k <= 4; k++) {
        both_enter(k);
        clk++;
        comb_walk(d - 1);
        if (k == 4 && d % 3 == 0) {
            both_enter(1);
            comb_walk(d - 2);
            both_leave();
        }
        both_leave();
    }
    both_leave();
}

START_TEST(node_cap_keeps_comb_counts_exact)
{
    static const int caps[] = {300, 20, 5};
    fnp_config.max_nodes = caps[_i];
    both_enter(5); /* main */
    comb_walk(_i ? 4 : 7);
    both_leave();
    ck_assert_uint_gt(T->merged, 0);
    check_against_oracle(EXACT);
    fnp_config.max_nodes = 0;
}
END_TEST

/* The most nodes and links beyond a cap of max (cct.c: capped_child): the links of tree
 * nodes into the merged region, up to the slack; per class (caller, callee, 4 flags) a
 * merged node and its link; per merged node a link per callee and flags. */
#define CLASSES (4 * (NFN + 1) * NFN)
#define SLACK(max) ((uint64_t)(max) / 8 + 1024)
#define BEYOND_CAP(max) (SLACK(max) + CLASSES * (2 + 4 * NFN))
/* Exact while the links of tree nodes stayed within the slack (fnp_nodes_total only grows). */
#define ORACLE_FOR(max) (fnp_nodes_total < (max) + SLACK(max) ? EXACT : SPLIT_BOUND)

START_TEST(node_cap_keeps_counts_exact)
{
    /* Far more contexts than the cap allows: calls, primitive calls and edges stay exact,
     * the merged calls are counted, and memory stays near the cap. */
    fnp_config.max_nodes = 64;
    for (int i = 0; i < 300; i++)
        random_calls(0, 30);
    ck_assert_uint_gt(T->merged, 0);
    ck_assert_uint_le(fnp_nodes_total, 64 + BEYOND_CAP(64));
    ck_assert_uint_ge(fnp_nodes_total, 64 + SLACK(64)); /* past the slack */
    check_against_oracle(SPLIT_BOUND);
    fnp_config.max_nodes = 0;
}
END_TEST

START_TEST(node_cap_within_its_slack_keeps_times_exact)
{
    /* Beyond the cap, but the links of tree nodes into the merged region within their
     * slack: every time is exact, however the merged calls nest. */
    fnp_config.max_nodes = 64;
    for (int i = 0; i < 12; i++)
        random_calls(0, 30);
    ck_assert_uint_gt(T->merged, 0);
    ck_assert_uint_lt(fnp_nodes_total, 64 + SLACK(64));
    check_against_oracle(EXACT);
    fnp_config.max_nodes = 0;
}
END_TEST

/* A longjmp to the frame of depth keep: the frames above it end now, their exits never
 * come (fnp_cct_unwind, by the stack pointers enter() gives). */
static void both_unwind(int keep)
{
    while (rdepth > keep) {
        int f = rstack[--rdepth].fn;
        int64_t tt = (int64_t)(clk - rstack[rdepth].t0), it = tt - (int64_t)rstack[rdepth].sub;
        ref_stop(&rf[f], tt, it);
        ref_stop(&re[rdepth ? rstack[rdepth - 1].fn + 1 : 0][f], tt, it);
        if (rdepth)
            rstack[rdepth - 1].sub += (uint64_t)tt;
    }
    fnp_cct_unwind(T, ((uintptr_t)1 << 40) - 64 * (uintptr_t)keep + 32, clk);
    ck_assert_uint_eq(T->depth, (uint32_t)keep);
}

/* random_calls, and now and then a longjmp down the stack. */
static void random_calls_jumping(int depth, int budget)
{
    int f = rdepth && rnd(3) ? rstack[rnd((unsigned)rdepth)].fn : (int)rnd(NFN);
    both_enter(f);
    clk += rnd(4);
    int base = rdepth;
    for (int k = rnd(depth < 12 ? 4 : 2); k > 0 && depth < budget; k--) {
        random_calls_jumping(depth + 1, budget);
        clk += rnd(3);
        if (rdepth < base)
            return; /* jumped over this call too */
    }
    if (!rnd(40))
        both_unwind(rnd((unsigned)rdepth));
    else
        both_leave();
}

/* fn 0 and 1 by the Thue-Morse word, levels deep: no block repeats, nothing folds. */
static void chain(int level, int levels, int budget)
{
    both_enter(level > 1 && __builtin_popcount((unsigned)level - 1) % 2 ? 1 : 0);
    clk++;
    if (level < levels)
        chain(level + 1, levels, budget);
    else
        for (int i = 0; i < 50; i++)
            random_calls_jumping(level, budget);
    if (rdepth >= level)
        both_leave();
}

START_TEST(calls_beyond_the_cap_count_what_is_open_exactly)
{
    /* The open functions and edges beyond the cap are counted lazily (cct.c: open_sync):
     * frames popped by exits and by longjmps, pushed again from hot children, all in
     * paths deeper than a path holds (PROF_MAX_NODES / 64, at least 64). */
    static const int caps[] = {4096, 200, 20};
    fnp_config.max_nodes = caps[_i];
    rng += (uint64_t)_i * 104729;
    both_enter(5);
    for (int i = 0; i < 20; i++) {
        chain(1, 150, 190);
        random_calls_jumping(rdepth, 40);
        if (rdepth == 0)
            both_enter(5);
    }
    while (rdepth)
        both_leave();
    ck_assert_uint_gt(T->merged, 0);
    ck_assert_uint_le(fnp_nodes_total, caps[_i] + BEYOND_CAP(caps[_i]));
    check_against_oracle(ORACLE_FOR(caps[_i]));
    fnp_config.max_nodes = 0;
}
END_TEST

START_TEST(a_link_beyond_the_cap_pushed_from_another_path_sees_that_path)
{
    /* p under x and p under y both call c past the cap: one link (same caller function,
     * callee, flags), each p's hot child. Pushed from p under x after being counted from p
     * under y, the frames below it are x's: x must be found open by c's callee. */
    enum { X, Y, P, C, H, M };
    fnp_config.max_nodes = 6;
    both_enter(M);
    for (int via = X; via <= Y; via++) {
        both_enter(via);
        both_enter(P);
        both_leave();
        both_leave();
    }
    both_enter(H); /* the sixth node: the cap */
    both_leave();
    for (int round = 0; round < 2; round++)
        for (int via = X; via <= Y; via++) {
            both_enter(via);
            both_enter(P);
            both_enter(C);
            both_enter(X); /* open above when via is X */
            both_leave();
            both_leave();
            both_leave();
            both_leave();
        }
    both_leave();
    ck_assert_uint_gt(T->merged, 0);
    check_against_oracle(EXACT);
    fnp_config.max_nodes = 0;
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cct");
    TCase *tc = tcase_create("cct");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, worked_example_matches_cprofile);
    tcase_add_test(tc, two_fib18_runs_give_cprofile_counts);
    tcase_add_test(tc, open_calls_are_closed_at_the_snapshot);
    tcase_add_test(tc, skipped_exits_close_with_the_enclosing_function);
    tcase_add_test(tc, exit_without_entry_is_counted_and_ignored);
    tcase_add_test(tc, unwind_closes_the_frames_below_the_landing_point);
    tcase_add_test(tc, wide_tree_keeps_every_child);
    tcase_add_test(tc, a_run_past_the_table_end_grows_it);
    tcase_add_test(tc, a_key_found_past_its_home_moves_there);
    tcase_add_test(tc, deep_recursion_grows_the_stack);
    tcase_add_loop_test(tc, random_recursion_matches_lsprof, 0, 5);
    tcase_add_test(tc, periodic_recursion_takes_a_few_nodes);
    tcase_add_test(tc, node_cap_keeps_counts_exact);
    tcase_add_test(tc, node_cap_within_its_slack_keeps_times_exact);
    tcase_add_loop_test(tc, node_cap_keeps_comb_counts_exact, 0, 3);
    tcase_add_loop_test(tc, calls_beyond_the_cap_count_what_is_open_exactly, 0, 3);
    tcase_add_test(tc, a_link_beyond_the_cap_pushed_from_another_path_sees_that_path);
    suite_add_tcase(s, tc);
    return fnp_check_run(s);
}
/* SPDX-License-Identifier: MIT */
