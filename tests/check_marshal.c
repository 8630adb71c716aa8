/* The marshal and pstats writers, byte for byte against what CPython's marshal reads. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_run.h"
#include "profile.h"

static void ck_bytes(const struct fnp_sink *s, const char *hex)
{
    char got[4096] = "";
    for (size_t i = 0; i < s->len && 3 * i + 3 < sizeof(got); i++)
        snprintf(got + 3 * i, 4, "%02x ", (unsigned char)s->buf[i]);
    size_t n = strlen(got);
    if (n)
        got[n - 1] = 0;
    ck_assert_str_eq(got, hex);
}

START_TEST(smallest_pstats_file_matches_the_reference_bytes)
{
    struct fnp_profile p;
    fnp_profile_init(&p);
    struct fnp_key k = {"a.c", 3, "f"};
    int64_t f = fnp_profile_func(&p, &k);
    ck_assert_int_eq(f, 0);
    p.funcs[0].st = (struct fnp_stats){1, 1, 0.5, 0.5};
    struct fnp_sink s;
    fnp_sink_memory(&s);
    ck_assert_int_eq(fnp_pstats_write(&p, &s), 0);
    ck_bytes(&s, "7b 29 03 7a 03 61 2e 63 69 03 00 00 00 7a 01 66 29 05 69 01 00 00 00 69 01 00 "
                 "00 00 67 00 00 00 00 00 00 e0 3f 67 00 00 00 00 00 00 e0 3f 7b 30 30");
    fnp_sink_free(&s);
    fnp_profile_free(&p);
}
END_TEST

START_TEST(ints_past_int32_use_15_bit_digits)
{
    struct fnp_sink s;
    fnp_sink_memory(&s);
    fnp_marshal_int(&s, 0x7fffffff);
    ck_bytes(&s, "69 ff ff ff 7f");
    s.len = 0;
    fnp_marshal_int(&s, 0x80000000u); /* 2^31 = 2 * 2^30: digits 0, 0, 2 */
    ck_bytes(&s, "6c 03 00 00 00 00 00 00 00 02 00");
    s.len = 0;
    fnp_marshal_int(&s, UINT64_MAX); /* 64 bits: five digits, the last holds 4 bits */
    ck_bytes(&s, "6c 05 00 00 00 ff 7f ff 7f ff 7f ff 7f 0f 00");
    fnp_sink_free(&s);
}
END_TEST

START_TEST(strings_are_short_ascii_or_valid_utf8)
{
    struct fnp_sink s;
    fnp_sink_memory(&s);
    fnp_marshal_str(&s, "\xc3\xa9"); /* é: valid, not ASCII */
    ck_bytes(&s, "75 02 00 00 00 c3 a9");
    s.len = 0;
    fnp_marshal_str(&s, "a\xff"
                        "b"); /* a lone byte becomes U+FFFD */
    ck_bytes(&s, "75 05 00 00 00 61 ef bf bd 62");
    s.len = 0;
    fnp_marshal_str(&s, "\xed\xa0\x80"); /* an encoded surrogate is not UTF-8 */
    ck_bytes(&s, "75 09 00 00 00 ef bf bd ef bf bd ef bf bd");
    s.len = 0;
    char big[300];
    memset(big, 'x', sizeof(big) - 1);
    big[299] = 0;
    fnp_marshal_str(&s, big); /* ASCII, but too long for the one-byte length */
    ck_assert_uint_eq(s.len, 5 + 299);
    ck_assert_int_eq(s.buf[0], 'u');
    fnp_sink_free(&s);
}
END_TEST

START_TEST(times_are_never_nan_inf_or_negative)
{
    struct fnp_profile p;
    fnp_profile_init(&p);
    struct fnp_key k = {"a.c", 3, "f"};
    fnp_profile_func(&p, &k);
    p.funcs[0].st = (struct fnp_stats){1, 1, -1.0, __builtin_nan("")};
    struct fnp_sink s;
    fnp_sink_memory(&s);
    ck_assert_int_eq(fnp_pstats_write(&p, &s), 0);
    double tt, ct;
    memcpy(&tt, s.buf + 29, 8);
    memcpy(&ct, s.buf + 38, 8);
    ck_assert_double_eq(tt, 0.0);
    ck_assert_double_eq(ct, 0.0);
    fnp_sink_free(&s);
    fnp_profile_free(&p);
}
END_TEST

static int write_nothing_then_fail(struct fnp_sink *s, void *ctx)
{
    fnp_sink_write(s, "partial", 7);
    return -5;
}

/* A new folder (dir, "/tmp/fnprof-test-XXXXXX" filled in) and path, name in it. */
static void temp_file(char *dir, char *path, size_t size, const char *name)
{
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, size, "%s/%s", dir, name);
}

static void remove_dir(const char *dir)
{
    char cmd[160];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}

static int write_hello(struct fnp_sink *s, void *ctx)
{
    fnp_sink_write(s, ctx, strlen(ctx));
    return s->err;
}

