/*
 * The flight recorder's fatal path (trace_ring.c, fnp_ring_put_raw) driven with a fake clock
 * on one fake thread: it writes exactly the last N calls, says how many older ones it no
 * longer holds, and reads each record of the pool a bounded number of times (a handler that
 * read it once per step of a search made a program with N = 10 M die seconds late); and its
 * pool does not reserve the pages it has not touched.
 *
 * Linked with --wrap (tests/trace.cmake) so that the records the ring unpacks are counted
 * and what it puts in the raw snapshot is kept here.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "runtime.h"

size_t __real_fnp_trace_unpack(const struct fnp_trace_ev *ev, size_t n, uint64_t *base,
                               struct fnp_trace_rec *out);
size_t __wrap_fnp_trace_unpack(const struct fnp_trace_ev *ev, size_t n, uint64_t *base,
                               struct fnp_trace_rec *out);
void __wrap_fnp_raw_put(struct fnp_raw_out *o, const void *p, size_t len);
void __wrap_fnp_raw_put_u64(struct fnp_raw_out *o, uint64_t v);

static uint64_t unpacked; /* records the ring read */
static unsigned char *raw;
static size_t raw_len, raw_cap;

size_t __wrap_fnp_trace_unpack(const struct fnp_trace_ev *ev, size_t n, uint64_t *base,
                               struct fnp_trace_rec *out)
{
    unpacked += n;
    return __real_fnp_trace_unpack(ev, n, base, out);
}

void __wrap_fnp_raw_put(struct fnp_raw_out *o, const void *p, size_t len)
{
    (void)o;
    if (raw_len + len > raw_cap) {
        raw_cap = (raw_len + len) * 2;
        raw = realloc(raw, raw_cap);
        ck_assert_ptr_nonnull(raw);
    }
    memcpy(raw + raw_len, p, len);
    raw_len += len;
}

void __wrap_fnp_raw_put_u64(struct fnp_raw_out *o, uint64_t v)
{
    unsigned char b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)(v >> (8 * i));
    __wrap_fnp_raw_put(o, b, 8);
}

static uint64_t get_u64(size_t *at)
{
    uint64_t v = 0;
    ck_assert_uint_le(*at + 8, raw_len);
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)raw[*at + (size_t)i] << (8 * i);
    *at += 8;
    return v;
}

enum { N = 1000, CALLS = 5000, TID = 4242 };

/* The pool's records for N (docs/trace.md: chunks of N/16 records, at least 64, N's calls
 * plus 33 chunks). */
static uint64_t pool_records(uint64_t n)
{
    uint64_t chunk = n / 16 < 64 ? 64 : n / 16 > 4096 ? 4096 : n / 16;
    return ((n + chunk - 1) / chunk + 33) * chunk;
}

START_TEST(the_fatal_path_writes_the_last_n_calls_reading_each_record_twice_at_most)
{
    ck_assert_int_eq(fnp_ring_init(N), 0);
    struct fnp_thread *t = fnp_pages(sizeof(*t));
    ck_assert_ptr_nonnull(t);
    t->tid = TID;
    static struct fnp_node node = {.fn = 0x401000};
    /* Call i runs from 10 i to 10 i + 5: the last N end after 10 (CALLS - N) - 5. */
    for (uint64_t i = 0; i < CALLS; i++)
        fnp_trace_add(t, &node, 10 * i, 10 * i + 5);
    fnp_ring_thread_ended(t); /* its chunk sealed: the ring holds every call it keeps */

    unpacked = 0;
    raw_len = 0;
    /* "now" far past the last call: a search on the clock would take many steps */
    fnp_ring_put_raw(NULL, (uint64_t)1 << 40);

    uint64_t expect = 10 * (CALLS - N) + 5, found = 0;
    int window = 0;
    for (size_t at = 0; at < raw_len;) {
        char kind = (char)raw[at++];
        if (kind == 'F') {
            uint64_t tid = get_u64(&at), fn = get_u64(&at), t0 = get_u64(&at), t1 = get_u64(&at);
            if (tid != TID)
                continue; /* the process's own thread, when the runtime has one */
            ck_assert_uint_eq(fn, node.fn);
            ck_assert_uint_eq(t1, expect); /* in order, none missing, none older */
            ck_assert_uint_eq(t0, expect - 5);
            expect += 10;
            found++;
        } else if (kind == 'K') {
            get_u64(&at);
            at += get_u64(&at);
        } else {
            ck_assert_int_eq(kind, 'W');
            ck_assert_uint_eq(get_u64(&at), N);
            ck_assert_uint_eq(get_u64(&at), CALLS - N); /* overwritten or left out */
            window = 1;
            break;
        }
    }
    ck_assert_int_eq(window, 1);
    ck_assert_uint_eq(found, N);
    /* Once to find the window, once to copy it. */
    ck_assert_uint_le(unpacked, 2 * pool_records(N));
}
END_TEST

/* The VmFlags of the largest mapping of the process (its smaps), into flags. */
static size_t largest_mapping_flags(char *flags, size_t size)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    ck_assert_ptr_nonnull(f);
    char line[512];
    size_t best = 0, cur = 0;
    flags[0] = 0;
    while (fgets(line, sizeof(line), f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2)
            cur = hi - lo;
        else if (!strncmp(line, "VmFlags:", 8) && cur > best) {
            best = cur;
            size_t len = strnlen(line + 8, size - 1);
            memcpy(flags, line + 8, len);
            flags[len] = 0;
        }
    }
    fclose(f);
    return best;
}

START_TEST(the_pool_is_mapped_without_reserving_its_pages)
{
    int mode = -1;
    FILE *f = fopen("/proc/sys/vm/overcommit_memory", "r");
    if (f) {
        if (fscanf(f, "%d", &mode) != 1)
            mode = -1;
        fclose(f);
    }
    if (mode == 2) { /* strict: the kernel ignores MAP_NORESERVE there */
        fprintf(stderr, "check_ring: vm.overcommit_memory=2, the pool's flags not checked\n");
        return;
    }
    /* N = 2^26: a pool of 1.1 GB, by far the process's largest mapping */
    ck_assert_int_eq(fnp_ring_init((uint64_t)1 << 26), 0);
    char flags[256];
    ck_assert_uint_ge(largest_mapping_flags(flags, sizeof(flags)), (size_t)1 << 30);
    /* "nr": swap space is not reserved for it (the kernel's VM_NORESERVE) */
    ck_assert_msg(strstr(flags, " nr") != NULL, "the pool's VmFlags:%s", flags);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ring");
    TCase *tc = tcase_create("ring");
    tcase_add_test(tc, the_fatal_path_writes_the_last_n_calls_reading_each_record_twice_at_most);
    tcase_add_test(tc, the_pool_is_mapped_without_reserving_its_pages);
    suite_add_tcase(s, tc);
    return fnp_check_run(s);
}
/* SPDX-License-Identifier: MIT */
