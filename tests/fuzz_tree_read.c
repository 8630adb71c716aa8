/*
 * libFuzzer target for the calling-context tree's reader (profile/tree_read.c). The input
 * is a trailer after a fixed dict of four functions: as it is when the first byte is odd,
 * else the rest is taken as a body and given a correct header (checksums, length), so
 * that the fuzzer gets past the checksums to the body's parser; the first byte's bit 1
 * makes that header's kind 0 (metadata alone), bit 2 its version 1 (no metadata). A tree
 * and metadata that read must be canonical: written and read again, they come back the
 * same. A failure is -EINVAL with a one-line reason and a profile with nothing in it.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "fuzz_tree.h"
#include "profile.h"

static struct fnp_sink dict;

static void make_dict(void)
{
    struct fnp_profile p;
    fnp_profile_init(&p);
    static const char *const names[] = {"main", "a", "b", "c"};
    for (int i = 0; i < 4; i++) {
        struct fnp_key k = {"/src/x.c", (uint32_t)i + 1, names[i]};
        CHECK(fnp_profile_func(&p, &k) == i);
    }
    fnp_sink_memory(&dict);
    CHECK(fnp_pstats_write(&p, &dict) == 0);
    fnp_profile_free(&p);
}

static void same_tree(const struct fnp_profile *a, const struct fnp_profile *b)
{
    CHECK(a->nmeta == b->nmeta);
    for (size_t i = 0; i < a->nmeta; i++)
        CHECK(!strcmp(a->meta[i].key, b->meta[i].key) &&
              !strcmp(a->meta[i].value, b->meta[i].value));
    CHECK(a->tree_kind == b->tree_kind && a->ntree == b->ntree && a->nthreads == b->nthreads);
    CHECK(a->tick_seconds == b->tick_seconds);
    for (size_t i = 0; i < a->nthreads; i++)
        CHECK(!strcmp(a->threads[i], b->threads[i]));
    for (size_t i = 0; i < a->ntree; i++) {
        const struct fnp_tree_node *x = &a->tree[i], *y = &b->tree[i];
        CHECK(x->func == y->func && x->parent == y->parent && x->thread == y->thread &&
              x->ncalls == y->ncalls && x->ticks == y->ticks && x->back == y->back &&
              x->flags == y->flags);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!dict.buf)
        make_dict();
    if (!size)
        return 0;
    int raw = data[0] & 1;
    uint32_t kind = data[0] & 2 ? FNP_TREE_NONE : FNP_TREE_TIME;
    int v1 = data[0] & 4;
    data++;
    size--;
    size_t len;
    unsigned char *file;
    if (raw) {
        len = dict.len + size;
        file = malloc(len ? len : 1);
        CHECK(file);
        memcpy(file, dict.buf, dict.len);
        memcpy(file + dict.len, data, size);
    } else {
        file = fuzz_tree_file(dict.buf, dict.len, 4, kind, 1e-9, data, size, &len);
        if (v1)
            file[dict.len + 8] = 1; /* the version is outside both checksums */
    }
    struct fnp_profile p;
    char why[512];
    memset(why, 'x', sizeof(why));
    fnp_profile_init(&p);
    int rc = fnp_pstats_read(&p, file, len, why, sizeof(why));
    if (rc) {
        CHECK(rc == -EINVAL);
        CHECK(memchr(why, '\0', sizeof(why)) && !strncmp(why, "offset ", 7) && !strchr(why, '\n'));
        CHECK(p.nfuncs == 0 && p.ntree == 0 && !p.tree && p.nmeta == 0);
    } else if (p.tree_kind != FNP_TREE_NONE || p.nmeta) {
        for (size_t i = 0; i < p.nmeta; i++)
            CHECK(*p.meta[i].key && strlen(p.meta[i].key) <= FNP_TREE_MAX_META_KEY &&
                  strlen(p.meta[i].value) <= FNP_TREE_MAX_META_VALUE);
        for (size_t i = 0; i < p.ntree; i++)
            CHECK(p.tree[i].func < p.nfuncs &&
                  (p.tree[i].parent == FNP_NO_PARENT || p.tree[i].parent < i) &&
                  p.tree[i].thread < p.nthreads);
        struct fnp_sink s;
        fnp_sink_memory(&s);
        CHECK(fnp_profile_write(&p, &s) == 0);
        struct fnp_profile q;
        fnp_profile_init(&q);
        CHECK(fnp_pstats_read(&q, s.buf, s.len, why, sizeof(why)) == 0);
        same_tree(&p, &q);
        fnp_profile_free(&q);
        fnp_sink_free(&s);
    }
    fnp_profile_free(&p);
    free(file);
    return 0;
}
/* SPDX-License-Identifier: MIT */
