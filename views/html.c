/* SPDX-License-Identifier: MIT */
/*
 * html: one self-contained HTML file, a report to open from a CI artifact or a copied file:
 * the run's metadata in its header, the pstats table (sortable, filterable), an icicle
 * chart of the calling-context tree (one root per thread under "all" when there are
 * several; click a frame to zoom) and the selected function's callers and callees with
 * cProfile's edge numbers. No server and no network: the page's style and script
 * (views/html/, embedded at build time) and the profile, as one JSON object, are all
 * inline, and the page's content security policy forbids loading anything else.
 *
 * The JSON is columnar, one array of numbers per field rather than an object per node, so
 * that a tree of 500k nodes stays a few MB and parses in tens of milliseconds; the script
 * draws only the frames and table rows that can be seen. The tree keeps the profile's
 * integer ticks and only inclusive ones: the script takes a node's own value as its ticks
 * less its children's, exact, and converts once.
 *
 *   {"title": "...", "unit": "ns" | "calls", "tick": ns (or calls) per tick,
 *    "rebuilt": 0 | 1, "threads": ["thread 1", ...],
 *    "meta": [["program", "/usr/bin/app"], ...],   (the run's metadata, in order)
 *    "files": ["a.c", ...],
 *    "funcs": {"file": [index into files], "line": [], "name": [], "nc": [], "pc": [],
 *              "tt": [], "ct": []},                 (pstats numbers; tt, ct in seconds)
 *    "labels": [[func, "name [file:line]"], ...],    (where the name alone is ambiguous)
 *    "short": [[func, "name"], ...],                 (--short-names: the table's names,
 *                                                      where not the key's)
 *    "edges": [caller, callee, nc, pc, tt, ct, ...], (six numbers per caller->callee edge)
 *    "tree": {"func": [], "up": [],                  (up: 0 for a root, else i - parent)
 *             "thread": [],                          (one per root, in the roots' order)
 *             "calls": [], "incl": []},              (per node; incl in ticks)
 *    "nowait": {"waits": [func, ...],                (only when the run recorded waits:
 *               "seconds": s, "calls": n,             library calls that block, see
 *               "tt": [], "ct": [], "edges": [tt, ct, ...], "incl": []}}
 *                                                     profile/waits.c; the same numbers
 *                                                     with their time taken out)
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "html_assets.h"
#include "views.h"

/* Numbers go through a local buffer: a large tree is millions of numbers, and one sink
 * call each would cost more than formatting them. */
struct out {
    struct fnp_sink *s;
    size_t len;
    char buf[16384];
};

static void out_flush(struct out *o)
{
    fnp_sink_write(o->s, o->buf, o->len);
    o->len = 0;
}

static void out_room(struct out *o, size_t n)
{
    if (o->len + n > sizeof(o->buf))
        out_flush(o);
}

static void out_puts(struct out *o, const char *str)
{
    out_flush(o);
    fnp_sink_puts(o->s, str);
}

static void out_u64(struct out *o, uint64_t v, char sep)
{
    char tmp[24];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    out_room(o, n + 1);
    if (sep)
        o->buf[o->len++] = sep;
    while (n)
        o->buf[o->len++] = tmp[--n];
}

/* Seconds as pstats holds them, to 12 significant digits: a day's total keeps tenths of a
 * microsecond, far finer than the table's decimals. JSON has no NaN or infinity: such a
 * time (which pstats_read refuses anyway) writes 0. */
static void out_double(struct out *o, double v, char sep)
{
    out_room(o, 32);
    if (sep)
        o->buf[o->len++] = sep;
    int n = snprintf(o->buf + o->len, 31, "%.12g", isfinite(v) ? v : 0.0);
    o->len += n > 0 && n < 31 ? (size_t)n : 0;
}

static void out_json(struct out *o, const char *str, char sep)
{
    out_room(o, 1);
    if (sep)
        o->buf[o->len++] = sep;
    out_flush(o);
    fnp_json_string(o->s, str);
}

