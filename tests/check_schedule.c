/*
 * The step schedule (runtime/schedule.c, docs/schedule.md): the issue's sequence step by
 * step, each parameter at its edge, values near 2^64, and a reference written straight from
 * torch.profiler.schedule's formula compared over thousands of parameter sets; then the
 * parser, with the reason of each refusal.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "check_run.h"
#include "schedule.h"

enum { N = FNP_STEP_NONE, W = FNP_STEP_WARMUP, R = FNP_STEP_RECORD, S = FNP_STEP_RECORD_AND_SAVE };

static struct fnp_schedule sched(uint64_t skip_first, uint64_t wait, uint64_t warmup,
                                 uint64_t active, uint64_t repeat)
{
    struct fnp_schedule s = {skip_first, wait, warmup, active, repeat};
    return s;
}

/*
 * torch's schedule_fn, line for line, in 128-bit integers, which hold any sum of three
 * uint64_t without wrapping, as Python's integers would. torch tests step / num_steps >=
 * repeat in true division; for a whole repeat that equals the floor quotient's test.
 */
__extension__ typedef unsigned __int128 u128;

static int ref_action(const struct fnp_schedule *p, uint64_t step64, u128 *cycle_index)
{
    u128 step = step64;
    if (step < p->skip_first)
        return N;
    step -= p->skip_first;
    u128 num_steps = (u128)p->wait + p->warmup + p->active;
    if (p->repeat > 0 && step / num_steps >= p->repeat)
        return N;
    *cycle_index = step / num_steps;
    u128 mod_step = step % num_steps;
    if (mod_step < p->wait)
        return N;
    if (mod_step < (u128)p->wait + p->warmup)
        return W;
    return mod_step < num_steps - 1 ? R : S;
}

static uint64_t ref_cycle(const struct fnp_schedule *p, uint64_t step)
{
    u128 index = 0;
    if (ref_action(p, step, &index) == N)
        return 0;
    return index + 1 > UINT64_MAX ? UINT64_MAX : (uint64_t)(index + 1);
}

/* One step against the reference, with every parameter in the message when it differs. */
static void ck_step(const struct fnp_schedule *p, uint64_t step)
{
    u128 index;
    int want = ref_action(p, step, &index);
    int got = fnp_schedule_action(p, step);
    uint64_t want_cycle = ref_cycle(p, step), got_cycle = fnp_schedule_cycle(p, step);
    if (got != want || got_cycle != want_cycle)
        ck_abort_msg("skip_first=%llu wait=%llu warmup=%llu active=%llu repeat=%llu step %llu: "
                     "%s cycle %llu, torch's rule says %s cycle %llu",
                     (unsigned long long)p->skip_first, (unsigned long long)p->wait,
                     (unsigned long long)p->warmup, (unsigned long long)p->active,
                     (unsigned long long)p->repeat, (unsigned long long)step,
                     fnp_step_action_name(got), (unsigned long long)got_cycle,
                     fnp_step_action_name(want), (unsigned long long)want_cycle);
}

/* Expected actions and cycles from step first on, in a string: 'n', 'w', 'r', 's'. */
static void ck_sequence(const struct fnp_schedule *p, uint64_t first, const char *actions,
                        const uint64_t *cycles)
{
    for (size_t i = 0; actions[i]; i++) {
        int want = actions[i] == 'n' ? N : actions[i] == 'w' ? W : actions[i] == 'r' ? R : S;
        uint64_t step = first + i;
        ck_assert_msg(fnp_schedule_action(p, step) == (enum fnp_step_action)want,
                      "step %llu: %s, expected %s", (unsigned long long)step,
                      fnp_step_action_name(fnp_schedule_action(p, step)),
                      fnp_step_action_name(want));
        if (cycles)
            ck_assert_msg(fnp_schedule_cycle(p, step) == cycles[i],
                          "step %llu: cycle %llu, expected %llu", (unsigned long long)step,
                          (unsigned long long)fnp_schedule_cycle(p, step),
                          (unsigned long long)cycles[i]);
    }
}

