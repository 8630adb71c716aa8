/* SPDX-License-Identifier: MIT */
/*
 * A graphviz call graph in the manner of gprof2dot (jrfonseca/gprof2dot): a box per
 * function, "name", "file:line", "total% (self%)" and its calls; an arrow per caller
 * edge labelled with its share of the total and its exact call count. The total is the
 * profile's (gprof2dot's: the larger of the summed tottime and the largest cumtime), a
 * function's share its cumtime's, an edge's its pstats cumtime's. Colours follow
 * gprof2dot's default colormap, dark blue (cold) through green to red (hot) by share,
 * and arrows thicken with theirs. Functions under opts->node_threshold percent are left
 * out with their edges, edges under opts->edge_threshold likewise, and the graph's label
 * says how many. Drawn from the pstats functions and edges alone: the graph is one level
 * of callers deep by nature, so the tree adds nothing and CPython's files lose nothing.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "views.h"

/* dot cannot lex a quoted string past 16 KiB (gprof2dot truncates names likewise). */
#define MAX_NAME 4096

/*
 * str as the inside of a DOT quoted string that graphviz shows as is: '"' escaped for the
 * lexer, '\\' doubled so that escString sequences (\N, \l, \n) stay text, '&' as an
 * entity because graphviz decodes entities in labels, control characters and invalid
 * UTF-8 as U+FFFD, and at most max bytes of str, then an ellipsis.
 */
static void dot_text(struct fnp_sink *s, const char *str, size_t max)
{
    const unsigned char *p = (const unsigned char *)str, *start = p;
    while (*p) {
        if ((size_t)(p - start) >= max) {
            fnp_sink_puts(s, "\xe2\x80\xa6");
            return;
        }
        unsigned c = *p;
        if (c == '"') {
            fnp_sink_write(s, "\\\"", 2);
        } else if (c == '\\') {
            fnp_sink_write(s, "\\\\", 2);
        } else if (c == '&') {
            fnp_sink_write(s, "&amp;", 5);
        } else if (c < 0x20 || c == 0x7f) {
            fnp_sink_write(s, "\xef\xbf\xbd", 3);
        } else {
            p = fnp_utf8_copy(s, p);
            continue;
        }
        p++;
    }
}

/* gprof2dot's HSL to RGB (the CSS3 algorithm). */
static double hue_to_rgb(double m1, double m2, double h)
{
    if (h < 0)
        h += 1;
    else if (h > 1)
        h -= 1;
    if (h * 6 < 1)
        return m1 + (m2 - m1) * h * 6;
    if (h * 2 < 1)
        return m2;
    if (h * 3 < 2)
        return m1 + (m2 - m1) * (2.0 / 3.0 - h) * 6;
    return m1;
}

static int channel(double v)
{
    return v <= 0 ? 0 : v >= 1 ? 255 : (int)(255 * v + 0.5);
}

/* The colour of a share w in [0, 1]: gprof2dot's "color" theme interpolates linearly in
 * HSL from (2/3, 0.8, 0.25), a dark blue, to (0, 1, 0.5), a saturated red. */
static void put_color(struct fnp_sink *s, double w)
{
    w = w < 0 ? 0 : w > 1 ? 1 : w;
    double h = 2.0 / 3.0 * (1 - w), sat = 0.8 + 0.2 * w, l = 0.25 + 0.25 * w;
    double m2 = l <= 0.5 ? l * (sat + 1) : l + sat - l * sat, m1 = 2 * l - m2;
    fnp_sink_printf(s, "\"#%02x%02x%02x\"", channel(hue_to_rgb(m1, m2, h + 1.0 / 3.0)),
                    channel(hue_to_rgb(m1, m2, h)), channel(hue_to_rgb(m1, m2, h - 1.0 / 3.0)));
}

static double share(double v, double total)
{
    return total > 0 && v > 0 ? v / total : 0;
}

/* A total for the graph's label: seconds in the largest unit that keeps it >= 1. */
static void put_total(struct fnp_sink *s, double total, int calls)
{
    if (calls)
        fnp_sink_printf(s, "%.0f calls", total);
    else if (total >= 1)
        fnp_sink_printf(s, "%.3f s", total);
    else if (total >= 1e-3)
        fnp_sink_printf(s, "%.3f ms", total * 1e3);
    else if (total >= 1e-6)
        fnp_sink_printf(s, "%.3f \xc2\xb5s", total * 1e6);
    else
        fnp_sink_printf(s, "%.0f ns", total * 1e9);
}

