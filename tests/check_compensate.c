/*
 * Compensation (profile/compensate.c): the arithmetic on hand-made trees with exact expected
 * values, the clamp at zero, cProfile's recursion rules (a folded recursion's links and back
 * ticks included), the dict following the tree, the calibration's metadata through a file
 * and back, and every refusal.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "profile.h"

#define ROOT FNP_NO_PARENT

static const char *const one_thread[] = {"thread 1"};
static const char *const two_threads[] = {"thread 1", "thread 2"};

static uint32_t fn(struct fnp_profile *p, const char *file, const char *name)
{
    struct fnp_key k = {file, 0, name};
    int64_t i = fnp_profile_func(p, &k);
    ck_assert_int_ge(i, 0);
    return (uint32_t)i;
}

/* p with functions main, a, b (indices 0-2), the tree t kept and its numbers derived as the
 * runtime's dump does; 1 tick = 1 ns, calibration in ns given. */
static void make(struct fnp_profile *p, const struct fnp_tree_node *t, size_t n, double in,
                 double out)
{
    fnp_profile_init(p);
    fn(p, "/src/x.c", "main");
    fn(p, "/src/x.c", "a");
    fn(p, "/src/x.c", "b");
    ck_assert_int_eq(fnp_profile_add_tree(p, t, n, 1e-9), 0);
    ck_assert_int_eq(fnp_tree_set(p, t, n, FNP_TREE_TIME, 1e-9, one_thread, 1), 0);
    ck_assert_int_eq(fnp_calibration_put(p, in, out), 0);
}

static const struct fnp_edge *edge(const struct fnp_profile *p, uint32_t caller, uint32_t callee)
{
    int64_t e = fnp_profile_find_edge(p, caller, callee);
    ck_assert_int_ge(e, 0);
    return &p->edges[e];
}

/* seconds of 1-ns ticks, as the model converts them (ticks * 1e-9, once) */
#define NS(x) ((double)(x)*1e-9)

START_TEST(own_time_loses_its_calls_in_and_its_childrens_calls_out)
{
    /* main (1 call, 1000) -> a (10 calls, 600) -> b (20 calls, 200); in 2, out 3 */
    struct fnp_tree_node t[] = {
        {0, ROOT, 1, 1000, 0, 0, 0},
        {1, 0, 10, 600, 0, 0, 0},
        {2, 1, 20, 200, 0, 0, 0},
    };
    struct fnp_compensated r;
    ck_assert_int_eq(fnp_tree_compensate(t, 3, 2, 3, &r), 0);
    /* own: main 400 - 1*2 - 10*3 = 368; a 400 - 10*2 - 20*3 = 320; b 200 - 20*2 = 160 */
    ck_assert_uint_eq(t[2].ticks, 160);
    ck_assert_uint_eq(t[1].ticks, 320 + 160);
    ck_assert_uint_eq(t[0].ticks, 368 + 480);
    /* cumulative: ticks - ncalls*in - (calls under it)*(in + out): main 1000 - 2 - 30*5 */
    ck_assert_uint_eq(t[0].ticks, 1000 - 2 - 30 * 5);
    ck_assert_uint_eq(r.contexts, 3);
    ck_assert_uint_eq(r.clamped, 0);
    ck_assert_uint_eq(r.not_taken, 0);
}
END_TEST

START_TEST(fractional_costs_round_each_context_once)
{
    /* in 0.4, out 0.3 ticks: a's 7 calls 2.8 and b's 5 calls' 1.5: 100 - 4.3 -> 96 */
    struct fnp_tree_node t[] = {
        {1, ROOT, 7, 150, 0, 0, 0},
        {2, 0, 5, 50, 0, 0, 0},
    };
    struct fnp_compensated r;
    ck_assert_int_eq(fnp_tree_compensate(t, 2, 0.4, 0.3, &r), 0);
    ck_assert_uint_eq(t[1].ticks, 48); /* 50 - 2 */
    ck_assert_uint_eq(t[0].ticks, 96 + 48);
}
END_TEST