START_TEST(issue_example_runs_two_cycles_then_stops)
{
    struct fnp_schedule p;
    char why[128] = "";
    ck_assert_int_eq(
        fnp_schedule_parse("skip_first=3,wait=2,warmup=1,active=4,repeat=2", &p, why, sizeof(why)),
        0);
    /* 0-4 NONE (3 skipped, 2 waited), 5 WARMUP, 6-8 RECORD, 9 RECORD_AND_SAVE, 10-11 NONE,
     * 12 WARMUP, 13-15 RECORD, 16 RECORD_AND_SAVE */
    static const uint64_t cycles[] = {0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 0, 0, 2, 2, 2, 2, 2};
    ck_sequence(&p, 0, "nnnnnwrrrsnnwrrrs", cycles);
    for (uint64_t step = 17; step <= 1000; step++) {
        ck_assert_int_eq(fnp_schedule_action(&p, step), N);
        ck_assert_uint_eq(fnp_schedule_cycle(&p, step), 0);
    }
    ck_assert_int_eq(fnp_schedule_action(&p, UINT64_MAX), N);
}
END_TEST

START_TEST(repeat_zero_cycles_forever)
{
    struct fnp_schedule p = sched(1, 1, 1, 2, 0); /* period 4 after one skipped step */
    static const uint64_t cycles[] = {0, 0, 1, 1, 1, 0, 2, 2, 2, 0, 3, 3, 3};
    ck_sequence(&p, 0, "nnwrsnwrsnwrs", cycles);
    /* cycle k (1-based) takes steps 4k-3 .. 4k: wait, WARMUP, RECORD, RECORD_AND_SAVE */
    uint64_t k = 1000000;
    static const uint64_t far[] = {0, 1000000, 1000000, 1000000, 0};
    ck_sequence(&p, 4 * k - 3, "nwrsn", far);
    /* the WARMUP step of the last cycle that has one below 2^64, 0-based index last */
    uint64_t last = (UINT64_MAX - 1) / 4;
    ck_assert_int_eq(fnp_schedule_action(&p, 1 + 4 * last + 1), W);
    ck_assert_uint_eq(fnp_schedule_cycle(&p, 1 + 4 * last + 1), last + 1);
    ck_step(&p, UINT64_MAX);
}
END_TEST

START_TEST(warmup_zero_goes_from_wait_to_record)
{
    struct fnp_schedule p = sched(0, 2, 0, 3, 2);
    static const uint64_t cycles[] = {0, 0, 1, 1, 1, 0, 0, 2, 2, 2, 0, 0};
    ck_sequence(&p, 0, "nnrrsnnrrsnn", cycles);
}
END_TEST

START_TEST(wait_zero_starts_each_cycle_with_warmup)
{
    struct fnp_schedule p = sched(2, 0, 2, 2, 3);
    static const uint64_t cycles[] = {0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 0, 0};
    ck_sequence(&p, 0, "nnwwrswwrswwrsnn", cycles);
}
END_TEST

START_TEST(active_one_saves_every_active_step)
{
    /* no RECORD at all: a one-step active phase is its own last step */
    struct fnp_schedule every = sched(0, 0, 0, 1, 0);
    for (uint64_t step = 0; step < 100; step++) {
        ck_assert_int_eq(fnp_schedule_action(&every, step), S);
        ck_assert_uint_eq(fnp_schedule_cycle(&every, step), step + 1);
    }
    struct fnp_schedule spaced = sched(1, 2, 1, 1, 0);
    static const uint64_t cycles[] = {0, 0, 0, 1, 1, 0, 0, 2, 2, 0, 0, 3, 3};
    ck_sequence(&spaced, 0, "nnnwsnnwsnnws", cycles);
}
END_TEST

START_TEST(skip_first_zero_records_from_step_zero)
{
    struct fnp_schedule p = sched(0, 0, 1, 3, 1);
    static const uint64_t cycles[] = {1, 1, 1, 1, 0, 0};
    ck_sequence(&p, 0, "wrrsnn", cycles);
    struct fnp_schedule q = sched(0, 0, 0, 4, 0);
    ck_sequence(&q, 0, "rrrsrrrsr", NULL);
}
END_TEST

