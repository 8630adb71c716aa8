/*
 * The raw snapshot reader (profile/raw_read.c): a hand-built file gives exactly the forest
 * it describes (links merged into their targets, open calls added, back ticks where the
 * runtime's own snapshot puts them), and every cut or damaged file gives -EINVAL with a
 * reason, never a crash.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "profile.h"
#include "raw_sample.h"

START_TEST(sample_reads_as_written)
{
    struct raw_buf r;
    raw_sample(&r);
    struct fnp_raw_file f;
    char why[256] = "";
    ck_assert_msg(fnp_raw_read(&f, r.b, r.n, why, sizeof(why)) == 0, "%s", why);
    ck_assert_uint_eq(f.raw.n, 6);
    ck_assert_uint_eq(f.raw.threads, 2);
    ck_assert_uint_eq(f.raw.nmods, 1);
    ck_assert_str_eq(f.raw.mods[0].path, "/bin/prog");
    ck_assert_uint_eq(f.raw.merged, 2);
    ck_assert_uint_eq(f.raw.max_nodes, 64);
    ck_assert_uint_eq(f.threads_seen, 2);
    ck_assert_uint_eq(f.raw.nregions, 2);
    ck_assert_str_eq(f.raw.regions[0].file, "a.c");
    ck_assert_uint_eq(f.raw.regions[0].line, 7);
    ck_assert_str_eq(f.raw.regions[0].name, "load");
    ck_assert_str_eq(f.raw.regions[1].file, "<unknown>");
    ck_assert_str_eq(f.raw.regions[1].name, "");
    const struct fnp_raw_node *n = f.raw.nodes;
    /* thread 0 */
    ck_assert_uint_eq(n[0].parent, FNP_NO_PARENT);
    ck_assert_uint_eq(n[1].parent, 0);
    ck_assert_uint_eq(n[1].ncalls, 3);
    ck_assert_uint_eq(n[2].parent, 0);
    ck_assert_uint_eq(n[2].fn, FNP_REGION_TAG | 1);
    /* thread 1: run got its open 9 ticks; g (22) took the folded link's 5 calls and 40 + 7
     * ticks, which come off its own time (back, as its caller too) and are put back for
     * run, whose child's ticks now hold them; h took the capped link's calls and flags */
    ck_assert_uint_eq(n[3].thread, 1);
    ck_assert_uint_eq(n[3].ticks, 209);
    ck_assert_uint_eq(n[4].ncalls, 6);
    ck_assert_uint_eq(n[4].ticks, 107);
    ck_assert_int_eq(n[4].back, 47);
    ck_assert_int_eq(n[3].back, -47);
    ck_assert_uint_eq(n[5].ncalls, 2);
    ck_assert_uint_eq(n[5].ticks, 10);
    ck_assert_uint_eq(n[5].flags, FNP_OPEN_GIVEN | FNP_OPEN_FUNC);
    ck_assert_int_eq(n[5].back, 0);
    fnp_raw_file_free(&f);
}
END_TEST

START_TEST(every_cut_is_refused)
{
    struct raw_buf r;
    raw_sample(&r);
    for (size_t len = 0; len < r.n; len++) {
        struct fnp_raw_file f;
        char why[256] = "";
        ck_assert_int_eq(fnp_raw_read(&f, r.b, len, why, sizeof(why)), -EINVAL);
        ck_assert_msg(strncmp(why, "offset ", 7) == 0, "cut at %zu: %s", len, why);
        fnp_raw_file_free(&f);
    }
}
END_TEST

START_TEST(damage_never_crashes)
{
    /* Every byte replaced by a few values: read or refused, and what is read is a forest
     * whose parents come first. */
    struct raw_buf r, bad;
    raw_sample(&r);
    static const unsigned char values[] = {0, 1, 0x7f, 0x80, 0xff, 'N', 'L'};
    for (size_t i = 0; i < r.n; i++) {
        for (size_t v = 0; v < sizeof(values); v++) {
            bad = r;
            bad.b[i] = values[v];
            struct fnp_raw_file f;
            int rc = fnp_raw_read(&f, bad.b, bad.n, NULL, 0);
            ck_assert(rc == 0 || rc == -EINVAL);
            for (size_t k = 0; rc == 0 && k < f.raw.n; k++)
                ck_assert(f.raw.nodes[k].parent == FNP_NO_PARENT || f.raw.nodes[k].parent < k);
            fnp_raw_file_free(&f);
        }
    }
}
END_TEST