START_TEST(a_context_is_clamped_at_zero_and_counted)
{
    /* b's 100 calls took 150 ticks: at in 2 that is 200 to take: b's own time is 0, not
     * -50, and a's time under it holds that 0; a itself loses its 1 call and b's out. */
    struct fnp_tree_node t[] = {
        {1, ROOT, 1, 1000, 0, 0, 0},
        {2, 0, 100, 150, 0, 0, 0},
    };
    struct fnp_compensated r;
    ck_assert_int_eq(fnp_tree_compensate(t, 2, 2, 3, &r), 0);
    ck_assert_uint_eq(t[1].ticks, 0);
    ck_assert_uint_eq(t[0].ticks, 850 - 2 - 300);
    ck_assert_uint_eq(r.clamped, 1);
    ck_assert_uint_eq(r.not_taken, 50);
    /* a context whose own time the clock's noise already made negative: clamped too */
    struct fnp_tree_node u[] = {
        {1, ROOT, 1, 100, 0, 0, 0},
        {2, 0, 1, 104, 0, 0, 0},
    };
    ck_assert_int_eq(fnp_tree_compensate(u, 2, 1, 1, &r), 0);
    ck_assert_uint_eq(u[0].ticks, u[1].ticks); /* a's own 0 */
    ck_assert_uint_eq(u[1].ticks, 103);
    ck_assert_uint_eq(r.clamped, 1);
    ck_assert_uint_eq(r.not_taken, 2); /* a's cut, 1 + 1; its -4 was noise, not hook cost */
}
END_TEST

START_TEST(recursion_keeps_cprofile_cumtime_of_the_outermost_call)
{
    /* main -> f -> f -> f (f is function 1), one call each; own 100 a level and 300 for
     * the innermost; in 10, out 20 */
    struct fnp_profile p;
    struct fnp_tree_node t[] = {
        {0, ROOT, 1, 1000, 0, 0, 0},
        {1, 0, 1, 900, 0, 0, 0},
        {1, 1, 1, 600, 0, 0, 0},
        {1, 2, 1, 300, 0, 0, 0},
    };
    make(&p, t, 4, 10, 20);
    struct fnp_compensated r;
    ck_assert_int_eq(fnp_profile_compensate(&p, &r), 0);
    /* own: main 100-10-20 = 70; f 300-10-20 = 270 twice; innermost 300-10 = 290 */
    ck_assert_uint_eq(p.tree[3].ticks, 290);
    ck_assert_uint_eq(p.tree[2].ticks, 560);
    ck_assert_uint_eq(p.tree[1].ticks, 830);
    ck_assert_uint_eq(p.tree[0].ticks, 900);
    const struct fnp_stats *f = &p.funcs[1].st;
    ck_assert_uint_eq(f->ncalls, 3);
    ck_assert_uint_eq(f->pcalls, 1);
    /* cumtime over primitive calls only: the outermost f, 900 - 10 - 2 * 30 */
    ck_assert(f->cumtime == NS(830));
    ck_assert(f->tottime == NS(270 + 270 + 290));
    ck_assert(p.funcs[0].st.cumtime == NS(900));
    ck_assert(p.funcs[0].st.tottime == NS(70));
    const struct fnp_edge *ff = edge(&p, 1, 1);
    ck_assert_uint_eq(ff->st.ncalls, 2);
    ck_assert_uint_eq(ff->st.pcalls, 1);
    ck_assert(ff->st.cumtime == NS(560));
    ck_assert(ff->st.tottime == NS(270 + 290));
    ck_assert(edge(&p, 0, 1)->st.cumtime == NS(830));
    fnp_profile_free(&p);
}
END_TEST

/* main -> a, a recursing 6 levels deep, 100 ticks of own time a level (main 100 too).
 * The runtime folds it (runtime/cct.c): nodes a1, a2, a3, and a link under a3 whose
 * target is a3 takes levels 4-6 (3 calls, 300 + 200 + 100 ticks): a3 gets 4 calls and
 * 1000 ticks, back +600, and its tree parent a2 back -600 (fnp_raw_add_link). */