START_TEST(defaults_save_every_step)
{
    struct fnp_schedule p;
    memset(&p, 0xff, sizeof(p));
    ck_assert_int_eq(fnp_schedule_parse("repeat=3", &p, NULL, 0), 0);
    ck_assert_uint_eq(p.skip_first, 0);
    ck_assert_uint_eq(p.wait, 0);
    ck_assert_uint_eq(p.warmup, 0);
    ck_assert_uint_eq(p.active, 1);
    ck_assert_uint_eq(p.repeat, 3);
    static const uint64_t cycles[] = {1, 2, 3, 0, 0};
    ck_sequence(&p, 0, "sssnn", cycles);
}
END_TEST

START_TEST(values_near_two_to_the_64_do_not_wrap)
{
    const uint64_t M = UINT64_MAX;
    /* everything skipped but the very last step, which is a whole cycle of one step */
    struct fnp_schedule p = sched(M, 0, 0, 1, 0);
    ck_assert_int_eq(fnp_schedule_action(&p, M - 1), N);
    ck_assert_int_eq(fnp_schedule_action(&p, M), S);
    ck_assert_uint_eq(fnp_schedule_cycle(&p, M), 1);

    /* wait + warmup + active past 2^64: one cycle longer than the step counter */
    p = sched(0, M - 1, 1, 5, 0);
    ck_assert_int_eq(fnp_schedule_action(&p, 0), N);
    ck_assert_int_eq(fnp_schedule_action(&p, M - 2), N);
    ck_assert_int_eq(fnp_schedule_action(&p, M - 1), W);
    ck_assert_int_eq(fnp_schedule_action(&p, M), R);
    ck_assert_uint_eq(fnp_schedule_cycle(&p, M), 1);
    p = sched(0, M, M, M, M); /* steps 0 .. M-1 wait; step M is past the wait */
    ck_assert_int_eq(fnp_schedule_action(&p, M - 1), N);
    ck_assert_int_eq(fnp_schedule_action(&p, M), W);
    p = sched(0, 0, M, M, 1);
    ck_assert_int_eq(fnp_schedule_action(&p, M - 1), W);
    ck_assert_int_eq(fnp_schedule_action(&p, M), R); /* step M is the cycle's 2^64-th */
    p = sched(0, 0, 0, M, 0);                        /* the save would be step M - 1 */
    ck_assert_int_eq(fnp_schedule_action(&p, M - 2), R);
    ck_assert_int_eq(fnp_schedule_action(&p, M - 1), S);
    ck_assert_int_eq(fnp_schedule_action(&p, M), R); /* cycle 2 begins */
    ck_assert_uint_eq(fnp_schedule_cycle(&p, M), 2);

    /* a period of exactly 2^64 - 1 */
    p = sched(0, M - 2, 0, 1, 0);
    ck_assert_int_eq(fnp_schedule_action(&p, M - 2), S);
    ck_assert_int_eq(fnp_schedule_action(&p, M - 1), N); /* cycle 2 waits */
    ck_assert_int_eq(fnp_schedule_action(&p, M), N);

    /* a period of one step: the cycle number is the step's plus one, saturated at 2^64-1 */
    p = sched(0, 0, 0, 1, 0);
    ck_assert_uint_eq(fnp_schedule_cycle(&p, M - 1), M);
    ck_assert_uint_eq(fnp_schedule_cycle(&p, M), M);
    p = sched(0, 0, 0, 1, M); /* M cycles: steps 0 .. M-1 */
    ck_assert_int_eq(fnp_schedule_action(&p, M - 1), S);
    ck_assert_int_eq(fnp_schedule_action(&p, M), N);
    ck_assert_uint_eq(fnp_schedule_cycle(&p, M), 0);

    /* repeat times period past 2^64: the repeat limit is never reached */
    p = sched(5, 1, 1, 1, M / 2);
    ck_assert_int_eq(fnp_schedule_action(&p, M), (M - 5) % 3 == 2 ? S : (M - 5) % 3 == 1 ? W : N);
    ck_step(&p, M);
}
END_TEST

