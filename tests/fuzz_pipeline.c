/*
 * libFuzzer target for the whole pipeline the fnprof command runs on a file a user hands
 * over: any bytes -> a profile (fnp_pstats_read, as fnp_cli_load reads a pstats file with or
 * without its tree; a raw snapshot "FNPRAW1\n" first through fnp_raw_read and
 * fnp_profile_build and written, as fnprof symbolize does) -> every view (fnprof convert,
 * with a tree rebuilt from edges where the file has none) -> merged with itself (fnprof
 * merge) -> written with its tree -> read back -> diffed against the input (fnprof diff);
 * and compensated (report and convert --compensate), written, read back.
 *
 * Beyond "no crash, no leak, no undefined behaviour, no input taking seconds or GiB"
 * (ASan, UBSan, -timeout, -rss_limit_mb), it checks what each step promises: a refusal is
 * one line; whatever fnprof writes reads back, with the same numbers; X merged with X has
 * twice X's calls and times (saturating at 2^64 - 1 and the largest double) and the same
 * functions, edges and call paths; the diff of X and X + X pairs every function.
 *
 * The mutator sets the trailer header's lengths and checksums after most mutations
 * (fuzz_tree_fix), so that mutated trees get past the checksums to the tree's reader and
 * the views; an empty input becomes tests/raw_sample.h's snapshot.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "fuzz_check.h"
#include "fuzz_tree.h"
#include "profile.h"
#include "raw_sample.h"
#include "views.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned seed);

/* fnprof convert's bounds on a rebuilt tree are 1e-5 and 1e6 nodes; fewer here keep an
 * input's run short. */
#define REBUILD_MIN_SHARE 1e-5
#define REBUILD_MAX_NODES 20000

static uint64_t twice(uint64_t v)
{
    return v > UINT64_MAX / 2 ? UINT64_MAX : 2 * v;
}

static double twice_time(double t)
{
    double v = t + t;
    return isinf(v) ? DBL_MAX : v;
}

/* What the pstats writer makes of a time (pstats.c: finite and non-negative). */
static double written_time(double t)
{
    return isfinite(t) && t > 0 ? t : 0.0;
}

/* The writer replaces encoded surrogates (CPython writes them for undecodable file names)
 * by U+FFFD, so such keys do not come back byte for byte. */
static int has_surrogate(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)s[0] == 0xed && (unsigned char)s[1] >= 0xa0)
            return 1;
    return 0;
}

static int any_surrogate(const struct fnp_profile *p)
{
    for (size_t i = 0; i < p->nfuncs; i++)
        if (has_surrogate(p->funcs[i].key.file) || has_surrogate(p->funcs[i].key.name))
            return 1;
    return 0;
}

static int one_line_reason(const char *why, size_t len)
{
    return memchr(why, '\0', len) && !strncmp(why, "offset ", 7) && !strchr(why, '\n');
}

/* fnp_pstats_read into an empty p; a refusal must be -EINVAL with one line and leave p
 * empty. Returns the read's result. */
static int read_profile(struct fnp_profile *p, const void *bytes, size_t len)
{
    char why[512];
    memset(why, 'x', sizeof(why));
    fnp_profile_init(p);
    int rc = fnp_pstats_read(p, bytes, len, why, sizeof(why));
    if (rc) {
        CHECK(rc == -EINVAL || rc == -ENOMEM);
        CHECK(rc == -ENOMEM || one_line_reason(why, sizeof(why)));
        CHECK(p->nfuncs == 0 && p->ntree == 0 && !p->tree && p->nmeta == 0);
    }
    return rc;
}

/* fnprof symbolize without symbols: a raw snapshot that reads becomes a profile, written
 * into out. Returns 0 when out holds a file. */
static int from_raw(const uint8_t *data, size_t size, struct fnp_sink *out)
{
    struct fnp_raw_file f;
    char why[256];
    int rc = fnp_raw_read(&f, data, size, why, sizeof(why));
    CHECK(rc == 0 || rc == -EINVAL || rc == -ENOMEM);
    if (rc == -EINVAL)
        CHECK(memchr(why, '\0', sizeof(why)) && !strchr(why, '\n'));
    if (rc == 0 && f.raw.n == 0)
        rc = -ENOENT; /* symbolize writes nothing then */
    if (rc == 0) {
        struct fnp_profile p;
        fnp_profile_init(&p);
        rc = fnp_profile_build(&p, &f.raw, NULL);
        CHECK(rc == 0 || rc == -ENOMEM);
        if (rc == 0) {
            fnp_sink_memory(out);
            CHECK(fnp_profile_write(&p, out) == 0);
        }
        fnp_profile_free(&p);
    }
    fnp_raw_file_free(&f);
    return rc;
}