static const struct fnp_tree_node folded[] = {
    {0, ROOT, 1, 700, 0, 0, 0},
    {1, 0, 1, 600, 0, 0, 0},
    {1, 1, 1, 500, -600, 0, 0},
    {1, 2, 4, 1000, 600, 0, 0},
};

START_TEST(a_folded_recursion_compensates_as_if_unfolded)
{
    struct fnp_profile p;
    make(&p, folded, 4, 10, 20);
    ck_assert(p.funcs[1].st.cumtime == NS(600));
    ck_assert(p.funcs[1].st.tottime == NS(600));
    ck_assert_int_eq(fnp_profile_compensate(&p, NULL), 0);
    /* Unfolded, levels 1-5 each lose 10 + 20 and level 6 loses 10: a's own time is
     * 600 - 5 * 30 - 10 = 440, its cumtime the outermost call's, 600 - 10 - 5 * 30 = 440;
     * main's 700 - 10 - 6 * 30 = 510; the edge a -> a's cumtime is level 2's, 500 - 10 -
     * 4 * 30 = 370. The folded tree gives the same numbers. */
    ck_assert_uint_eq(p.funcs[1].st.ncalls, 6);
    ck_assert_uint_eq(p.funcs[1].st.pcalls, 1);
    ck_assert(p.funcs[1].st.tottime == NS(440));
    ck_assert(p.funcs[1].st.cumtime == NS(440));
    ck_assert(p.funcs[0].st.cumtime == NS(510));
    const struct fnp_edge *aa = edge(&p, 1, 1);
    ck_assert_uint_eq(aa->st.ncalls, 5);
    ck_assert_uint_eq(aa->st.pcalls, 1);
    ck_assert(aa->st.cumtime == NS(370));
    ck_assert_uint_eq(p.tree[1].ticks, 440);
    ck_assert_uint_eq(p.tree[0].ticks, 510);
    /* Node by node (what the views draw): a2 keeps its own level less its calls' in and
     * its child's four calls' out, a3 levels 3-6 less their in (the link's calls are a3's
     * own: their out stays with a2, a node of the same function). */
    uint64_t self[4];
    fnp_tree_values(&p, self, NULL);
    ck_assert_uint_eq(self[0], 70);
    ck_assert_uint_eq(self[1], 70);
    ck_assert_uint_eq(self[2], 100 - 10 - 4 * 20);
    ck_assert_uint_eq(self[3], 400 - 4 * 10);
    fnp_profile_free(&p);
}
END_TEST

START_TEST(a_folded_recursion_settles_within_its_function_before_clamping)
{
    /* As above with out 30: a2 is charged the out of the four calls a3 holds, three of which
     * a3 made itself (through its link): 100 - 10 - 4 * 30 = -30. Clamped, a's own time
     * would be 30 too large; settled, a3 gives those 30 back and nothing is clamped: a's
     * own time is the unfolded 5 * (100 - 10 - 30) + 90 = 390. */
    struct fnp_profile p;
    make(&p, folded, 4, 10, 30);
    struct fnp_compensated r;
    ck_assert_int_eq(fnp_profile_compensate(&p, &r), 0);
    ck_assert_uint_eq(r.clamped, 0);
    ck_assert(p.funcs[1].st.tottime == NS(390));
    ck_assert(p.funcs[1].st.cumtime == NS(390)); /* 600 - 10 - 5 * 40 */
    ck_assert(p.funcs[0].st.cumtime == NS(450)); /* 700 - 10 - 6 * 40 */
    uint64_t self[4];
    fnp_tree_values(&p, self, NULL);
    ck_assert_uint_eq(self[2], 0);
    ck_assert_uint_eq(self[3], 360 - 30);
    fnp_profile_free(&p);
    /* a node with no back keeps its own: below 0, it is clamped, not settled */
    struct fnp_tree_node u[] = {
        {1, ROOT, 1, 1000, 0, 0, 0},
        {1, 0, 40, 100, 0, 0, 0},
        {1, 1, 1, 50, 0, 0, 0},
    };
    ck_assert_int_eq(fnp_tree_compensate(u, 3, 2, 3, &r), 0);
    ck_assert_uint_eq(r.clamped, 1);
    ck_assert_uint_eq(u[2].ticks, 48);
    ck_assert_uint_eq(u[1].ticks, 48); /* 50 - 80 - 3 clamped at 0 */
}
END_TEST