START_TEST(active_zero_is_never_recorded)
{
    /* parse rejects it; a struct built by hand must still not divide by zero */
    struct fnp_schedule p = sched(0, 0, 0, 0, 0);
    ck_assert_int_eq(fnp_schedule_action(&p, 0), N);
    ck_assert_int_eq(fnp_schedule_action(&p, 12345), N);
    ck_assert_uint_eq(fnp_schedule_cycle(&p, 12345), 0);
}
END_TEST

START_TEST(small_parameters_match_torch_exhaustively)
{
    /* every set with each parameter in 0..3 (active 1..4), every step through three periods
     * past the end of the last repeat */
    for (uint64_t sf = 0; sf < 4; sf++)
        for (uint64_t wa = 0; wa < 4; wa++)
            for (uint64_t wu = 0; wu < 4; wu++)
                for (uint64_t ac = 1; ac <= 4; ac++)
                    for (uint64_t rp = 0; rp < 4; rp++) {
                        struct fnp_schedule p = sched(sf, wa, wu, ac, rp);
                        uint64_t end = sf + (wa + wu + ac) * (rp + 3);
                        for (uint64_t step = 0; step <= end; step++)
                            ck_step(&p, step);
                    }
}
END_TEST

/* xorshift64*: the same numbers on every run, so a failure can be replayed */
static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint64_t rnd(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1du;
}

/* A parameter or step drawn where bugs live: small, near a power of two, near 2^64, any. */
static uint64_t interesting(void)
{
    switch (rnd() % 6) {
    case 0:
        return rnd() % 8;
    case 1:
        return rnd() % 1000;
    case 2:
        return (UINT64_C(1) << (rnd() % 64)) + rnd() % 5 - 2;
    case 3:
        return UINT64_MAX - rnd() % 8;
    case 4:
        return UINT64_MAX / (2 + rnd() % 6) + rnd() % 5;
    default:
        return rnd();
    }
}

START_TEST(random_parameters_match_torch)
{
    for (int i = 0; i < 20000; i++) {
        struct fnp_schedule p = sched(interesting(), interesting(), interesting(), interesting(),
                                      rnd() % 3 == 0 ? 0 : interesting());
        if (p.active == 0)
            p.active = 1;
        for (int j = 0; j < 8; j++)
            ck_step(&p, interesting());
        /* and the steps at the phase edges of the first and of the repeat-th cycle, where an
         * off-by-one shows */
        uint64_t edges[] = {p.skip_first, p.skip_first + p.wait, p.skip_first + p.wait + p.warmup,
                            p.skip_first + p.wait + p.warmup + p.active};
        for (size_t e = 0; e < sizeof(edges) / sizeof(edges[0]); e++)
            for (uint64_t d = 0; d < 3; d++)
                ck_step(&p, edges[e] + d - 1); /* wraps at 0 and 2^64 - 1: still a step */
    }
}
END_TEST

/* ---- the parser ---------------------------------------------------------------------- */

static void ck_accepts(const char *text, struct fnp_schedule want)
{
    struct fnp_schedule got;
    char why[160] = "untouched";
    memset(&got, 0xab, sizeof(got));
    int rc = fnp_schedule_parse(text, &got, why, sizeof(why));
    ck_assert_msg(rc == 0, "'%s' rejected: %s", text, why);
    ck_assert_str_eq(why, "untouched");
    ck_assert_msg(
        got.skip_first == want.skip_first && got.wait == want.wait && got.warmup == want.warmup &&
            got.active == want.active && got.repeat == want.repeat,
        "'%s' parsed as %llu,%llu,%llu,%llu,%llu", text, (unsigned long long)got.skip_first,
        (unsigned long long)got.wait, (unsigned long long)got.warmup,
        (unsigned long long)got.active, (unsigned long long)got.repeat);
}