START_TEST(links_past_2_63_ticks_wrap_without_overflow)
{
    /* No checksum guards a raw snapshot: three links of 2^62 ticks each, recorded from
     * main, give main 3 * 2^62 back ticks, which wrap (as every tick sum of the model
     * does) rather than overflow an int64_t (UBSan: signed integer overflow). */
    struct raw_buf r;
    raw_header(&r);
    raw_put(&r, "T", 1);
    RAW_REC(&r, 'N', 11, 0, 0x1000, 1, 100);
    RAW_REC(&r, 'N', 12, 11, 0x1100, 1, 50);
    RAW_REC(&r, 'N', 13, 12, 0x1200, 1, 10);
    for (uint64_t id = 20; id < 23; id++)
        RAW_REC(&r, 'L', id, 13, 11, 1, UINT64_C(1) << 62, 0);
    RAW_REC(&r, 'E', 0, 0, 1, 0, 0);
    struct fnp_raw_file f;
    char why[256] = "";
    ck_assert_msg(fnp_raw_read(&f, r.b, r.n, why, sizeof(why)) == 0, "%s", why);
    ck_assert_uint_eq((uint64_t)f.raw.nodes[0].back, UINT64_C(3) << 62);
    ck_assert_uint_eq((uint64_t)f.raw.nodes[1].back, 0 - (UINT64_C(3) << 62));
    struct fnp_profile p;
    fnp_profile_init(&p);
    ck_assert_int_eq(fnp_profile_build(&p, &f.raw, NULL), 0);
    fnp_profile_free(&p);
    fnp_raw_file_free(&f);
}
END_TEST

START_TEST(flight_records_read_and_checked)
{
    /* PROF_TRACE_LAST's records (runtime/trace_ring.c): the calls in order, the thread
     * names, the numbers; a call that ends before it starts, or at address 0, is refused. */
    struct raw_buf r;
    raw_header(&r);
    RAW_REC(&r, 'F', 7, 0x1010, 100, 200);
    RAW_REC(&r, 'F', 7, 0x1000, 90, 250);
    raw_put(&r, "K", 1);
    raw_u64(&r, 7);
    raw_u64(&r, 6);
    raw_put(&r, "worker", 6);
    RAW_REC(&r, 'W', 1000, 55, 2, 80, 4242);
    RAW_REC(&r, 'E', 0, 0, 0, 0, 0);
    struct fnp_raw_file f;
    char why[256] = "";
    ck_assert_msg(fnp_raw_read(&f, r.b, r.n, why, sizeof(why)) == 0, "%s", why);
    ck_assert(f.flight_seen);
    ck_assert_uint_eq(f.nflight, 2);
    ck_assert_uint_eq(f.flight[1].fn, 0x1000);
    ck_assert_uint_eq(f.flight[1].t1, 250);
    ck_assert_uint_eq(f.nflight_tracks, 1);
    ck_assert_str_eq(f.flight_tracks[0].name, "worker");
    ck_assert_uint_eq(f.flight_last, 1000);
    ck_assert_uint_eq(f.flight_overwritten, 55);
    ck_assert_uint_eq(f.flight_origin, 80);
    ck_assert_uint_eq(f.flight_pid, 4242);
    fnp_raw_file_free(&f);
    static const uint64_t bad[][4] = {{7, 0x1000, 300, 200}, {7, 0, 1, 2}};
    for (size_t i = 0; i < 2; i++) {
        raw_header(&r);
        RAW_REC(&r, 'F', bad[i][0], bad[i][1], bad[i][2], bad[i][3]);
        RAW_REC(&r, 'E', 0, 0, 0, 0, 0);
        ck_assert_int_eq(fnp_raw_read(&f, r.b, r.n, why, sizeof(why)), -EINVAL);
        ck_assert_msg(strstr(why, "flight recording") != NULL, "%s", why);
        fnp_raw_file_free(&f);
    }
    /* a name past the input */
    raw_header(&r);
    raw_put(&r, "K", 1);
    raw_u64(&r, 7);
    raw_u64(&r, 1000);
    RAW_REC(&r, 'E', 0, 0, 0, 0, 0);
    ck_assert_int_eq(fnp_raw_read(&f, r.b, r.n, why, sizeof(why)), -EINVAL);
    fnp_raw_file_free(&f);
}
END_TEST

