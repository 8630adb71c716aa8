/*
 * A profile's file name (profile/outname.c): every code, the launcher variables in their
 * order, and the suffixes that keep ranks and cycles apart.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "profile.h"

static const char *const *vars; /* name, value, name, value, ..., NULL */

static const char *get(const char *name)
{
    for (size_t i = 0; vars[i]; i += 2)
        if (strcmp(vars[i], name) == 0)
            return vars[i + 1];
    return NULL;
}

static struct fnp_launch detect(const char *const *env)
{
    struct fnp_launch l;
    vars = env;
    fnp_launch_detect(&l, get);
    return l;
}

static void expect(const char *in, long pid, uint64_t cycle, long rank, long size, const char *host,
                   const char *want)
{
    struct fnp_outname_vars v = {pid, cycle, {rank, size, rank < 0 ? -1 : 0}, host};
    char *got = fnp_outname(in, &v);
    ck_assert_ptr_nonnull(got);
    ck_assert_str_eq(got, want);
    free(got);
}

START_TEST(codes_are_replaced)
{
    expect("/o/p.%p.prof", 42, 0, -1, -1, "h", "/o/p.42.prof");
    expect("/o/p.%r.prof", 42, 0, 3, 4, "h", "/o/p.3.prof");
    expect("/o/%h/p.prof", 42, 0, -1, -1, "node7", "/o/node7/p.prof");
    expect("/o/p.%n", 42, 5, -1, -1, "h", "/o/p.5");
    expect("/o/100%%.prof", 42, 0, -1, -1, "h", "/o/100%.prof");
    expect("/o/%r-%h-%p-%n-%%", 7, 2, 1, 2, "h", "/o/1-h-7-2-%");
}
END_TEST

START_TEST(other_percents_stay_as_written)
{
    expect("/o/%x%", 1, 0, -1, -1, "h", "/o/%x%");
    expect("/o/%%p", 1, 0, -1, -1, "h", "/o/%p");
    expect("/o/%h", 1, 0, -1, -1, NULL, "/o/");
}
END_TEST

START_TEST(rank_outside_a_launcher_is_zero)
{
    expect("/o/p.%r", 1, 0, -1, -1, "h", "/o/p.0");
}
END_TEST

START_TEST(ranks_without_percent_r_get_a_suffix)
{
    expect("/o/p.prof", 1, 0, 2, 4, "h", "/o/p.prof.rank2");
    expect("/o/p.prof", 1, 0, 2, -1, "h", "/o/p.prof.rank2"); /* size unknown */
    expect("/o/p.prof", 1, 0, 0, 1, "h", "/o/p.prof");        /* a single rank */
    expect("/o/p.prof", 1, 0, -1, -1, "h", "/o/p.prof");      /* no launcher */
    expect("/o/p.%p", 9, 0, 2, 4, "h", "/o/p.9.rank2");       /* %p does not name ranks */
}
END_TEST

START_TEST(cycle_suffix_follows_the_rank_suffix)
{
    expect("/o/p", 1, 3, 2, 4, "h", "/o/p.rank2.cycle3");
    expect("/o/p.%n", 1, 3, 2, 4, "h", "/o/p.3.rank2");
    expect("/o/p.%r", 1, 3, 2, 4, "h", "/o/p.2.cycle3");
}
END_TEST