static void ck_rejects(const char *text, const char *reason)
{
    struct fnp_schedule got;
    memset(&got, 0xab, sizeof(got));
    struct fnp_schedule before = got;
    char why[160] = "";
    ck_assert_int_eq(fnp_schedule_parse(text, &got, why, sizeof(why)), -EINVAL);
    ck_assert_str_eq(why, reason);
    ck_assert_msg(memcmp(&got, &before, sizeof(got)) == 0, "'%s': out written on failure", text);
    ck_assert_ptr_null(strchr(why, '\n'));
}

START_TEST(parse_accepts_any_order_and_subset)
{
    ck_accepts("skip_first=3,wait=2,warmup=1,active=4,repeat=2", sched(3, 2, 1, 4, 2));
    ck_accepts("repeat=2,active=4,warmup=1,wait=2,skip_first=3", sched(3, 2, 1, 4, 2));
    ck_accepts("wait=1,warmup=1,active=3", sched(0, 1, 1, 3, 0));
    ck_accepts("active=7", sched(0, 0, 0, 7, 0));
    ck_accepts("skip_first=10", sched(10, 0, 0, 1, 0));
    ck_accepts("wait=0,warmup=0,active=1,repeat=0,skip_first=0", sched(0, 0, 0, 1, 0));
    ck_accepts("wait=007", sched(0, 7, 0, 1, 0));
    ck_accepts("skip_first=18446744073709551615,repeat=18446744073709551615",
               sched(UINT64_MAX, 0, 0, 1, UINT64_MAX));
}
END_TEST

START_TEST(parse_ignores_blanks_around_keys_and_values)
{
    ck_accepts(" wait = 2 ,\tactive=4\t, repeat =1 ", sched(0, 2, 0, 4, 1));
    ck_accepts("active= 3", sched(0, 0, 0, 3, 0));
}
END_TEST

START_TEST(parse_rejects_with_a_reason)
{
    ck_rejects("wiat=2", "unknown key 'wiat' (known: skip_first, wait, warmup, active, repeat)");
    ck_rejects("WAIT=2", "unknown key 'WAIT' (known: skip_first, wait, warmup, active, repeat)");
    ck_rejects("wa it=2", "unknown key 'wa it' (known: skip_first, wait, warmup, active, repeat)");
    ck_rejects("skip_first_wait=1",
               "unknown key 'skip_first_wait' (known: skip_first, wait, warmup, active, repeat)");
    ck_rejects("wait=1,active=2,wait=3", "duplicate key 'wait'");
    ck_rejects("wait=two", "value of 'wait' is not a decimal number: 'two'");
    ck_rejects("wait=2x", "value of 'wait' is not a decimal number: '2x'");
    ck_rejects("wait=+2", "value of 'wait' is not a decimal number: '+2'");
    ck_rejects("wait=0x10", "value of 'wait' is not a decimal number: '0x10'");
    ck_rejects("wait=1.5", "value of 'wait' is not a decimal number: '1.5'");
    ck_rejects("wait=1 2", "value of 'wait' is not a decimal number: '1 2'");
    ck_rejects("wait=2=3", "value of 'wait' is not a decimal number: '2=3'");
    ck_rejects("warmup=-1", "negative value for 'warmup': '-1'");
    ck_rejects("repeat=18446744073709551616",
               "value of 'repeat' is out of range (at most 2^64-1): '18446744073709551616'");
    ck_rejects("repeat=99999999999999999999999",
               "value of 'repeat' is out of range (at most 2^64-1): '99999999999999999999999'");
    ck_rejects("active=0", "active must be at least 1");
    ck_rejects("wait=1,active=00", "active must be at least 1");
    ck_rejects("wait=", "missing value for 'wait'");
    ck_rejects("wait = ,active=1", "missing value for 'wait'");
    ck_rejects("=3", "missing key before '=' in item 1");
    ck_rejects("wait", "missing '=' in item 'wait'");
    ck_rejects("wait=1;active=2", "value of 'wait' is not a decimal number: '1;active=2'");
    ck_rejects("wait=1,,active=2", "item 2 is empty (a comma too many?)");
    ck_rejects(",wait=1", "item 1 is empty (a comma too many?)");
    ck_rejects("wait=1,", "item 2 is empty (a comma too many?)");
    ck_rejects("wait=1, ,active=2", "item 2 is empty (a comma too many?)");
    const char *empty =
        "empty schedule (expected key=value items, e.g. 'wait=1,warmup=1,active=3')";
    ck_rejects("", empty);
    ck_rejects(" \t ", empty);
    ck_rejects(NULL, empty);
}
END_TEST