/* The dict of p equals the numbers fnp_profile_add_tree derives from p's tree (below a
 * synthetic root of function proc, if not -1), exactly. */
static void assert_dict_is_the_trees(const struct fnp_profile *p, int64_t proc)
{
    struct fnp_profile q;
    fnp_profile_init(&q);
    for (size_t i = 0; i < p->nfuncs; i++)
        fn(&q, p->funcs[i].key.file, p->funcs[i].key.name);
    size_t n = p->ntree + 1;
    struct fnp_tree_node *all = calloc(n, sizeof(*all));
    ck_assert_ptr_nonnull(all);
    all[0] = (struct fnp_tree_node){.func = (uint32_t)proc, .parent = ROOT, .ncalls = 1};
    for (size_t i = 0; i < p->ntree; i++) {
        all[i + 1] = p->tree[i];
        all[i + 1].parent = p->tree[i].parent == ROOT ? 0 : p->tree[i].parent + 1;
        if (p->tree[i].parent == ROOT)
            all[0].ticks += p->tree[i].ticks;
    }
    if (proc < 0) {
        for (size_t i = 1; i < n; i++)
            all[i].parent = all[i].parent == 0 ? ROOT : all[i].parent - 1;
        ck_assert_int_eq(fnp_profile_add_tree(&q, all + 1, n - 1, p->tick_seconds), 0);
    } else {
        ck_assert_int_eq(fnp_profile_add_tree(&q, all, n, p->tick_seconds), 0);
    }
    for (size_t f = 0; f < p->nfuncs; f++) {
        ck_assert_uint_eq(q.funcs[f].st.ncalls, p->funcs[f].st.ncalls);
        ck_assert_msg(q.funcs[f].st.tottime == p->funcs[f].st.tottime, "%s tottime %g, not %g",
                      p->funcs[f].key.name, p->funcs[f].st.tottime, q.funcs[f].st.tottime);
        ck_assert_msg(q.funcs[f].st.cumtime == p->funcs[f].st.cumtime, "%s cumtime %g, not %g",
                      p->funcs[f].key.name, p->funcs[f].st.cumtime, q.funcs[f].st.cumtime);
    }
    ck_assert_uint_eq(q.nedges, p->nedges);
    for (size_t e = 0; e < q.nedges; e++) {
        const struct fnp_edge *x = &q.edges[e], *y = edge(p, x->caller, x->callee);
        ck_assert(x->st.tottime == y->st.tottime && x->st.cumtime == y->st.cumtime);
    }
    free(all);
    fnp_profile_free(&q);
}

START_TEST(several_threads_hang_from_process_whose_time_follows_the_roots)
{
    /* Two threads, as the dump makes them: the dict from a forest under ('~', 0,
     * '<process>'), the tree kept without it. */
    struct fnp_profile p;
    fnp_profile_init(&p);
    fn(&p, "/src/x.c", "main");
    fn(&p, "/src/x.c", "a");
    uint32_t proc = fn(&p, "~", "<process>");
    struct fnp_tree_node forest[] = {
        {proc, ROOT, 1, 3000, 0, 0, 0}, {0, 0, 1, 2000, 0, 0, 0}, {1, 1, 50, 1500, 0, 0, 0},
        {1, 0, 1, 1000, 0, 0, 1},       {1, 3, 9, 400, 0, 0, 1},
    };
    ck_assert_int_eq(fnp_profile_add_tree(&p, forest, 5, 1e-9), 0);
    struct fnp_tree_node kept[4];
    for (size_t i = 0; i < 4; i++) {
        kept[i] = forest[i + 1];
        kept[i].parent = kept[i].parent == 0 ? ROOT : kept[i].parent - 1;
    }
    ck_assert_int_eq(fnp_tree_set(&p, kept, 4, FNP_TREE_TIME, 1e-9, two_threads, 2), 0);
    ck_assert_int_eq(fnp_calibration_put(&p, 2, 5), 0);
    assert_dict_is_the_trees(&p, proc);
    ck_assert_int_eq(fnp_profile_compensate(&p, NULL), 0);
    assert_dict_is_the_trees(&p, proc);
    /* thread 1: main 2000 - 2 - 50 * 7 = 1648; thread 2: a 1000 - 2 - 9 * 7 = 935 */
    ck_assert(p.funcs[proc].st.cumtime == NS(1648 + 935));
    ck_assert(p.funcs[proc].st.tottime == 0);
    ck_assert(edge(&p, proc, 1)->st.cumtime == NS(935));
    fnp_profile_free(&p);
}
END_TEST