START_TEST(launchers_are_read_in_order)
{
    const char *ompi[] = {"OMPI_COMM_WORLD_RANK",
                          "3",
                          "OMPI_COMM_WORLD_SIZE",
                          "4",
                          "SLURM_PROCID",
                          "0",
                          "SLURM_NTASKS",
                          "1",
                          NULL};
    struct fnp_launch l = detect(ompi);
    ck_assert_int_eq(l.rank, 3);
    ck_assert_int_eq(l.size, 4);
    const char *pmix[] = {"PMIX_RANK", "5", NULL};
    l = detect(pmix);
    ck_assert_int_eq(l.rank, 5);
    ck_assert_int_eq(l.size, -1);
    const char *hydra[] = {"PMI_RANK", "1", "PMI_SIZE", "2", NULL};
    l = detect(hydra);
    ck_assert_int_eq(l.rank, 1);
    ck_assert_int_eq(l.size, 2);
    const char *srun[] = {"SLURM_PROCID", "6", "SLURM_STEP_NUM_TASKS", "8", "SLURM_NTASKS",
                          "99",           NULL};
    l = detect(srun);
    ck_assert_int_eq(l.rank, 6);
    ck_assert_int_eq(l.size, 8);
    /* A batch script's shell: SLURM_PROCID, but no step of srun's: no rank. */
    const char *batch[] = {"SLURM_PROCID", "0", "SLURM_NTASKS", "4", NULL};
    l = detect(batch);
    ck_assert_int_eq(l.rank, -1);
    ck_assert_int_eq(l.source, -1);
    /* mpirun run from a task of srun: Open MPI's rank, not Slurm's. */
    const char *nested[] = {"SLURM_PROCID",
                            "0",
                            "SLURM_STEP_NUM_TASKS",
                            "1",
                            "OMPI_COMM_WORLD_RANK",
                            "2",
                            "OMPI_COMM_WORLD_SIZE",
                            "4",
                            NULL};
    l = detect(nested);
    ck_assert_int_eq(l.rank, 2);
    ck_assert_int_eq(l.size, 4);
    const char *pmix_srun[] = {"PMIX_RANK", "3", "SLURM_STEP_NUM_TASKS", "8", NULL};
    l = detect(pmix_srun);
    ck_assert_int_eq(l.rank, 3);
    ck_assert_int_eq(l.size, 8);
    const char *mv2[] = {"MV2_COMM_WORLD_RANK", "1", "MV2_COMM_WORLD_SIZE", "2", NULL};
    l = detect(mv2);
    ck_assert_int_eq(l.rank, 1);
    ck_assert_int_eq(l.size, 2);
    const char *pals[] = {"PALS_RANKID", "7", NULL};
    l = detect(pals);
    ck_assert_int_eq(l.rank, 7);
    ck_assert_int_eq(l.size, -1);
    const char *none[] = {"PATH", "/bin", NULL};
    l = detect(none);
    ck_assert_int_eq(l.rank, -1);
    ck_assert_int_eq(l.size, -1);
}
END_TEST

START_TEST(codes_are_found_as_the_expansion_reads_them)
{
    ck_assert(fnp_outname_has("/o/p.%p", 'p'));
    ck_assert(fnp_outname_has("%p", 'p'));
    ck_assert(!fnp_outname_has("/o/p.%%p", 'p')); /* a percent sign, then p */
    ck_assert(fnp_outname_has("/o/p.%%%p", 'p'));
    ck_assert(!fnp_outname_has("/o/p%", 'p'));
    ck_assert(!fnp_outname_has("/o/p", 'p'));
    ck_assert(fnp_outname_has("/o/%r.%p", 'r'));
    expect("/o/out%%p.prof", 42, 0, -1, -1, "h", "/o/out%p.prof");
}
END_TEST

START_TEST(malformed_values_are_not_ranks)
{
    const char *bad[] = {"OMPI_COMM_WORLD_RANK", "3x",          "PMI_RANK", "-1",
                         "SLURM_PROCID",         "99999999999", NULL};
    struct fnp_launch l = detect(bad);
    ck_assert_int_eq(l.rank, -1);
    const char *empty[] = {"OMPI_COMM_WORLD_RANK", "", "PMI_RANK", "2", "PMI_SIZE", "3", NULL};
    l = detect(empty);
    ck_assert_int_eq(l.rank, 2); /* an empty variable is no rank: the next launcher's is */
    ck_assert_int_eq(l.size, 3);
}
END_TEST

START_TEST(size_contradicting_rank_is_dropped)
{
    const char *bad[] = {"OMPI_COMM_WORLD_RANK", "4", "OMPI_COMM_WORLD_SIZE", "4", NULL};
    struct fnp_launch l = detect(bad);
    ck_assert_int_eq(l.rank, 4);
    ck_assert_int_eq(l.size, -1);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("outname");
    TCase *tc = tcase_create("outname");
    tcase_add_test(tc, codes_are_replaced);
    tcase_add_test(tc, other_percents_stay_as_written);
    tcase_add_test(tc, rank_outside_a_launcher_is_zero);
    tcase_add_test(tc, ranks_without_percent_r_get_a_suffix);
    tcase_add_test(tc, cycle_suffix_follows_the_rank_suffix);
    tcase_add_test(tc, launchers_are_read_in_order);
    tcase_add_test(tc, codes_are_found_as_the_expansion_reads_them);
    tcase_add_test(tc, malformed_values_are_not_ranks);
    tcase_add_test(tc, size_contradicting_rank_is_dropped);
    suite_add_tcase(s, tc);
    return fnp_check_run(s);
}
/* SPDX-License-Identifier: MIT */
