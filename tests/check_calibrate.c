/*
 * The runtime's calibration of the hook pair (runtime/calibrate.c): it goes through the
 * hooks the loader bound, on a thread state no profile sees, and the dump stores it in ns
 * of the run's clock and compensates with it when asked. No figure is judged here (speed
 * lives in bench/compensate.py): only that a calibration exists when fnprof's hooks are
 * bound, and none when they are not.
 *
 *   check_calibrate bound     run with PROF_OUTPUT set: the loader binds fnprof's hooks
 *                             (with PROF_COMPENSATE=1 too: its compensating pair)
 *   check_calibrate unbound   run without: glibc's empty pair's stand-in is bound
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "profile.h"
#include "runtime.h"

START_TEST(calibration_goes_through_the_hooks_and_leaves_no_trace)
{
    fnp_clock_init("tsc", 0);
    uint64_t nodes = fnp_nodes_total;
    __atomic_store_n(&fnp_recording, 0, __ATOMIC_RELAXED);
    fnp_calibrate(FNP_ON);
    double in = -1, out = -1;
    ck_assert_int_eq(fnp_calibration_ticks(&in, &out), 0);
    /* the empty callee's interval holds part of a pair; its caller's own time the rest */
    ck_assert(in > 0 && out > 0);
    /* its own thread state, never listed, its nodes not counted against the cap, recording
     * back off as before */
    ck_assert_ptr_null(fnp_tls);
    ck_assert_ptr_null(fnp_thread_list());
    ck_assert_uint_eq(fnp_nodes_total, nodes);
    ck_assert_uint_eq(__atomic_load_n(&fnp_recording, __ATOMIC_RELAXED), 0);
}
END_TEST

/* PROF_COMPENSATE=1's clock: the reads ordered, which only the compensating pair takes
 * inline; every other path sees a mode bit and takes its cold path, whose clock is
 * fnp_clock_now, ordered too. */
START_TEST(ordered_reads_keep_every_other_fast_path_away)
{
    fnp_clock_init("tsc", 1);
    ck_assert_int_eq(fnp_clock_ordered(), 1);
    if (fnp_clock_kind == FNP_CLOCK_TSC_ORDERED) {
        ck_assert_uint_eq(fnp_clock_mode(), FNP_ON_ORDERED);
        ck_assert_str_eq(fnp_clock_name(), "tsc");
    } else { /* no invariant TSC here */
        ck_assert_int_eq(fnp_clock_kind, FNP_CLOCK_MONOTONIC_ORDERED);
        ck_assert_uint_eq(fnp_clock_mode(), FNP_ON_CLOCK_CALL);
    }
    ck_assert_uint_ne(FNP_ON_MODES & FNP_ON_ORDERED, 0);
    uint64_t last = fnp_clock_now();
    for (int i = 0; i < 1000; i++) {
        uint64_t now = fnp_clock_now();
        ck_assert_uint_ge(now, last);
        last = now;
    }
    /* the calibration through whichever pair the loader bound, in the ordered mode */
    fnp_calibrate(FNP_ON | fnp_clock_mode());
    double in = -1, out = -1;
    ck_assert_int_eq(fnp_calibration_ticks(&in, &out), 0);
    ck_assert(in > 0 && out >= 0);
    ck_assert_ptr_null(fnp_thread_list());

    fnp_clock_init("monotonic", 1);
    ck_assert_int_eq(fnp_clock_kind, FNP_CLOCK_MONOTONIC_ORDERED);
    ck_assert_uint_eq(fnp_clock_mode(), FNP_ON_CLOCK_CALL);
    ck_assert_str_eq(fnp_clock_name(), "monotonic");
    ck_assert(fnp_clock_tick_seconds() == 1e-9);
    fnp_calibrate(FNP_ON | fnp_clock_mode());
    ck_assert_int_eq(fnp_calibration_ticks(&in, &out), 0);

    /* and unordered again: what a pair bound for ordered reads must handle too */
    fnp_clock_init("tsc", 0);
    ck_assert_int_eq(fnp_clock_ordered(), 0);
    fnp_calibrate(FNP_ON | fnp_clock_mode());
    ck_assert_int_eq(fnp_calibration_ticks(&in, &out), 0);
}
END_TEST

START_TEST(count_only_is_not_calibrated)
{
    fnp_clock_init("none", 0);
    double in, out;
    int before = fnp_calibration_ticks(&in, &out);
    fnp_calibrate(FNP_ON | FNP_ON_COUNT);
    /* what the load measured (PROF_OUTPUT is set: timed) stays; nothing new is measured */
    ck_assert_int_eq(fnp_calibration_ticks(&in, &out), before);
    ck_assert_ptr_null(fnp_thread_list());
}
END_TEST