START_TEST(the_dict_moves_by_what_the_tree_lost_where_the_tree_does_not_explain_it)
{
    /* A merge's label (no node) keeps its numbers; a dict figure the tree does not give
     * exactly (runs added with their own rounding) moves by the tree's difference. */
    struct fnp_profile p;
    struct fnp_tree_node t[] = {
        {0, ROOT, 1, 1000, 0, 0, 0},
        {1, 0, 10, 600, 0, 0, 0},
    };
    make(&p, t, 2, 2, 3);
    uint32_t label = fn(&p, "~", "<fnprof: 5 calls merged beyond PROF_MAX_NODES=9>");
    p.funcs[label].st.ncalls = p.funcs[label].st.pcalls = 1;
    p.funcs[1].st.tottime += NS(7); /* as if another run's rounding */
    ck_assert_int_eq(fnp_profile_compensate(&p, NULL), 0);
    ck_assert_uint_eq(p.funcs[label].st.ncalls, 1);
    ck_assert(p.funcs[label].st.tottime == 0 && p.funcs[label].st.cumtime == 0);
    /* a: own 600 - 20 = 580, and the 7 the tree never had */
    ck_assert(fabs(p.funcs[1].st.tottime - NS(587)) < 1e-15);
    ck_assert(p.funcs[1].st.cumtime == NS(580));
    ck_assert(p.funcs[0].st.tottime == NS(400 - 2 - 30));
    fnp_profile_free(&p);
}
END_TEST

START_TEST(the_profile_says_it_is_compensated_and_is_not_compensated_twice)
{
    struct fnp_profile p;
    struct fnp_tree_node t[] = {
        {0, ROOT, 1, 1000, 0, 0, 0},
        {1, 0, 100, 150, 0, 0, 0},
    };
    make(&p, t, 2, 2, 3);
    struct fnp_compensated r;
    ck_assert_int_eq(fnp_profile_compensate(&p, &r), 0);
    ck_assert_uint_eq(r.clamped, 1);
    ck_assert_str_eq(fnp_profile_meta(&p, FNP_META_CLAMPED), "1");
    const char *said = fnp_profile_meta(&p, FNP_META_COMPENSATED);
    ck_assert_ptr_nonnull(said);
    ck_assert_ptr_nonnull(strstr(said, "2.000 ns"));
    ck_assert_ptr_nonnull(strstr(said, "3.000 ns"));
    ck_assert_ptr_nonnull(strstr(said, "1 of 2 calling contexts clamped"));
    uint64_t ticks = p.tree[0].ticks;
    double tt = p.funcs[0].st.tottime;
    ck_assert_int_eq(fnp_profile_compensate(&p, &r), -EALREADY);
    ck_assert_uint_eq(p.tree[0].ticks, ticks);
    ck_assert(p.funcs[0].st.tottime == tt);
    fnp_profile_free(&p);
}
END_TEST

/* p written as the dump writes it and read back as the command reads it. */
static void round_trip(const struct fnp_profile *p, struct fnp_profile *q)
{
    struct fnp_sink s;
    fnp_sink_memory(&s);
    ck_assert_int_eq(fnp_profile_write(p, &s), 0);
    char why[256];
    fnp_profile_init(q);
    ck_assert_msg(fnp_pstats_read(q, s.buf, s.len, why, sizeof(why)) == 0, "%s", why);
    fnp_sink_free(&s);
}

