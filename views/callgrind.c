/* SPDX-License-Identifier: MIT */
/*
 * The callgrind profile format (valgrind.org/docs/manual/cl-format.html), read by
 * KCachegrind, QCachegrind and callgrind_annotate: per function its self cost, then per
 * callee the calls made and their inclusive cost. Written from the pstats functions and
 * caller edges, which are exact, so a profile without a tree (CPython's) loses nothing.
 *
 * One event: Time_ns (tottime and cumtime in integer nanoseconds), or Calls for a
 * count-only profile, whose pstats times are calls. Threads come merged into one part,
 * as the pstats dict merges them. An edge's inclusive cost is its pstats cumtime, which
 * counts only the calls no activation of the same edge encloses (cProfile's rule, and
 * pyprof2calltree's output): for a function on a cycle, the sum over its callers that
 * KCachegrind and callgrind_annotate show as its inclusive cost is then not its cumtime.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "views.h"

/* v units of 1/scale, rounded to an integer; clock noise below 0 and NaN count as 0. */
static uint64_t cost(double v, double scale)
{
    double x = v * scale + 0.5;
    if (!(x >= 1))
        return 0;
    if (x >= 18446744073709551615.0)
        return UINT64_MAX;
    return (uint64_t)x;
}

/* Names and files run to the end of their line; a callgrind reader takes "(digits)"
 * first as a compressed name, and an empty one as a reference, so every name is written
 * compressed and an empty one as valgrind's "???". */
static void put_name(struct fnp_sink *s, const char *spec, uint32_t id, const char *name,
                     unsigned char *seen)
{
    fnp_sink_printf(s, "%s=(%u)", spec, id + 1);
    if (seen[id]) {
        fnp_sink_write(s, "\n", 1);
        return;
    }
    seen[id] = 1;
    fnp_sink_write(s, " ", 1);
    if (!*name)
        name = "???";
    for (const char *c = name; *c;) {
        size_t n = strcspn(c, "\n\r");
        fnp_sink_write(s, c, n);
        c += n;
        if (*c) {
            fnp_sink_write(s, "?", 1);
            c++;
        }
    }
    fnp_sink_write(s, "\n", 1);
}

static int by_file(const void *a, const void *b, void *funcs_)
{
    const struct fnp_func *f = funcs_;
    return strcmp(f[*(const uint32_t *)a].key.file, f[*(const uint32_t *)b].key.file);
}

/* file_id[i]: a number per distinct file name, so that each is written once. */
static void number_files(const struct fnp_profile *p, uint32_t *order, uint32_t *file_id)
{
    size_t n = p->nfuncs;
    for (size_t i = 0; i < n; i++)
        order[i] = (uint32_t)i;
    qsort_r(order, n, sizeof(*order), by_file, p->funcs);
    uint32_t id = 0;
    for (size_t i = 0; i < n; i++) {
        if (i && strcmp(p->funcs[order[i - 1]].key.file, p->funcs[order[i]].key.file))
            id++;
        file_id[order[i]] = id;
    }
}

int fnp_view_callgrind(const struct fnp_profile *p, const struct fnp_view_opts *o,
                       struct fnp_sink *s)
{
    size_t nf = p->nfuncs, ne = p->nedges;
    int calls = p->tree_kind == FNP_TREE_CALLS;
    double scale = calls ? 1 : 1e9;
    char **labels = fnp_labels_new(p, o->short_names);
    uint32_t *file_id = malloc((nf ? nf : 1) * sizeof(*file_id));
    uint32_t *order = malloc((nf ? nf : 1) * sizeof(*order));
    size_t *first = calloc(nf + 1, sizeof(*first)); /* the caller's edges in by_caller */
    uint32_t *by_caller = malloc((ne ? ne : 1) * sizeof(*by_caller));
    unsigned char *file_seen = calloc(nf ? nf : 1, 1);
    unsigned char *fn_seen = calloc(nf ? nf : 1, 1);
    if (!labels || !file_id || !order || !first || !by_caller || !file_seen || !fn_seen) {
        if (!s->err)
            s->err = -ENOMEM;
        goto out;
    }
    number_files(p, order, file_id);
    /* Edges grouped by caller (a counting sort: stable, linear). */
    for (size_t e = 0; e < ne; e++)
        first[p->edges[e].caller + 1]++;
    for (size_t f = 0; f < nf; f++)
        first[f + 1] += first[f];
    for (size_t e = 0; e < ne; e++)
        by_caller[first[p->edges[e].caller]++] = (uint32_t)e;
    for (size_t f = nf; f > 0; f--)
        first[f] = first[f - 1];
    first[0] = 0;

    uint64_t total = 0;
    for (size_t f = 0; f < nf; f++) {
        uint64_t c = cost(p->funcs[f].st.tottime, scale);
        total = c > UINT64_MAX - total ? UINT64_MAX : total + c;
    }
    fnp_sink_puts(s, "# callgrind format\nversion: 1\ncreator: fnprof\n");
    if (o && o->title) {
        fnp_sink_puts(s, "cmd: ");
        for (const char *c = o->title; *c; c++)
            fnp_sink_write(s, *c == '\n' || *c == '\r' ? "?" : c, 1);
        fnp_sink_write(s, "\n", 1);
    }
    if (p->nthreads > 1)
        fnp_sink_printf(s, "desc: Threads: %zu, merged into one profile as in the pstats dict\n",
                        p->nthreads);
    fnp_sink_puts(s, "positions: line\n");
    if (calls)
        fnp_sink_puts(s, "event: Calls : Calls (a count-only profile)\nevents: Calls\n");
    else
        fnp_sink_puts(s, "event: Time_ns : Time (ns)\nevents: Time_ns\n");
    fnp_sink_printf(s, "summary: %llu\n", (unsigned long long)total);

    for (size_t f = 0; f < nf && !s->err; f++) {
        const struct fnp_func *fn = &p->funcs[f];
        fnp_sink_write(s, "\n", 1);
        put_name(s, "fl", file_id[f], fn->key.file, file_seen);
        put_name(s, "fn", (uint32_t)f, labels[f], fn_seen);
        fnp_sink_printf(s, "%u %llu\n", fn->key.line,
                        (unsigned long long)cost(fn->st.tottime, scale));
        for (size_t i = first[f]; i < first[f + 1]; i++) {
            const struct fnp_edge *e = &p->edges[by_caller[i]];
            /* calls=0 would make a reader take the inclusive cost for self cost */
            if (!e->st.ncalls)
                continue;
            const struct fnp_func *callee = &p->funcs[e->callee];
            put_name(s, "cfl", file_id[e->callee], callee->key.file, file_seen);
            put_name(s, "cfn", e->callee, labels[e->callee], fn_seen);
            fnp_sink_printf(s, "calls=%llu %u\n%u %llu\n", (unsigned long long)e->st.ncalls,
                            callee->key.line, fn->key.line,
                            (unsigned long long)cost(e->st.cumtime, scale));
        }
    }
out:
    fnp_labels_free(labels, nf);
    free(file_id);
    free(order);
    free(first);
    free(by_caller);
    free(file_seen);
    free(fn_seen);
    return s->err;
}
