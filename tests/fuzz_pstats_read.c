/*
 * libFuzzer target for the pstats reader. Beyond "no crash, no leak, no undefined
 * behaviour" (ASan, UBSan), it checks what a read promises: a profile whose edges name
 * existing functions and whose times are finite and non-negative, which the model's writer
 * turns into bytes that read back to the same numbers; and a failure with a one-line
 * reason that leaves the profile untouched.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "profile.h"

/* The writer replaces encoded surrogates (which CPython writes for undecodable file names)
 * by U+FFFD, so keys holding them do not come back byte for byte. */
static int has_surrogate(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)s[0] == 0xed && (unsigned char)s[1] >= 0xa0)
            return 1;
    return 0;
}

static int same_stats(const struct fnp_stats *a, const struct fnp_stats *b)
{
    return a->ncalls == b->ncalls && a->pcalls == b->pcalls && a->tottime == b->tottime &&
           a->cumtime == b->cumtime;
}

static void round_trip(const struct fnp_profile *p)
{
    for (size_t i = 0; i < p->nfuncs; i++)
        if (has_surrogate(p->funcs[i].key.file) || has_surrogate(p->funcs[i].key.name))
            return;
    struct fnp_sink s;
    fnp_sink_memory(&s);
    CHECK(fnp_pstats_write(p, &s) == 0);
    struct fnp_profile q;
    char why[256];
    fnp_profile_init(&q);
    CHECK(fnp_pstats_read(&q, s.buf, s.len, why, sizeof(why)) == 0);
    CHECK(q.nfuncs == p->nfuncs && q.nedges == p->nedges);
    for (size_t i = 0; i < p->nfuncs; i++) {
        const struct fnp_func *a = &p->funcs[i], *b = &q.funcs[i];
        CHECK(!strcmp(a->key.file, b->key.file) && a->key.line == b->key.line &&
              !strcmp(a->key.name, b->key.name) && same_stats(&a->st, &b->st));
    }
    for (size_t i = 0; i < p->nedges; i++) {
        int64_t e = fnp_profile_find_edge(&q, p->edges[i].caller, p->edges[i].callee);
        CHECK(e >= 0 && same_stats(&p->edges[i].st, &q.edges[e].st));
    }
    fnp_profile_free(&q);
    fnp_sink_free(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fnp_profile p;
    char why[512];
    memset(why, 'x', sizeof(why));
    fnp_profile_init(&p);
    int rc = fnp_pstats_read(&p, data, size, why, sizeof(why));
    if (rc) {
        CHECK(rc == -EINVAL);
        CHECK(memchr(why, '\0', sizeof(why)) && !strncmp(why, "offset ", 7) && !strchr(why, '\n'));
        CHECK(p.nfuncs == 0 && p.nedges == 0 && !p.funcs);
        return 0;
    }
    CHECK(p.nfuncs > 0);
    for (size_t i = 0; i < p.nedges; i++)
        CHECK(p.edges[i].caller < p.nfuncs && p.edges[i].callee < p.nfuncs);
    for (size_t i = 0; i < p.nfuncs; i++) {
        const struct fnp_stats *st = &p.funcs[i].st;
        CHECK(isfinite(st->tottime) && st->tottime >= 0 && isfinite(st->cumtime) &&
              st->cumtime >= 0);
    }
    round_trip(&p);
    fnp_profile_free(&p);
    return 0;
}
/* SPDX-License-Identifier: MIT */