START_TEST(the_stored_calibration_compensates_as_the_dump_does)
{
    /* The dump: calibration put, compensated, written. The command: the raw profile
     * written, read back, compensated from the calibration it stored. Same numbers, bit
     * for bit, and the same metadata. */
    struct fnp_tree_node t[] = {
        {0, ROOT, 1, 98765432, 0, 0, 0},  {1, 0, 31337, 54321098, 0, 0, 0},
        {2, 1, 99991, 12345678, 0, 0, 0}, {1, 2, 7, 4567, 0, 0, 0},
        {2, 0, 12, 3000, 0, 0, 0},
    };
    struct fnp_profile dump, raw, cmd, back;
    fnp_profile_init(&dump);
    fn(&dump, "/src/x.c", "main");
    fn(&dump, "/src/x.c", "a");
    fn(&dump, "/src/x.c", "b");
    double tick = 0.37037037037037035e-9; /* a 2.7 GHz TSC */
    ck_assert_int_eq(fnp_profile_add_tree(&dump, t, 5, tick), 0);
    double b_raw = dump.funcs[2].st.tottime;
    ck_assert_int_eq(fnp_tree_set(&dump, t, 5, FNP_TREE_TIME, tick, one_thread, 1), 0);
    ck_assert_int_eq(fnp_profile_set_meta(&dump, "program", "/bin/x"), 0);
    ck_assert_int_eq(fnp_calibration_put(&dump, 9.123456, 8.7654321), 0);
    ck_assert_str_eq(fnp_profile_meta(&dump, FNP_META_HOOK_IN), "9.123");
    ck_assert_str_eq(fnp_profile_meta(&dump, FNP_META_HOOK_OUT), "8.765");
    round_trip(&dump, &raw);
    struct fnp_hook_cost ns;
    ck_assert_int_eq(fnp_calibration_get(&raw, &ns), 0);
    ck_assert(ns.in == 9.123 && ns.out == 8.765);
    ck_assert_int_eq(fnp_profile_compensate(&dump, NULL), 0);
    round_trip(&dump, &back);
    ck_assert_int_eq(fnp_profile_compensate(&raw, NULL), 0);
    round_trip(&raw, &cmd);
    ck_assert_uint_eq(cmd.ntree, back.ntree);
    for (size_t i = 0; i < cmd.ntree; i++)
        ck_assert_uint_eq(cmd.tree[i].ticks, back.tree[i].ticks);
    ck_assert_uint_eq(cmd.nfuncs, back.nfuncs);
    for (size_t f = 0; f < cmd.nfuncs; f++) {
        ck_assert(cmd.funcs[f].st.tottime == back.funcs[f].st.tottime);
        ck_assert(cmd.funcs[f].st.cumtime == back.funcs[f].st.cumtime);
    }
    ck_assert_uint_eq(cmd.nmeta, back.nmeta);
    for (size_t i = 0; i < cmd.nmeta; i++) {
        ck_assert_str_eq(cmd.meta[i].key, back.meta[i].key);
        ck_assert_str_eq(cmd.meta[i].value, back.meta[i].value);
    }
    ck_assert_int_eq(fnp_profile_compensate(&back, NULL), -EALREADY);
    /* and it did take something off: b's 100,003 calls at 9.123 ns and a's 7 at 8.765 */
    ck_assert(fabs(b_raw - back.funcs[2].st.tottime - (100003 * 9.123e-9 + 7 * 8.765e-9)) <
              3 * tick);
    fnp_profile_free(&dump);
    fnp_profile_free(&raw);
    fnp_profile_free(&cmd);
    fnp_profile_free(&back);
}
END_TEST