static void draw(const struct fnp_profile *p, int tree_views, int rebuilt)
{
    struct fnp_view_opts o = {.title = "fuzz.prof",
                              .node_threshold = 0.5,
                              .edge_threshold = 0.1,
                              .rebuilt = rebuilt,
                              .short_names = 1}; /* fnprof convert's default */
    for (const struct fnp_view *v = fnp_views; v->name; v++) {
        if (v->needs_tree != tree_views)
            continue;
        struct fnp_sink s;
        fnp_sink_memory(&s);
        int rc = v->write(p, &o, &s);
        if (rc)
            fprintf(stderr, "view %s: %d\n", v->name, rc);
        CHECK(rc == 0);
        fnp_sink_free(&s);
    }
}

/* fnprof convert --to every view: the tree's views on the file's tree, or on one rebuilt
 * from the edges of a second read of the file. */
static void every_view(const struct fnp_profile *p, const void *bytes, size_t len)
{
    draw(p, 0, 0);
    if (p->tree_kind != FNP_TREE_NONE) {
        draw(p, 1, 0);
        return;
    }
    struct fnp_profile q;
    CHECK(read_profile(&q, bytes, len) == 0);
    CHECK(fnp_tree_from_edges(&q, REBUILD_MIN_SHARE, REBUILD_MAX_NODES) == 0);
    draw(&q, 1, 1);
    fnp_profile_free(&q);
}

static void same_stats_written(const struct fnp_stats *a, const struct fnp_stats *b)
{
    CHECK(a->ncalls == b->ncalls && a->pcalls == b->pcalls);
    CHECK(written_time(a->tottime) == b->tottime && written_time(a->cumtime) == b->cumtime);
}

static void stats_doubled(const struct fnp_stats *x, const struct fnp_stats *sum)
{
    CHECK(sum->ncalls == twice(x->ncalls) && sum->pcalls == twice(x->pcalls));
    CHECK(sum->tottime == twice_time(x->tottime) && sum->cumtime == twice_time(x->cumtime));
}

/* a as written and read back into b: the same functions, edges, tree and metadata. */
static void same_profile(const struct fnp_profile *a, const struct fnp_profile *b, int keys)
{
    CHECK(a->nfuncs == b->nfuncs && a->nedges == b->nedges);
    for (size_t i = 0; i < a->nfuncs; i++) {
        const struct fnp_func *x = &a->funcs[i], *y = &b->funcs[i];
        CHECK(!keys || (!strcmp(x->key.file, y->key.file) && !strcmp(x->key.name, y->key.name)));
        CHECK(x->key.line == y->key.line);
        same_stats_written(&x->st, &y->st);
    }
    for (size_t i = 0; i < a->nedges; i++) {
        int64_t e = fnp_profile_find_edge(b, a->edges[i].caller, a->edges[i].callee);
        CHECK(e >= 0);
        same_stats_written(&a->edges[i].st, &b->edges[e].st);
    }
    CHECK(a->tree_kind == b->tree_kind && a->ntree == b->ntree && a->nthreads == b->nthreads);
    CHECK(a->tree_kind == FNP_TREE_NONE || a->tick_seconds == b->tick_seconds);
    CHECK(!a->mem == !b->mem);
    for (size_t i = 0; i < a->ntree; i++) {
        const struct fnp_tree_node *x = &a->tree[i], *y = &b->tree[i];
        CHECK(x->func == y->func && x->parent == y->parent && x->thread == y->thread &&
              x->ncalls == y->ncalls && x->ticks == y->ticks && x->back == y->back &&
              x->flags == y->flags);
        if (a->mem)
            CHECK(!memcmp(&a->mem[i], &b->mem[i], sizeof(a->mem[i])));
    }
    for (size_t i = 0; i < a->nthreads; i++)
        CHECK(!strcmp(a->threads[i], b->threads[i]));
    CHECK(a->nmeta == b->nmeta);
    for (size_t i = 0; i < a->nmeta; i++)
        CHECK(!strcmp(a->meta[i].key, b->meta[i].key) &&
              !strcmp(a->meta[i].value, b->meta[i].value));
}