static int by_file(const void *a, const void *b, void *funcs_)
{
    const struct fnp_func *f = funcs_;
    return strcmp(f[*(const uint32_t *)a].key.file, f[*(const uint32_t *)b].key.file);
}

/* The distinct file names of p's functions, each written once: files[i] of the JSON, and
 * into file_of[f] the index of function f's file. Returns 0 or -ENOMEM. */
static int write_files(struct out *o, const struct fnp_profile *p, uint32_t *file_of)
{
    size_t n = p->nfuncs;
    uint32_t *order = malloc((n ? n : 1) * sizeof(*order));
    if (!order)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++)
        order[i] = (uint32_t)i;
    qsort_r(order, n, sizeof(*order), by_file, p->funcs);
    out_puts(o, "\"files\":[");
    uint32_t nfiles = 0;
    for (size_t i = 0; i < n; i++) {
        const char *file = p->funcs[order[i]].key.file;
        if (!i || strcmp(file, p->funcs[order[i - 1]].key.file))
            out_json(o, file, nfiles++ ? ',' : 0);
        file_of[order[i]] = nfiles - 1;
    }
    out_puts(o, "],\n");
    free(order);
    return 0;
}

static void write_pairs(struct out *o, const struct fnp_profile *p, char **strs)
{
    char sep = 0;
    for (size_t i = 0; i < p->nfuncs; i++) {
        if (!strcmp(strs[i], p->funcs[i].key.name))
            continue;
        out_room(o, 2);
        if (sep)
            o->buf[o->len++] = sep;
        o->buf[o->len++] = '[';
        out_u64(o, i, 0);
        out_json(o, strs[i], ',');
        out_puts(o, "]");
        sep = ',';
    }
}

static void write_funcs(struct out *o, const struct fnp_profile *p, const uint32_t *file_of,
                        char **labels, char **names)
{
    const struct fnp_func *f = p->funcs;
    size_t n = p->nfuncs;
    out_puts(o, "\"funcs\":{\"file\":[");
    for (size_t i = 0; i < n; i++)
        out_u64(o, file_of[i], i ? ',' : 0);
    out_puts(o, "],\n\"line\":[");
    for (size_t i = 0; i < n; i++)
        out_u64(o, f[i].key.line, i ? ',' : 0);
    out_puts(o, "],\n\"name\":[");
    for (size_t i = 0; i < n; i++)
        out_json(o, f[i].key.name, i ? ',' : 0);
    out_puts(o, "],\n\"nc\":[");
    for (size_t i = 0; i < n; i++)
        out_u64(o, f[i].st.ncalls, i ? ',' : 0);
    out_puts(o, "],\n\"pc\":[");
    for (size_t i = 0; i < n; i++)
        out_u64(o, f[i].st.pcalls, i ? ',' : 0);
    out_puts(o, "],\n\"tt\":[");
    for (size_t i = 0; i < n; i++)
        out_double(o, f[i].st.tottime, i ? ',' : 0);
    out_puts(o, "],\n\"ct\":[");
    for (size_t i = 0; i < n; i++)
        out_double(o, f[i].st.cumtime, i ? ',' : 0);
    out_puts(o, "]},\n\"labels\":[");
    write_pairs(o, p, labels);
    out_puts(o, "],\n");
    if (names) {
        out_puts(o, "\"short\":[");
        write_pairs(o, p, names);
        out_puts(o, "],\n");
    }
}

static void write_edges(struct out *o, const struct fnp_profile *p)
{
    out_puts(o, "\"edges\":[");
    for (size_t i = 0; i < p->nedges; i++) {
        const struct fnp_edge *e = &p->edges[i];
        out_u64(o, e->caller, i ? ',' : 0);
        out_u64(o, e->callee, ',');
        out_u64(o, e->st.ncalls, ',');
        out_u64(o, e->st.pcalls, ',');
        out_double(o, e->st.tottime, ',');
        out_double(o, e->st.cumtime, ',');
    }
    out_puts(o, "],\n");
}

/* The tree, column by column; incl as fnp_tree_values gives it, so that the chart's
 * children always fit in their parent. Pre-order is the file's: a node's parent comes
 * before it, which "up" relies on. */