/* A profile whose tree is one node of 1000 ticks (100 calls) under one of 5000. */
static void make(struct fnp_profile *p, uint32_t kind, double tick_seconds)
{
    fnp_profile_init(p);
    struct fnp_key main_ = {"/src/x.c", 1, "main"}, f = {"/src/x.c", 2, "f"};
    ck_assert_int_ge(fnp_profile_func(p, &main_), 0);
    ck_assert_int_ge(fnp_profile_func(p, &f), 0);
    struct fnp_tree_node t[] = {
        {0, FNP_NO_PARENT, 1, 500000, 0, 0, 0},
        {1, 0, 100, 100000, 0, 0, 0},
    };
    ck_assert_int_eq(fnp_profile_add_tree(p, t, 2, tick_seconds), 0);
    static const char *const threads[] = {"thread 1"};
    ck_assert_int_eq(fnp_tree_set(p, t, 2, kind, tick_seconds, threads, 1), 0);
}

START_TEST(the_dump_stores_it_in_ns_of_the_runs_clock)
{
    fnp_clock_init("tsc", 0);
    fnp_calibrate(FNP_ON);
    double in, out;
    ck_assert_int_eq(fnp_calibration_ticks(&in, &out), 0);
    struct fnp_profile p;
    make(&p, FNP_TREE_TIME, 0.25e-9); /* a 4 GHz tick */
    fnp_config.compensate = 0;
    fnp_calibrate_note(&p);
    char want[32];
    snprintf(want, sizeof(want), "%.3f", in * 0.25);
    ck_assert_str_eq(fnp_profile_meta(&p, FNP_META_HOOK_IN), want);
    snprintf(want, sizeof(want), "%.3f", out * 0.25);
    ck_assert_str_eq(fnp_profile_meta(&p, FNP_META_HOOK_OUT), want);
    ck_assert_ptr_null(fnp_profile_meta(&p, FNP_META_COMPENSATED));
    ck_assert_uint_eq(p.tree[1].ticks, 100000);
    fnp_profile_free(&p);

    /* PROF_COMPENSATE=1: the same, and compensated */
    make(&p, FNP_TREE_TIME, 0.25e-9);
    fnp_config.compensate = 1;
    fnp_calibrate_note(&p);
    ck_assert_ptr_nonnull(fnp_profile_meta(&p, FNP_META_COMPENSATED));
    ck_assert_uint_lt(p.tree[1].ticks, 100000);
    ck_assert(p.funcs[1].st.tottime < 100000 * 0.25e-9);
    fnp_profile_free(&p);

    /* count-only: no calibration stored, nothing compensated */
    make(&p, FNP_TREE_CALLS, 1);
    fnp_calibrate_note(&p);
    ck_assert_ptr_null(fnp_profile_meta(&p, FNP_META_HOOK_IN));
    ck_assert_ptr_null(fnp_profile_meta(&p, FNP_META_COMPENSATED));
    ck_assert_uint_eq(p.tree[1].ticks, 100000);
    fnp_profile_free(&p);
}
END_TEST

START_TEST(other_hooks_give_no_calibration)
{
    /* Without PROF_OUTPUT the loader bound the hooks to an empty function: the calls
     * record nothing, and a calibration that found nothing is none. */
    fnp_clock_init("tsc", 0);
    fnp_calibrate(FNP_ON);
    double in, out;
    ck_assert_int_eq(fnp_calibration_ticks(&in, &out), -ENOENT);
    struct fnp_profile p;
    make(&p, FNP_TREE_TIME, 1e-9);
    fnp_calibrate_note(&p);
    ck_assert_ptr_null(fnp_profile_meta(&p, FNP_META_HOOK_IN));
    fnp_profile_free(&p);
}
END_TEST

int main(int argc, char **argv)
{
    Suite *s = suite_create("calibrate");
    TCase *c = tcase_create("calibrate");
    if (argc > 1 && !strcmp(argv[1], "unbound")) {
        if (getenv("PROF_OUTPUT")) {
            fprintf(stderr, "check_calibrate unbound: run without PROF_OUTPUT\n");
            return 2;
        }
        tcase_add_test(c, other_hooks_give_no_calibration);
    } else {
        if (!getenv("PROF_OUTPUT")) {
            fprintf(stderr, "check_calibrate bound: run with PROF_OUTPUT set\n");
            return 2;
        }
        tcase_add_test(c, calibration_goes_through_the_hooks_and_leaves_no_trace);
        tcase_add_test(c, ordered_reads_keep_every_other_fast_path_away);
        tcase_add_test(c, count_only_is_not_calibrated);
        tcase_add_test(c, the_dump_stores_it_in_ns_of_the_runs_clock);
    }
    suite_add_tcase(s, c);
    return fnp_check_run(s);
}
/* SPDX-License-Identifier: MIT */