/* fnprof diff x x+x: every function on both sides, with twice the calls after. */
static void diff_doubled(const struct fnp_profile *x, const struct fnp_profile *sum)
{
    struct fnp_diff d;
    CHECK(fnp_diff_build(&d, x, sum) == 0);
    CHECK(d.nrows == x->nfuncs && d.nboth == x->nfuncs && d.nnew == 0 && d.ngone == 0);
    struct fnp_diff_rule rule;
    char why[256];
    CHECK(fnp_diff_rule_parse(&rule, "cumtime>+10%,min=5ms", why, sizeof(why)) == 0);
    for (unsigned m = FNP_DIFF_NCALLS; m <= FNP_DIFF_NAME; m++) {
        fnp_diff_sort(&d, m);
        for (size_t i = 0; i < d.nrows; i++) {
            const struct fnp_diff_row *r = &d.rows[i];
            CHECK(r->ibase != FNP_DIFF_ABSENT && r->inew != FNP_DIFF_ABSENT);
            CHECK(r->after.ncalls == twice(r->before.ncalls));
            if (m != FNP_DIFF_NAME)
                CHECK(!isnan(fnp_diff_percent(r, m)) && !isnan(fnp_diff_change(r, m)));
            CHECK(fnp_diff_rule_breaks(&rule, r) <= 1);
        }
    }
    fnp_diff_free(&d);
}

/* fnprof merge -o out x x; then out read back and diffed against x. */
static void merge_with_itself(const struct fnp_profile *x, const void *bytes, size_t len)
{
    struct fnp_profile sum, again;
    CHECK(read_profile(&sum, bytes, len) == 0);
    CHECK(read_profile(&again, bytes, len) == 0);
    CHECK(fnp_profile_merge(&sum, &again) == 0);
    fnp_profile_free(&again);

    CHECK(sum.nfuncs == x->nfuncs && sum.nedges == x->nedges && sum.nmeta == x->nmeta);
    for (size_t i = 0; i < x->nfuncs; i++)
        stats_doubled(&x->funcs[i].st, &sum.funcs[i].st);
    for (size_t i = 0; i < x->nedges; i++)
        stats_doubled(&x->edges[i].st, &sum.edges[i].st);
    /* A tree merged with itself: every path pairs with itself, its calls doubled up to
     * 2^64 - 1 (a path's calls saturate as the functions' do). */
    CHECK(sum.tree_kind == x->tree_kind && sum.ntree == x->ntree);
    for (size_t i = 0; i < x->ntree; i++) {
        uint64_t n = x->tree[i].ncalls, twice = n > UINT64_MAX / 2 ? UINT64_MAX : 2 * n;
        CHECK(sum.tree[i].func == x->tree[i].func && sum.tree[i].parent == x->tree[i].parent &&
              sum.tree[i].ncalls == twice);
    }

    /* As fnprof merge does: the runs the sum holds, which widen the reader's check of the
     * tick against the dict (each run may round its ticks, tree_read.c). */
    const char *had = fnp_profile_meta(x, "merged");
    unsigned long long runs =
        had && *had && strspn(had, "0123456789") == strlen(had) && strlen(had) <= 7
            ? strtoull(had, NULL, 10)
            : 1;
    char count[24];
    snprintf(count, sizeof(count), "%llu", 2 * (runs ? runs : 1));
    if (fnp_profile_set_meta(&sum, "merged", count)) {
        fnp_profile_free(&sum);
        return; /* the metadata is full: fnprof merge refuses such a sum too */
    }

    struct fnp_sink out;
    fnp_sink_memory(&out);
    CHECK(fnp_profile_write(&sum, &out) == 0);
    struct fnp_profile back;
    CHECK(read_profile(&back, out.buf, out.len) == 0);
    int keys = !any_surrogate(&sum);
    same_profile(&sum, &back, keys);
    if (keys)
        diff_doubled(x, &back);
    fnp_profile_free(&back);
    fnp_sink_free(&out);
    fnp_profile_free(&sum);
}

/* fnprof report/convert --compensate on a copy of x: with the calibration its metadata
 * holds (untrusted text: taken or refused, never misread), else one the input's size
 * picks, so that the arithmetic runs on every tree the fuzzer makes. No time below 0,
 * never twice, and what is written reads back with the same numbers. */