START_TEST(refusals_leave_the_profile_as_it_was)
{
    struct fnp_profile p;
    struct fnp_tree_node t[] = {
        {0, ROOT, 1, 1000, 0, 0, 0},
        {1, 0, 10, 600, 0, 0, 0},
    };
    /* no calibration */
    make(&p, t, 2, 2, 3);
    fnp_profile_del_meta(&p, FNP_META_HOOK_IN);
    fnp_profile_del_meta(&p, FNP_META_HOOK_OUT);
    ck_assert_int_eq(fnp_profile_compensate(&p, NULL), -ENOENT);
    ck_assert_uint_eq(p.tree[0].ticks, 1000);
    ck_assert_ptr_null(fnp_profile_meta(&p, FNP_META_COMPENSATED));
    /* malformed ones: metadata is what a file says */
    static const char *const bad[] = {"",     "nan", "inf",    "-1",     "1e3",   "1.2.3",
                                      "0x10", " 1",  "100001", "9.5 ns", "+3.000"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ck_assert_int_eq(fnp_profile_set_meta(&p, FNP_META_HOOK_IN, bad[i]), 0);
        ck_assert_int_eq(fnp_profile_set_meta(&p, FNP_META_HOOK_OUT, "3.000"), 0);
        ck_assert_msg(fnp_profile_compensate(&p, NULL) == -EINVAL, "'%s' taken", bad[i]);
        ck_assert_uint_eq(p.tree[0].ticks, 1000);
    }
    fnp_profile_del_meta(&p, FNP_META_HOOK_OUT);
    ck_assert_int_eq(fnp_profile_set_meta(&p, FNP_META_HOOK_IN, "3.000"), 0);
    ck_assert_int_eq(fnp_profile_compensate(&p, NULL), -EINVAL); /* half of one */
    ck_assert_int_eq(fnp_calibration_put(&p, -1, 2), -EINVAL);
    ck_assert_int_eq(fnp_calibration_put(&p, NAN, 2), -EINVAL);
    ck_assert_int_eq(fnp_calibration_put(&p, 2, 1e9), -EINVAL);
    fnp_profile_free(&p);
    /* no times: count-only, a memory profile, no tree */
    make(&p, t, 2, 2, 3);
    p.tree_kind = FNP_TREE_CALLS;
    ck_assert_int_eq(fnp_profile_compensate(&p, NULL), -ENOTSUP);
    p.tree_kind = FNP_TREE_TIME;
    struct fnp_mem_node mem[2] = {{0}};
    p.mem = mem;
    ck_assert_int_eq(fnp_profile_compensate(&p, NULL), -ENOTSUP);
    p.mem = NULL;
    p.tick_seconds = 1e-320; /* a crafted file's tick: the cost in ticks is no number */
    ck_assert_int_eq(fnp_profile_compensate(&p, NULL), -ERANGE);
    ck_assert_ptr_nonnull(strstr(fnp_compensate_strerror(-ERANGE), "tick"));
    p.tick_seconds = 1e-9;
    p.tree[1].ticks = UINT64_C(1) << 62; /* no run's: sums that saturated, a crafted file */
    ck_assert_int_eq(fnp_profile_compensate(&p, NULL), -ERANGE);
    ck_assert_uint_eq(p.tree[1].ticks, UINT64_C(1) << 62);
    p.tick_seconds = 1e-9;
    fnp_tree_clear(&p);
    ck_assert_int_eq(fnp_profile_compensate(&p, NULL), -ENOTSUP);
    ck_assert(p.funcs[0].st.cumtime == NS(1000));
    fnp_profile_free(&p);
    /* a forest with a child before its parent, a cost that is no cost */
    struct fnp_tree_node u[] = {{0, 1, 1, 10, 0, 0, 0}, {1, ROOT, 1, 20, 0, 0, 0}};
    struct fnp_compensated r;
    ck_assert_int_eq(fnp_tree_compensate(u, 2, 1, 1, &r), -EINVAL);
    ck_assert_int_eq(fnp_tree_compensate(t, 2, -1, 1, &r), -EINVAL);
    ck_assert_int_eq(fnp_tree_compensate(t, 2, 1, INFINITY, &r), -EINVAL);
    ck_assert_uint_eq(t[0].ticks, 1000);
    ck_assert_ptr_nonnull(strstr(fnp_compensate_strerror(-EALREADY), "already"));
}
END_TEST

/* The reader holds a dict to its tree within a slack that is partly relative to the total:
 * a hand-made dict 900 ns off a 1 s tree passes, and 900 ns off the 0.7 s left once
 * compensated would not. Compensated, such a file would not read back: refused, and the
 * profile left as it was. */