static void write_tree(struct out *o, const struct fnp_profile *p, const uint64_t *incl)
{
    const struct fnp_tree_node *t = p->tree;
    size_t n = p->ntree;
    out_puts(o, "\"tree\":{\"func\":[");
    for (size_t i = 0; i < n; i++)
        out_u64(o, t[i].func, i ? ',' : 0);
    out_puts(o, "],\n\"up\":[");
    for (size_t i = 0; i < n; i++)
        out_u64(o, t[i].parent == FNP_NO_PARENT ? 0 : i - t[i].parent, i ? ',' : 0);
    out_puts(o, "],\n\"thread\":[");
    char sep = 0;
    for (size_t i = 0; i < n; i++)
        if (t[i].parent == FNP_NO_PARENT) {
            /* A thread index the names do not cover would hang off no thread node. */
            out_u64(o, t[i].thread < p->nthreads ? t[i].thread : 0, sep);
            sep = ',';
        }
    out_puts(o, "],\n\"calls\":[");
    for (size_t i = 0; i < n; i++)
        out_u64(o, t[i].ncalls, i ? ',' : 0);
    out_puts(o, "],\n\"incl\":[");
    for (size_t i = 0; i < n; i++)
        out_u64(o, incl[i], i ? ',' : 0);
    out_puts(o, "]}");
}

/*
 * The page's "without waits" switch: when the run recorded library calls that wait
 * (PROF_LIBCALLS; profile/waits.c), every number again with their time taken out, in the
 * same order (functions, edges, tree nodes). Nothing when there is none, or no timed tree.
 * self and incl: fnp_view_html's scratch (p->ntree each), free once write_tree is done.
 * Returns 0 or -ENOMEM.
 */
static int write_nowait(struct out *o, const struct fnp_profile *p, uint64_t *self, uint64_t *incl)
{
    size_t nwaits = 0;
    for (size_t f = 0; f < p->nfuncs; f++)
        nwaits += fnp_key_is_wait(&p->funcs[f].key) != 0;
    if (!nwaits || p->tree_kind != FNP_TREE_TIME)
        return 0;
    struct fnp_profile q;
    struct fnp_waits w;
    int rc = fnp_profile_without_waits(p, &q, &w);
    if (rc)
        return rc == -EINVAL ? 0 : rc;
    size_t n = p->ntree;
    int same = q.ntree == n && q.nfuncs == p->nfuncs;
    for (size_t i = 0; same && i < n; i++)
        same = q.tree[i].func == p->tree[i].func && q.tree[i].parent == p->tree[i].parent;
    if (!same)
        goto out;
    fnp_tree_values(&q, self, incl);
    out_puts(o, ",\n\"nowait\":{\"waits\":[");
    char sep = 0;
    for (size_t f = 0; f < p->nfuncs; f++)
        if (fnp_key_is_wait(&p->funcs[f].key)) {
            out_u64(o, f, sep);
            sep = ',';
        }
    out_puts(o, "],\"seconds\":");
    out_double(o, (double)w.ticks * p->tick_seconds, 0);
    out_puts(o, ",\"calls\":");
    out_u64(o, w.calls, 0);
    out_puts(o, ",\n\"tt\":[");
    for (size_t f = 0; f < q.nfuncs; f++)
        out_double(o, q.funcs[f].st.tottime, f ? ',' : 0);
    out_puts(o, "],\n\"ct\":[");
    for (size_t f = 0; f < q.nfuncs; f++)
        out_double(o, q.funcs[f].st.cumtime, f ? ',' : 0);
    out_puts(o, "],\n\"edges\":[");
    for (size_t i = 0; i < p->nedges; i++) {
        int64_t e = fnp_profile_find_edge(&q, p->edges[i].caller, p->edges[i].callee);
        const struct fnp_stats *st = e >= 0 ? &q.edges[e].st : &p->edges[i].st;
        out_double(o, st->tottime, i ? ',' : 0);
        out_double(o, st->cumtime, ',');
    }
    out_puts(o, "],\n\"incl\":[");
    for (size_t i = 0; i < n; i++)
        out_u64(o, incl[i], i ? ',' : 0);
    out_puts(o, "]}");
out:
    fnp_profile_free(&q);
    return rc;
}