static void compensated(const struct fnp_profile *x, size_t len)
{
    struct fnp_profile q;
    fnp_profile_init(&q);
    if (fnp_profile_merge(&q, x)) {
        fnp_profile_free(&q);
        return;
    }
    struct fnp_hook_cost ns;
    int got = fnp_calibration_get(&q, &ns);
    CHECK(got == 0 || got == -ENOENT || got == -EINVAL);
    if (got == 0)
        CHECK(ns.in >= 0 && ns.in <= FNP_HOOK_MAX_NS && ns.out >= 0 && ns.out <= FNP_HOOK_MAX_NS);
    if (got == -ENOENT && fnp_calibration_put(&q, (double)(len % 97) / 4, (double)(len % 89) / 4))
        got = -ENOMEM;
    struct fnp_compensated r;
    int rc = fnp_profile_compensate(&q, &r);
    CHECK(rc == 0 || rc == -EALREADY || rc == -ENOTSUP || rc == -EINVAL || rc == -ERANGE ||
          rc == -EDOM || rc == -ENOMEM);
    /* refused: nothing changed, and nothing says it was compensated */
    CHECK(rc != -EDOM || !fnp_profile_meta(&q, FNP_META_COMPENSATED));
    CHECK(rc != -EINVAL || got == -EINVAL);
    int huge = 0; /* what -ERANGE is for: a tick no clock has, ticks past 2^62 */
    for (size_t i = 0; i < q.ntree; i++)
        huge |= q.tree[i].ticks >= UINT64_C(1) << 62 ||
                (q.tree[i].back < 0 ? 0 - (uint64_t)q.tree[i].back : (uint64_t)q.tree[i].back) >=
                    UINT64_C(1) << 62;
    CHECK(rc != -ERANGE || q.tick_seconds < 1e-290 || huge);
    if (rc == 0) {
        CHECK(r.contexts == q.ntree && r.clamped <= r.contexts);
        for (size_t i = 0; i < q.nfuncs; i++)
            CHECK(q.funcs[i].st.tottime >= 0 && q.funcs[i].st.cumtime >= 0);
        for (size_t i = 0; i < q.nedges; i++)
            CHECK(q.edges[i].st.tottime >= 0 && q.edges[i].st.cumtime >= 0);
        /* every context's own time is 0 or more, or its ticks had to stop at 0 */
        int64_t *own = malloc((q.ntree ? q.ntree : 1) * sizeof(*own));
        CHECK(own != NULL);
        for (size_t i = 0; i < q.ntree; i++)
            own[i] = (int64_t)(q.tree[i].ticks - (uint64_t)q.tree[i].back);
        for (size_t i = 0; i < q.ntree; i++)
            if (q.tree[i].parent != FNP_NO_PARENT)
                own[q.tree[i].parent] =
                    (int64_t)((uint64_t)own[q.tree[i].parent] - q.tree[i].ticks);
        for (size_t i = 0; i < q.ntree; i++)
            CHECK(own[i] >= 0 || q.tree[i].ticks == 0 || q.tree[i].back);
        free(own);
        CHECK(fnp_profile_compensate(&q, NULL) == -EALREADY);
        /* what was compensated still holds to the reader's check: it reads back */
        char why[16];
        CHECK(fnp_tree_check_dict(&q, q.nfuncs, 0, why, sizeof(why)) == 0);
        struct fnp_sink out;
        fnp_sink_memory(&out);
        CHECK(fnp_profile_write(&q, &out) == 0);
        struct fnp_profile back;
        CHECK(read_profile(&back, out.buf, out.len) == 0);
        same_profile(&q, &back, !any_surrogate(&q));
        fnp_profile_free(&back);
        fnp_sink_free(&out);
    }
    fnp_profile_free(&q);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fnp_sink built = {.fd = -1};
    const void *bytes = data;
    size_t len = size;
    if (size >= 8 && !memcmp(data, FNP_RAW_MAGIC, 8)) {
        if (from_raw(data, size, &built))
            return 0;
        bytes = built.buf;
        len = built.len;
    }
    struct fnp_profile p;
    int rc = read_profile(&p, bytes, len);
    /* What fnprof wrote itself always reads. */
    CHECK(rc == 0 || bytes == data);
    if (rc == 0) {
        every_view(&p, bytes, len);
        merge_with_itself(&p, bytes, len);
        compensated(&p, len);
    }
    fnp_profile_free(&p);
    if (built.buf)
        fnp_sink_free(&built);
    return 0;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned seed)
{
    size_t seeded = raw_sample_seed(data, size, max_size);
    if (seeded)
        return seeded;
    size = LLVMFuzzerMutate(data, size, max_size);
    /* One mutation in eight keeps the header as it was: the checksums are fuzzed too. */
    if (seed % 8) {
        struct fnp_marshal_doc d;
        memset(&d, 0, sizeof(d));
        if (fnp_marshal_read(&d, data, size, NULL, 0) == 0) {
            fuzz_tree_fix(data, d.end, size);
            fnp_marshal_doc_free(&d);
        }
    }
    return size;
}
/* SPDX-License-Identifier: MIT */