START_TEST(parse_reason_stays_one_short_line)
{
    /* a newline in the variable must not split the runtime's one-line message */
    ck_rejects("wa\nit=1", "unknown key 'wa?it' (known: skip_first, wait, warmup, active, repeat)");
    ck_rejects("wait=\x01", "value of 'wait' is not a decimal number: '?'");
    /* long junk is cut after 40 bytes */
    ck_rejects("wait=1234567890123456789012345678901234567890abc",
               "value of 'wait' is not a decimal number: "
               "'1234567890123456789012345678901234567890...'");
}
END_TEST

START_TEST(parse_truncates_the_reason_to_its_buffer)
{
    struct fnp_schedule p;
    char why[8];
    memset(why, 'x', sizeof(why));
    ck_assert_int_eq(fnp_schedule_parse("wiat=1", &p, why, sizeof(why)), -EINVAL);
    ck_assert_str_eq(why, "unknown");
    char one[1] = {'x'};
    ck_assert_int_eq(fnp_schedule_parse("wiat=1", &p, one, sizeof(one)), -EINVAL);
    ck_assert_int_eq(one[0], '\0');
    char none[1] = {'x'};
    ck_assert_int_eq(fnp_schedule_parse("wiat=1", &p, none, 0), -EINVAL);
    ck_assert_int_eq(none[0], 'x');
    ck_assert_int_eq(fnp_schedule_parse("wiat=1", &p, NULL, 16), -EINVAL);
}
END_TEST

START_TEST(action_names_match_torch)
{
    ck_assert_str_eq(fnp_step_action_name(FNP_STEP_NONE), "NONE");
    ck_assert_str_eq(fnp_step_action_name(FNP_STEP_WARMUP), "WARMUP");
    ck_assert_str_eq(fnp_step_action_name(FNP_STEP_RECORD), "RECORD");
    ck_assert_str_eq(fnp_step_action_name(FNP_STEP_RECORD_AND_SAVE), "RECORD_AND_SAVE");
    ck_assert_str_eq(fnp_step_action_name((enum fnp_step_action)42), "INVALID");
    /* torch's ProfilerAction values */
    ck_assert_int_eq(FNP_STEP_NONE, 0);
    ck_assert_int_eq(FNP_STEP_WARMUP, 1);
    ck_assert_int_eq(FNP_STEP_RECORD, 2);
    ck_assert_int_eq(FNP_STEP_RECORD_AND_SAVE, 3);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("schedule");
    TCase *tc = tcase_create("schedule");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, issue_example_runs_two_cycles_then_stops);
    tcase_add_test(tc, repeat_zero_cycles_forever);
    tcase_add_test(tc, warmup_zero_goes_from_wait_to_record);
    tcase_add_test(tc, wait_zero_starts_each_cycle_with_warmup);
    tcase_add_test(tc, active_one_saves_every_active_step);
    tcase_add_test(tc, skip_first_zero_records_from_step_zero);
    tcase_add_test(tc, defaults_save_every_step);
    tcase_add_test(tc, values_near_two_to_the_64_do_not_wrap);
    tcase_add_test(tc, active_zero_is_never_recorded);
    tcase_add_test(tc, small_parameters_match_torch_exhaustively);
    tcase_add_test(tc, random_parameters_match_torch);
    tcase_add_test(tc, parse_accepts_any_order_and_subset);
    tcase_add_test(tc, parse_ignores_blanks_around_keys_and_values);
    tcase_add_test(tc, parse_rejects_with_a_reason);
    tcase_add_test(tc, parse_reason_stays_one_short_line);
    tcase_add_test(tc, parse_truncates_the_reason_to_its_buffer);
    tcase_add_test(tc, action_names_match_torch);
    suite_add_tcase(s, tc);
    return fnp_check_run(s);
}
/* SPDX-License-Identifier: MIT */