int fnp_view_dot(const struct fnp_profile *p, const struct fnp_view_opts *o, struct fnp_sink *s)
{
    size_t nf = p->nfuncs, ne = p->nedges;
    double node_thr = o ? o->node_threshold : 0.5, edge_thr = o ? o->edge_threshold : 0.1;
    int calls = p->tree_kind == FNP_TREE_CALLS;
    unsigned char *keep = malloc(nf ? nf : 1);
    /* the file:line line below the name keeps keys apart */
    char **labels = o && o->short_names ? fnp_names_new(p) : NULL;
    if (!keep || (o && o->short_names && !labels)) {
        free(keep);
        fnp_labels_free(labels, nf);
        return s->err ? s->err : (s->err = -ENOMEM);
    }

    double total = 0, max_cum = 0;
    for (size_t f = 0; f < nf; f++) {
        const struct fnp_stats *st = &p->funcs[f].st;
        if (st->tottime > 0)
            total += st->tottime;
        if (st->cumtime > max_cum)
            max_cum = st->cumtime;
    }
    if (max_cum > total)
        total = max_cum;
    size_t pruned_nodes = 0, pruned_edges = 0;
    for (size_t f = 0; f < nf; f++) {
        keep[f] = 100 * share(p->funcs[f].st.cumtime, total) >= node_thr;
        pruned_nodes += !keep[f];
    }
    for (size_t e = 0; e < ne; e++) {
        const struct fnp_edge *ed = &p->edges[e];
        if (keep[ed->caller] && keep[ed->callee] && 100 * share(ed->st.cumtime, total) < edge_thr)
            pruned_edges++;
    }

    fnp_sink_puts(s, "digraph \"fnprof\" {\n\tgraph [fontname=\"Arial\", nodesep=0.125, "
                     "ranksep=0.25, tooltip=\" \", label=\"");
    if (o && o->title) {
        dot_text(s, o->title, MAX_NAME);
        fnp_sink_puts(s, "\\n");
    }
    fnp_sink_puts(s, "Total: ");
    put_total(s, total, calls);
    if (pruned_nodes || pruned_edges)
        fnp_sink_puts(s, "\\nnot shown: ");
    if (pruned_nodes)
        fnp_sink_printf(s, "%zu of %zu functions under %g%% of the total", pruned_nodes, nf,
                        node_thr);
    if (pruned_edges)
        fnp_sink_printf(s, "%s%zu edges under %g%%", pruned_nodes ? ", " : "", pruned_edges,
                        edge_thr);
    fnp_sink_puts(s, "\"];\n\tnode [fontname=\"Arial\", fontsize=10, shape=box, style=filled, "
                     "fontcolor=\"#ffffff\", width=0, height=0];\n"
                     "\tedge [fontname=\"Arial\", fontsize=10];\n");

    for (size_t f = 0; f < nf && !s->err; f++) {
        if (!keep[f])
            continue;
        const struct fnp_func *fn = &p->funcs[f];
        double w = share(fn->st.cumtime, total);
        fnp_sink_printf(s, "\tf%zu [label=\"", f);
        /* "???" for what is unknown, as valgrind's tools write it */
        const char *name = labels ? labels[f] : fn->key.name;
        dot_text(s, *name ? name : "???", MAX_NAME);
        /* cProfile's built-ins and fnprof's <process> sit in file "~" at line 0 */
        if (strcmp(fn->key.file, "~") || fn->key.line) {
            fnp_sink_puts(s, "\\n");
            dot_text(s, *fn->key.file ? fnp_base_name(fn->key.file) : "???", MAX_NAME);
            fnp_sink_printf(s, ":%u", fn->key.line);
        }
        fnp_sink_printf(s, "\\n%.2f%% (%.2f%%)\\n%llu\xc3\x97\", tooltip=\"", 100 * w,
                        100 * share(fn->st.tottime, total), (unsigned long long)fn->st.ncalls);
        dot_text(s, fn->key.file, MAX_NAME);
        fnp_sink_puts(s, "\", color=");
        put_color(s, w);
        fnp_sink_puts(s, "];\n");
    }
    for (size_t e = 0; e < ne && !s->err; e++) {
        const struct fnp_edge *ed = &p->edges[e];
        double w = share(ed->st.cumtime, total);
        if (!keep[ed->caller] || !keep[ed->callee] || 100 * w < edge_thr)
            continue;
        double pen = w * 4 > 0.5 ? w * 4 : 0.5;
        fnp_sink_printf(s, "\tf%u -> f%u [label=\"%.2f%%\\n%llu\xc3\x97\", color=", ed->caller,
                        ed->callee, 100 * w, (unsigned long long)ed->st.ncalls);
        put_color(s, w);
        fnp_sink_puts(s, ", fontcolor=");
        put_color(s, w);
        fnp_sink_printf(s, ", penwidth=%.2f, arrowsize=%.2f];\n", pen, 0.5 * sqrt(pen));
    }
    fnp_sink_puts(s, "}\n");
    free(keep);
    fnp_labels_free(labels, nf);
    return s->err;
}
