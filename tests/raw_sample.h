/*
 * A raw snapshot (profile.h: FNP_RAW_MAGIC) built byte by byte, shared by the reader's
 * unit test and its fuzz target (as the seed). Two threads; the first has a named region,
 * the second a folded recursion link, a link merged beyond the node cap, and open calls on
 * both kinds.
 */
#ifndef FNPROF_TESTS_RAW_SAMPLE_H
#define FNPROF_TESTS_RAW_SAMPLE_H

#include <stdint.h>
#include <string.h>

#include "profile.h"

struct raw_buf {
    unsigned char b[4096];
    size_t n;
};

static inline void raw_put(struct raw_buf *r, const void *p, size_t n)
{
    memcpy(r->b + r->n, p, n);
    r->n += n;
}

static inline void raw_u64(struct raw_buf *r, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        r->b[r->n++] = (unsigned char)(v >> (8 * i));
}

/* r holds the header alone: the magic, a tick of 1 ns, timed (not count-only). */
static inline void raw_header(struct raw_buf *r)
{
    double secs = 1e-9;
    uint64_t bits;
    memcpy(&bits, &secs, 8);
    r->n = 0;
    raw_put(r, FNP_RAW_MAGIC, 8);
    raw_u64(r, bits);
    raw_u64(r, 0);
}

static inline void raw_region(struct raw_buf *r, uint64_t line, const char *file, const char *name)
{
    raw_put(r, "R", 1);
    raw_u64(r, line);
    raw_u64(r, strlen(file));
    raw_put(r, file, strlen(file));
    raw_u64(r, strlen(name));
    raw_put(r, name, strlen(name));
}

static inline void raw_rec(struct raw_buf *r, char type, int n, const uint64_t *v)
{
    raw_put(r, &type, 1);
    for (int i = 0; i < n; i++)
        raw_u64(r, v[i]);
}

#define RAW_REC(r, type, ...)                                                                      \
    raw_rec((r), (type), sizeof((uint64_t[]){__VA_ARGS__}) / 8, (uint64_t[]){__VA_ARGS__})

/*
 * Regions: 1 is ("a.c", 7, "load"), 2 ("<unknown>", 0, "") (no node names it).
 * Thread 0: main(0x1000) -> f(0x1100) x3; main -> region 1 x2.
 * Thread 1: run(0x2000) -> g(0x2100) -> g (id 22) -> link 23 to node 22 from 22 (folded
 * g, 5 calls, 40 ticks, one open for 7); run -> h(0x2200) id 24 under a cap link 25 from no
 * node, flags FUNC, 2 calls, 10 ticks.
 */
static inline void raw_sample(struct raw_buf *r)
{
    raw_header(r);
    const char path[] = "/bin/prog";
    raw_put(r, "M", 1);
    raw_u64(r, 0x400000 - 0x1000);
    raw_u64(r, 0x1000);
    raw_u64(r, 0x3000);
    raw_u64(r, UINT32_MAX);
    raw_u64(r, sizeof(path) - 1);
    raw_put(r, path, sizeof(path) - 1);
    raw_region(r, 7, "a.c", "load");
    raw_region(r, 0, "<unknown>", "");
    raw_put(r, "T", 1);
    RAW_REC(r, 'N', 11, 0, 0x1000, 1, 100);
    RAW_REC(r, 'N', 12, 11, 0x1100, 3, 30);
    RAW_REC(r, 'N', 13, 11, FNP_REGION_TAG | 1, 2, 20);
    raw_put(r, "T", 1);
    RAW_REC(r, 'N', 21, 0, 0x2000, 1, 200);
    RAW_REC(r, 'N', 22, 21, 0x2100, 1, 60);
    RAW_REC(r, 'N', 24, 21, 0x2200, 0, 0);
    RAW_REC(r, 'L', 23, 22, 22, 5, 40, 0);
    RAW_REC(r, 'L', 25, 24, 0x2000, 2, 10, FNP_OPEN_GIVEN | FNP_OPEN_FUNC);
    RAW_REC(r, 'O', 21, 9);
    RAW_REC(r, 'O', 23, 7);
    RAW_REC(r, 'E', 0, 0, 2, 2, 64);
}

/* For a fuzz target's custom mutator: an empty input becomes the sample (the corpus needs
 * no seed file in the tree). Its size, or 0 when the input is not empty or it does not fit
 * in max_size. */
static inline size_t raw_sample_seed(uint8_t *data, size_t size, size_t max_size)
{
    struct raw_buf r;
    if (size != 0)
        return 0;
    raw_sample(&r);
    if (r.n > max_size)
        return 0;
    memcpy(data, r.b, r.n);
    return r.n;
}

#endif
/* SPDX-License-Identifier: MIT */