int fnp_view_html(const struct fnp_profile *p, const struct fnp_view_opts *opts, struct fnp_sink *s)
{
    const char *title = opts && opts->title ? opts->title : "profile";
    size_t n = p->ntree;
    struct out *o = malloc(sizeof(*o));
    char **labels = fnp_labels_new(p, opts && opts->short_names);
    /* the table shows file:line beside the name: fnp_names_new's names */
    char **names = opts && opts->short_names ? fnp_names_new(p) : NULL;
    uint32_t *file_of = malloc((p->nfuncs ? p->nfuncs : 1) * sizeof(*file_of));
    uint64_t *self = malloc((n ? n : 1) * sizeof(*self)); /* fnp_tree_values' scratch */
    uint64_t *incl = malloc((n ? n : 1) * sizeof(*incl));
    if (!o || !labels || (opts && opts->short_names && !names) || !file_of || !self || !incl) {
        if (!s->err)
            s->err = -ENOMEM;
        goto out;
    }
    o->s = s;
    o->len = 0;
    fnp_tree_values(p, self, incl);

    fnp_sink_puts(s, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                     "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                     "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src "
                     "'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n"
                     "<meta name=\"generator\" content=\"fnprof\">\n<title>");
    fnp_xml_text(s, title);
    fnp_sink_puts(s, " &#183; fnprof</title>\n<style>\n");
    fnp_sink_write(s, fnp_html_css, sizeof(fnp_html_css) - 1);
    fnp_sink_puts(s, "</style>\n</head>\n<body>\n<noscript>This fnprof report draws its "
                     "table and call tree with JavaScript: enable it for this file.</noscript>\n"
                     "<script type=\"application/json\" id=\"fnprof-data\">\n{\"title\":");
    /* fnp_json_string escapes < > &: no name can end the script element early. */
    fnp_json_string(s, title);
    double tick = p->tree_kind == FNP_TREE_CALLS ? 1 : p->tick_seconds * 1e9;
    fnp_sink_printf(s, ",\"unit\":\"%s\",\"tick\":%.17g,\"rebuilt\":%d,\n\"threads\":[",
                    fnp_tree_unit(p), isfinite(tick) && tick > 0 ? tick : 1,
                    opts && opts->rebuilt ? 1 : 0);
    for (size_t i = 0; i < p->nthreads; i++) {
        if (i)
            fnp_sink_puts(s, ",");
        fnp_json_string(s, p->threads[i]);
    }
    /* Keys and values are the program's strings: JSON-escaped here (no "</script>"), set
     * as text, never markup, by the script. */
    fnp_sink_puts(s, "],\n\"meta\":[");
    for (size_t i = 0; i < p->nmeta; i++) {
        fnp_sink_puts(s, i ? ",[" : "[");
        fnp_json_string(s, p->meta[i].key);
        fnp_sink_puts(s, ",");
        fnp_json_string(s, p->meta[i].value);
        fnp_sink_puts(s, "]");
    }
    fnp_sink_puts(s, "],\n");
    int err = write_files(o, p, file_of);
    if (err) {
        if (!s->err)
            s->err = err;
        goto out;
    }
    write_funcs(o, p, file_of, labels, names);
    write_edges(o, p);
    write_tree(o, p, incl);
    if ((err = write_nowait(o, p, self, incl)) != 0) {
        if (!s->err)
            s->err = err;
        goto out;
    }
    out_flush(o);
    fnp_sink_puts(s, "}\n</script>\n<script>\n");
    fnp_sink_write(s, fnp_html_js, sizeof(fnp_html_js) - 1);
    fnp_sink_puts(s, "</script>\n</body>\n</html>\n");
out:
    free(o);
    fnp_labels_free(labels, p->nfuncs);
    fnp_labels_free(names, p->nfuncs);
    free(file_of);
    free(self);
    free(incl);
    return s->err;
}