START_TEST(regions_name_their_keys)
{
    /* The profile built from the sample names region 1's node by its record, as the exit
     * dump names it from the runtime's table. */
    struct raw_buf r;
    raw_sample(&r);
    struct fnp_raw_file f;
    char why[256] = "";
    ck_assert_msg(fnp_raw_read(&f, r.b, r.n, why, sizeof(why)) == 0, "%s", why);
    struct fnp_profile p;
    fnp_profile_init(&p);
    ck_assert_int_eq(fnp_profile_build(&p, &f.raw, NULL), 0);
    int found = 0;
    for (size_t i = 0; i < p.nfuncs; i++)
        if (strcmp(p.funcs[i].key.name, "load") == 0) {
            ck_assert_str_eq(p.funcs[i].key.file, "a.c");
            ck_assert_uint_eq(p.funcs[i].key.line, 7);
            ck_assert_uint_eq(p.funcs[i].st.ncalls, 2);
            found = 1;
        }
    ck_assert(found);
    fnp_profile_free(&p);
    fnp_raw_file_free(&f);
}
END_TEST

/* A snapshot with one region record whose line, file or name length field is v. */
static void region_with(struct raw_buf *r, int field, uint64_t v)
{
    raw_header(r);
    raw_put(r, "R", 1);
    raw_u64(r, field == 0 ? v : 7);
    raw_u64(r, field == 1 ? v : 3);
    raw_put(r, "a.c", 3);
    raw_u64(r, field == 2 ? v : 4);
    raw_put(r, "lo\0d", 4);
    RAW_REC(r, 'E', 0, 0, 0, 0, 0);
}

START_TEST(hostile_region_records_are_refused)
{
    /* Lengths past the file's end or wrapping a size_t, a line past 32 bits, a NUL in a
     * name: -EINVAL with the offset, never a read out of bounds. */
    static const struct {
        int field;
        uint64_t v;
    } cases[] = {
        {0, UINT64_C(1) << 32}, {1, 1000}, {1, UINT64_MAX},
        {1, UINT64_MAX - 7},    {2, 1000}, {2, UINT64_MAX},
        {2, 4} /* "lo\0d" */,
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct raw_buf r;
        region_with(&r, cases[i].field, cases[i].v);
        struct fnp_raw_file f;
        char why[256] = "";
        ck_assert_int_eq(fnp_raw_read(&f, r.b, r.n, why, sizeof(why)), -EINVAL);
        ck_assert_msg(strncmp(why, "offset ", 7) == 0, "case %zu: %s", i, why);
        fnp_raw_file_free(&f);
    }
    /* and many regions, empty strings: each record is counted against the input */
    struct raw_buf r;
    region_with(&r, 2, 4);
    r.n -= 1 + 5 * 8;
    r.b[r.n - 2] = 'o'; /* "lo\0d" made "lood" */
    for (int i = 0; i < 100; i++) {
        raw_put(&r, "R", 1);
        raw_u64(&r, (uint64_t)i);
        raw_u64(&r, 0);
        raw_u64(&r, 0);
    }
    RAW_REC(&r, 'E', 0, 0, 0, 0, 0);
    struct fnp_raw_file f;
    char why[256] = "";
    ck_assert_msg(fnp_raw_read(&f, r.b, r.n, why, sizeof(why)) == 0, "%s", why);
    ck_assert_uint_eq(f.raw.nregions, 101);
    ck_assert_str_eq(f.raw.regions[0].name, "lood");
    ck_assert_str_eq(f.raw.regions[100].file, "");
    ck_assert_uint_eq(f.raw.regions[100].line, 99);
    fnp_raw_file_free(&f);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("raw_read");
    TCase *tc = tcase_create("raw_read");
    tcase_add_test(tc, sample_reads_as_written);
    tcase_add_test(tc, every_cut_is_refused);
    tcase_add_test(tc, damage_never_crashes);
    tcase_add_test(tc, links_past_2_63_ticks_wrap_without_overflow);
    tcase_add_test(tc, regions_name_their_keys);
    tcase_add_test(tc, flight_records_read_and_checked);
    tcase_add_test(tc, hostile_region_records_are_refused);
    suite_add_tcase(s, tc);
    return fnp_check_run(s);
}
/* SPDX-License-Identifier: MIT */