START_TEST(atomic_write_keeps_the_old_file_on_failure)
{
    char dir[] = "/tmp/fnprof-test-XXXXXX", path[128];
    temp_file(dir, path, sizeof(path), "out.prof");
    ck_assert_int_eq(fnp_write_file_atomic(path, write_hello, "good"), 0);
    ck_assert_int_eq(fnp_write_file_atomic(path, write_nothing_then_fail, NULL), -5);
    FILE *f = fopen(path, "r");
    char buf[16] = "";
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(fgets(buf, sizeof(buf), f));
    fclose(f);
    ck_assert_str_eq(buf, "good");
    char cmd[160];
    snprintf(cmd, sizeof(cmd), "test $(ls -A %s | wc -l) -eq 1", dir);
    ck_assert_int_eq(system(cmd), 0); /* no temporary file left behind */
    snprintf(path, sizeof(path), "%s/missing/out.prof", dir);
    ck_assert_int_eq(fnp_write_file_atomic(path, write_hello, "x"), -ENOENT);
    remove_dir(dir);
}
END_TEST

/* 3 MiB in 4 KiB pieces, reserving 8 MiB ahead; what the file held mid-way. */
struct reserved_run {
    uint64_t reserved;
    long long blocks_bytes;
};

static int write_reserved(struct fnp_sink *s, void *ctx)
{
    struct reserved_run *r = ctx;
    fnp_sink_reserve(s, 8u << 20);
    char piece[4096];
    for (unsigned i = 0; i < 768; i++) {
        memset(piece, 'a' + i % 26, sizeof(piece));
        fnp_sink_write(s, piece, sizeof(piece));
        if (i == 256) {
            struct stat st;
            fnp_sink_flush(s);
            ck_assert_int_eq(fstat(s->fd, &st), 0);
            r->reserved = s->reserved;
            r->blocks_bytes = (long long)st.st_blocks * 512;
        }
    }
    return s->err;
}

START_TEST(a_reserved_file_has_its_bytes_and_nothing_past_them)
{
    char dir[] = "/tmp/fnprof-test-XXXXXX", path[128];
    temp_file(dir, path, sizeof(path), "out.pftrace");
    struct reserved_run r = {0, 0};
    ck_assert_int_eq(fnp_write_file_atomic(path, write_reserved, &r), 0);
    /* Mid-way the blocks ran ahead of the writes (where the file system reserves at all:
     * r.reserved is 0 where fallocate is refused). */
    if (r.reserved) {
        ck_assert_uint_ge(r.reserved, 8u << 20);
        ck_assert_uint_ge(r.reserved, 257u << 12);
        ck_assert_int_ge(r.blocks_bytes, (long long)r.reserved);
    }
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_eq(st.st_size, 768 * 4096);
    /* the reserve past the end given back: no more blocks than the bytes need */
    ck_assert_int_le((long long)st.st_blocks * 512, 768LL * 4096 + 65536);
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    char piece[4096];
    for (unsigned i = 0; i < 768; i++) {
        ck_assert_uint_eq(fread(piece, 1, sizeof(piece), f), sizeof(piece));
        ck_assert_int_eq(piece[0], 'a' + i % 26);
        ck_assert_int_eq(piece[4095], 'a' + i % 26);
    }
    fclose(f);
    remove_dir(dir);
}
END_TEST

/* Perfetto's slices, batched into a file's buffer in place, are the bytes one at a time
 * through a memory sink (the copying path) makes: across batch and buffer boundaries. */
static int write_slices(struct fnp_sink *s, void *ctx)
{
    const struct fnp_pf_slice_ev *ev = ctx;
    fnp_pf_slices(s, 7, ev, 3000);
    return s->err;
}

START_TEST(batched_slices_are_the_single_ones)
{
    static struct fnp_pf_slice_ev ev[3000];
    for (size_t i = 0; i < 3000; i++)
        ev[i] = (struct fnp_pf_slice_ev){(i * 7919) % 300000, i % 3 ? i % 500 + 1 : 0};
    struct fnp_sink one;
    fnp_sink_memory(&one);
    for (size_t i = 0; i < 3000; i++)
        fnp_pf_slice(&one, 7, ev[i].delta_ns, ev[i].iid);
    ck_assert_int_eq(one.err, 0);
    char dir[] = "/tmp/fnprof-test-XXXXXX", path[128];
    temp_file(dir, path, sizeof(path), "slices.pftrace");
    ck_assert_int_eq(fnp_write_file_atomic(path, write_slices, ev), 0);
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    char *got = malloc(one.len + 1);
    ck_assert_uint_eq(fread(got, 1, one.len + 1, f), one.len);
    fclose(f);
    ck_assert_int_eq(memcmp(got, one.buf, one.len), 0);
    free(got);
    fnp_sink_free(&one);
    remove_dir(dir);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("marshal");
    TCase *tc = tcase_create("marshal");
    tcase_add_test(tc, smallest_pstats_file_matches_the_reference_bytes);
    tcase_add_test(tc, ints_past_int32_use_15_bit_digits);
    tcase_add_test(tc, strings_are_short_ascii_or_valid_utf8);
    tcase_add_test(tc, times_are_never_nan_inf_or_negative);
    tcase_add_test(tc, atomic_write_keeps_the_old_file_on_failure);
    tcase_add_test(tc, a_reserved_file_has_its_bytes_and_nothing_past_them);
    tcase_add_test(tc, batched_slices_are_the_single_ones);
    suite_add_tcase(s, tc);
    return fnp_check_run(s);
}
/* SPDX-License-Identifier: MIT */