START_TEST(a_dict_the_compensated_tree_would_not_explain_is_refused)
{
    struct fnp_profile p;
    struct fnp_tree_node t[] = {
        {0, ROOT, 1, 1000000000, 0, 0, 0},
        {1, 0, 100000000, 900000000, 0, 0, 0},
    };
    double tree_s, dict_s;
    for (int off = 500; off <= 900; off += 400) {
        make(&p, t, 2, 2, 3);
        p.funcs[1].st.tottime += NS(off);
        double before = p.funcs[1].st.tottime;
        ck_assert_int_eq(fnp_tree_dict_gap(&p, p.nfuncs, &tree_s, &dict_s), 0);
        int rc = fnp_profile_compensate(&p, NULL);
        if (off == 500) { /* within the compensated tree's slack too */
            ck_assert_int_eq(rc, 0);
            ck_assert_int_eq(fnp_tree_dict_gap(&p, p.nfuncs, &tree_s, &dict_s), 0);
        } else {
            ck_assert_int_eq(rc, -EDOM);
            ck_assert_uint_eq(p.tree[0].ticks, 1000000000);
            ck_assert_uint_eq(p.tree[1].ticks, 900000000);
            ck_assert(p.funcs[1].st.tottime == before);
            ck_assert(p.funcs[0].st.tottime == NS(100000000));
            ck_assert_ptr_null(fnp_profile_meta(&p, FNP_META_COMPENSATED));
            ck_assert_ptr_null(fnp_profile_meta(&p, FNP_META_CLAMPED));
            ck_assert_ptr_nonnull(strstr(fnp_compensate_strerror(-EDOM), "edited"));
        }
        fnp_profile_free(&p);
    }
}
END_TEST

START_TEST(hostile_numbers_stay_defined_and_never_negative)
{
    /* what a crafted file may hold: ticks near 2^64, backs near the ends of int64, calls
     * that saturate; nothing undefined (the sanitizers run this), no tick count wraps to a
     * huge one from a small negative */
    struct fnp_tree_node t[] = {
        {0, ROOT, UINT64_MAX, UINT64_MAX, INT64_MIN, 0, 0},
        {1, 0, UINT64_MAX, UINT64_MAX / 2, INT64_MAX, 0, 0},
        {2, 1, 1, 5, -9, 0, 0},
    };
    struct fnp_compensated r;
    ck_assert_int_eq(fnp_tree_compensate(t, 3, 1e5, 1e5, &r), 0);
    for (size_t i = 0; i < 3; i++)
        ck_assert((int64_t)t[i].ticks >= 0);
    ck_assert_uint_eq(r.clamped, 3);
    ck_assert_uint_gt(r.not_taken, UINT64_C(1) << 62);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("compensate");
    TCase *c = tcase_create("arithmetic");
    tcase_add_test(c, own_time_loses_its_calls_in_and_its_childrens_calls_out);
    tcase_add_test(c, fractional_costs_round_each_context_once);
    tcase_add_test(c, a_context_is_clamped_at_zero_and_counted);
    tcase_add_test(c, recursion_keeps_cprofile_cumtime_of_the_outermost_call);
    tcase_add_test(c, a_folded_recursion_compensates_as_if_unfolded);
    tcase_add_test(c, a_folded_recursion_settles_within_its_function_before_clamping);
    tcase_add_test(c, several_threads_hang_from_process_whose_time_follows_the_roots);
    tcase_add_test(c, the_dict_moves_by_what_the_tree_lost_where_the_tree_does_not_explain_it);
    tcase_add_test(c, hostile_numbers_stay_defined_and_never_negative);
    suite_add_tcase(s, c);
    TCase *m = tcase_create("metadata");
    tcase_add_test(m, the_profile_says_it_is_compensated_and_is_not_compensated_twice);
    tcase_add_test(m, the_stored_calibration_compensates_as_the_dump_does);
    tcase_add_test(m, refusals_leave_the_profile_as_it_was);
    tcase_add_test(m, a_dict_the_compensated_tree_would_not_explain_is_refused);
    suite_add_tcase(s, m);
    return s;
}

int main(void)
{
    return fnp_check_run(suite());
}
/* SPDX-License-Identifier: MIT */
