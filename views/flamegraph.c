/* SPDX-License-Identifier: MIT */
/*
 * A flame graph drawn by fnprof itself: one self-contained SVG (inline style and script,
 * no outside resource), after flamegraph.pl's conventions. Each calling context is a
 * frame as wide as its inclusive value (fnp_tree_values' incl, in which the children
 * always fit), stacked on its caller's frame; siblings left to right by name, as
 * flamegraph.pl sorts them, so that the x-axis is not time. An "all" frame spans the
 * whole and, with more than one thread, carries one frame per thread. Colours are warm
 * hues hashed from the name, so a function keeps its colour in every graph.
 *
 * Every context gets a frame, however narrow: a frame says which node it is
 * (data-node, the tree's pre-order index; the synthetic frames say data-synthetic), and
 * its <title> (the hover text) gives name, file:line, calls, and self and total values
 * with their share of the whole. Frames come in pre-order, so the script can find a
 * frame's subtree and ancestors without more attributes: click zooms, "Reset Zoom" or
 * Escape undoes it, Ctrl-F or "Search" highlights a regular expression's matches and
 * gives their share.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "views.h"

#define IMAGE_W 1200
#define XPAD 10
#define FULL_W (IMAGE_W - 2 * XPAD)
#define FRAME_H 16
#define FONT 12
#define CHAR_W (FONT * 0.59) /* flamegraph.pl's guess at a Verdana character's width */
#define TOP (FONT * 4)       /* title, subtitle and buttons */
#define BOTTOM (FONT * 2 + 10)

struct layout {
    const struct fnp_profile *p;
    char **labels;
    uint64_t *self, *incl; /* in the tree's ticks */
    uint64_t *start;       /* ticks left of a node's frame, from the left edge */
    uint32_t *depth;       /* row, 0 for "all" */
    uint32_t *rank;        /* a function's place among the labels sorted */
    uint64_t *thread_start, *thread_total;
    uint64_t total; /* fnp_tree_ns of the whole */
    double scale;   /* pixels per tick */
    uint32_t rows;
    uint64_t height;   /* pixels: a deep tree makes a tall graph */
    char *text;        /* a label cut to fit */
    char (*fills)[24]; /* each function's colour */
};

/* flamegraph.pl's "hot" palette: red to yellow, a little blue; fixed by the name. */
static void hot(char *buf, size_t len, const char *name)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (const unsigned char *c = (const unsigned char *)name; *c; c++)
        h = (h ^ *c) * 16777619u;
    double v1 = (h & 0xff) / 255.0, v2 = ((h >> 8) & 0xff) / 255.0, v3 = ((h >> 16) & 0xff) / 255.0;
    snprintf(buf, len, "rgb(%d,%d,%d)", 205 + (int)(50 * v3), (int)(230 * v1), (int)(55 * v2));
}

static int by_label(const void *a, const void *b, void *labels_)
{
    char **labels = labels_;
    return strcmp(labels[*(const uint32_t *)a], labels[*(const uint32_t *)b]);
}

/* Siblings (a parent's children, or a thread's roots) next to each other, by label. */
static int by_place(const void *a, const void *b, void *l_)
{
    const struct layout *l = l_;
    const struct fnp_tree_node *x = &l->p->tree[*(const uint32_t *)a];
    const struct fnp_tree_node *y = &l->p->tree[*(const uint32_t *)b];
    int xr = x->parent == FNP_NO_PARENT, yr = y->parent == FNP_NO_PARENT;
    if (xr != yr)
        return yr - xr; /* roots first: their offsets come from the threads */
    uint32_t xp = xr ? x->thread : x->parent, yp = yr ? y->thread : y->parent;
    if (xp != yp)
        return xp < yp ? -1 : 1;
    if (l->rank[x->func] != l->rank[y->func])
        return l->rank[x->func] < l->rank[y->func] ? -1 : 1;
    return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static void layout_free(struct layout *l)
{
    fnp_labels_free(l->labels, l->p->nfuncs);
    free(l->self);
    free(l->incl);
    free(l->start);
    free(l->depth);
    free(l->rank);
    free(l->thread_start);
    free(l->thread_total);
    free(l->text);
    free(l->fills);
}

static int layout_new(struct layout *l, const struct fnp_profile *p, int short_names)
{
    size_t n = p->ntree, nt = p->nthreads, nf = p->nfuncs;
    *l = (struct layout){.p = p};
    l->labels = fnp_labels_new(p, short_names);
    l->self = malloc((n ? n : 1) * sizeof(*l->self));
    l->incl = malloc((n ? n : 1) * sizeof(*l->incl));
    l->start = malloc((n ? n : 1) * sizeof(*l->start));
    l->depth = malloc((n ? n : 1) * sizeof(*l->depth));
    l->rank = malloc((nf ? nf : 1) * sizeof(*l->rank));
    l->thread_start = calloc(nt ? nt : 1, sizeof(*l->thread_start));
    l->thread_total = calloc(nt ? nt : 1, sizeof(*l->thread_total));
    /* fit() cuts every frame's text into l->text: function labels, thread names, "all". */
    size_t longest = 3;
    for (size_t f = 0; l->labels && f < nf; f++)
        if (strlen(l->labels[f]) > longest)
            longest = strlen(l->labels[f]);
    for (size_t t = 0; t < nt; t++)
        if (strlen(p->threads[t]) > longest)
            longest = strlen(p->threads[t]);
    l->text = malloc(longest + 3);
    l->fills = malloc((nf ? nf : 1) * sizeof(*l->fills));
    if (!l->labels || !l->self || !l->incl || !l->start || !l->depth || !l->rank ||
        !l->thread_start || !l->thread_total || !l->text || !l->fills)
        return -ENOMEM;
    fnp_tree_values(p, l->self, l->incl);
    for (size_t f = 0; f < nf; f++)
        hot(l->fills[f], sizeof(l->fills[f]), l->labels[f]);

    uint32_t *order = malloc((nf ? nf : 1) * sizeof(*order));
    if (!order)
        return -ENOMEM;
    for (size_t f = 0; f < nf; f++)
        order[f] = (uint32_t)f;
    qsort_r(order, nf, sizeof(*order), by_label, l->labels);
    for (size_t f = 0; f < nf; f++)
        l->rank[order[f]] = (uint32_t)f;
    free(order);

    /* Offsets: a thread's roots from the thread's start, a node's children from the
     * node's start, each sibling after those whose labels sort before it. Sorting by
     * parent index places every parent before its children's group. */
    uint32_t threads = nt > 1, base = 1 + threads;
    l->rows = base;
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++) {
        const struct fnp_tree_node *nd = &p->tree[i];
        if (nd->parent == FNP_NO_PARENT) {
            if (nd->thread < nt)
                l->thread_total[nd->thread] += l->incl[i];
            sum += l->incl[i];
            l->depth[i] = base;
        } else {
            l->depth[i] = l->depth[nd->parent] + 1;
        }
        if (l->depth[i] + 1 > l->rows)
            l->rows = l->depth[i] + 1;
    }
    for (size_t t = 1; t < nt; t++)
        l->thread_start[t] = l->thread_start[t - 1] + l->thread_total[t - 1];
    uint32_t *nodes = malloc((n ? n : 1) * sizeof(*nodes));
    if (!nodes)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++)
        nodes[i] = (uint32_t)i;
    qsort_r(nodes, n, sizeof(*nodes), by_place, l);
    uint64_t next = 0;
    for (size_t k = 0; k < n; k++) {
        const struct fnp_tree_node *nd = &p->tree[nodes[k]];
        const struct fnp_tree_node *prev = k ? &p->tree[nodes[k - 1]] : NULL;
        int root = nd->parent == FNP_NO_PARENT;
        int first = !prev || (prev->parent == FNP_NO_PARENT) != root ||
                    (root ? prev->thread != nd->thread : prev->parent != nd->parent);
        if (first)
            next =
                root ? (nd->thread < nt ? l->thread_start[nd->thread] : 0) : l->start[nd->parent];
        l->start[nodes[k]] = next;
        next += l->incl[nodes[k]];
    }
    free(nodes);
    l->total = fnp_tree_ns(p, sum);
    l->scale = sum ? (double)FULL_W / (double)sum : 0;
    l->height = TOP + (uint64_t)l->rows * FRAME_H + BOTTOM;
    return 0;
}

/* Text for the frames, put together without printf: a large tree has hundreds of
 * thousands of frames, and printf's floating-point path took most of the time. */
struct text {
    char c[256]; /* the longest piece: a rect and a text tag, under 200 bytes */
    size_t n;
};

static void put(struct text *t, const char *str)
{
    size_t n = strlen(str);
    memcpy(t->c + t->n, str, n);
    t->n += n;
}

static void put_u64(struct text *t, uint64_t v)
{
    char digits[20];
    int k = 0;
    do
        digits[k++] = (char)('0' + v % 10);
    while (v /= 10);
    while (k)
        t->c[t->n++] = digits[--k];
}

/* v >= 0 with d decimals (at most 12), rounded. */
static void put_fixed(struct text *t, double v, int d)
{
    static const double tens[] = {1e0, 1e1, 1e2, 1e3,  1e4,  1e5, 1e6,
                                  1e7, 1e8, 1e9, 1e10, 1e11, 1e12};
    uint64_t scale = (uint64_t)tens[d];
    double scaled = v * tens[d] + 0.5;
    /* A hostile file's numbers may scale past 2^64: the largest, not undefined behaviour. */
    uint64_t q = !(v > 0) ? 0 : scaled < 1.8e19 ? (uint64_t)scaled : UINT64_MAX;
    put_u64(t, q / scale);
    t->c[t->n++] = '.';
    uint64_t frac = q % scale;
    for (int i = d - 1; i >= 0; i--, frac /= 10)
        t->c[t->n + (size_t)i] = (char)('0' + frac % 10);
    t->n += (size_t)d;
}

/* q thousandths as "q/1000.qqq". */
static void put_milli(struct text *t, uint64_t q)
{
    put_u64(t, q / 1000);
    char frac[5] = {'.', (char)('0' + q / 100 % 10), (char)('0' + q / 10 % 10),
                    (char)('0' + q % 10), 0};
    put(t, frac);
}

static void flush(struct fnp_sink *s, struct text *t)
{
    fnp_sink_write(s, t->c, t->n);
    t->n = 0;
}

/* "\nwhat: value (pct%)", a line of the hover text: calls, or time in the largest unit
 * under it, with three decimals. */
static void value_line(struct fnp_sink *s, const struct layout *l, const char *what, uint64_t v)
{
    struct text t = {.n = 0};
    put(&t, "\n");
    put(&t, what);
    put(&t, ": ");
    if (l->p->tree_kind == FNP_TREE_CALLS) {
        put_u64(&t, v);
        put(&t, v == 1 ? " call" : " calls");
    } else if (v >= 1000000000) {
        put_milli(&t, v / 1000000 + (v % 1000000 >= 500000));
        put(&t, " s");
    } else if (v >= 1000000) {
        put_milli(&t, v / 1000 + (v % 1000 >= 500));
        put(&t, " ms");
    } else if (v >= 1000) {
        put_milli(&t, v);
        put(&t, " us");
    } else {
        put_u64(&t, v);
        put(&t, " ns");
    }
    put(&t, " (");
    put_fixed(&t, l->total ? 100.0 * (double)v / (double)l->total : 0.0, 2);
    put(&t, "%)");
    flush(s, &t);
}

/* Decimals that keep about five significant digits of a width, so that zooming into a
 * narrow frame still places its children right. */
static int decimals(double w)
{
    int d = 2;
    for (double t = w; d < 12 && t > 0 && t < 100; t *= 10)
        d++;
    return d;
}

/* The label cut to what fits in w pixels, ending in "..", as flamegraph.pl does; "" when
 * not even three characters fit. Counts UTF-8 characters, not bytes. */
static const char *fit(const struct layout *l, const char *label, double w)
{
    double fits = (w - 3) / CHAR_W;
    if (!(fits >= 3))
        return "";
    /* capped: a hostile file's width may be past what a long holds */
    long room = fits < 1e9 ? (long)fits : 1000000000;
    long chars = 0;
    size_t cut = 0, len = strlen(label);
    for (size_t b = 0; b < len; b++) {
        if (((unsigned char)label[b] & 0xc0) == 0x80)
            continue;
        if (chars == room - 2)
            cut = b;
        if (++chars > room)
            break;
    }
    if (chars <= room)
        return label;
    memcpy(l->text, label, cut);
    memcpy(l->text + cut, "..", 3);
    return l->text;
}

/* The end of a frame whose <g> and <title> text the caller wrote. */
static void frame_end(struct fnp_sink *s, const struct layout *l, const char *label, double x,
                      double w, uint32_t depth, const char *fill)
{
    uint64_t y = l->height - BOTTOM - (uint64_t)(depth + 1) * FRAME_H;
    int d = decimals(w);
    struct text t = {.n = 0};
    put(&t, "</title><rect x=\"");
    put_fixed(&t, x, d);
    put(&t, "\" y=\"");
    put_u64(&t, y);
    put(&t, "\" width=\"");
    put_fixed(&t, w, d);
    put(&t, "\" height=\"");
    put_u64(&t, FRAME_H - 1); /* a pixel between rows */
    put(&t, "\" fill=\"");
    put(&t, fill);
    put(&t, "\"/><text x=\"");
    put_fixed(&t, x + 3, 2);
    put(&t, "\" y=\"");
    put_u64(&t, y + 11); /* the baseline of a 12px font centred in the frame */
    put(&t, ".5\">");
    flush(s, &t);
    fnp_xml_text(s, fit(l, label, w));
    fnp_sink_puts(s, "</text></g>\n");
}

static void node_frame(struct fnp_sink *s, const struct layout *l, size_t i)
{
    const struct fnp_profile *p = l->p;
    const struct fnp_tree_node *nd = &p->tree[i];
    const char *label = l->labels[nd->func];
    const struct fnp_key *k = &p->funcs[nd->func].key;
    struct text t = {.n = 0};
    put(&t, "<g data-node=\"");
    put_u64(&t, i);
    put(&t, "\"><title>");
    flush(s, &t);
    fnp_xml_text(s, label);
    fnp_sink_write(s, "\n", 1);
    if (strcmp(k->file, "~") != 0) {
        fnp_xml_text(s, k->file);
        put(&t, ":");
        put_u64(&t, k->line);
    } else {
        put(&t, "built-in");
    }
    put(&t, "\n");
    put_u64(&t, nd->ncalls);
    put(&t, nd->ncalls == 1 ? " call" : " calls");
    flush(s, &t);
    value_line(s, l, "self", fnp_tree_ns(p, l->self[i]));
    value_line(s, l, "total", fnp_tree_ns(p, l->incl[i]));
    frame_end(s, l, label, XPAD + (double)l->start[i] * l->scale, (double)l->incl[i] * l->scale,
              l->depth[i], l->fills[nd->func]);
}

static const char style[] =
    "<style type=\"text/css\">\n"
    "text { font-family: Verdana, sans-serif; font-size: 12px; fill: black; }\n"
    "#title { text-anchor: middle; font-size: 17px; }\n"
    "#subtitle { text-anchor: middle; fill: rgb(100,100,100); }\n"
    "#search, #unzoom { cursor: pointer; }\n"
    "#search { opacity: 0.4; } #search:hover, #search.show { opacity: 1; }\n"
    "#frames > g:hover > rect { stroke: black; stroke-width: 0.5; }\n"
    "#frames > g { cursor: pointer; }\n"
    "#frames rect { rx: 2px; ry: 2px; }\n"
    ".hide { display: none; }\n"
    ".parent { opacity: 0.5; }\n"
    "</style>\n";

/* The viewer. F holds the frames in document (pre-) order: a frame's subtree is the run
 * of frames after it drawn higher up, its parent the nearest frame before it one row
 * down; x and w are the drawn geometry, kept to undo a zoom. */
static const char script[] =
    "<script type=\"text/ecmascript\"><![CDATA[\n"
    "\"use strict\";\n"
    "var F = [], zoomed = -1, term = null, details, unzoomBtn, searchBtn, matched;\n"
    "function init(evt) {\n"
    "  details = document.getElementById(\"details\").firstChild;\n"
    "  unzoomBtn = document.getElementById(\"unzoom\");\n"
    "  searchBtn = document.getElementById(\"search\");\n"
    "  matched = document.getElementById(\"matched\").firstChild;\n"
    "  var gs = document.getElementById(\"frames\").children, open = [];\n"
    "  for (var i = 0; i < gs.length; i++) {\n"
    "    var g = gs[i], r = g.children[1];\n"
    "    var f = {g: g, r: r, t: g.children[2], x: +r.getAttribute(\"x\"),\n"
    "      w: +r.getAttribute(\"width\"), y: +r.getAttribute(\"y\"), fill: "
    "r.getAttribute(\"fill\"),\n"
    "      name: g.children[0].textContent.split(\"\\n\")[0], parent: -1, end: gs.length};\n"
    "    while (open.length && F[open[open.length - 1]].y <= f.y) F[open.pop()].end = i;\n"
    "    if (open.length) f.parent = open[open.length - 1];\n"
    "    open.push(i);\n"
    "    g.fi = i;\n"
    "    F.push(f);\n"
    "  }\n"
    "  document.addEventListener(\"click\", function (e) {\n"
    "    var k = frameOf(e.target);\n"
    "    if (k >= 0) { if (k == 0) unzoom(); else zoom(k); }\n"
    "    else if (e.target.id == \"unzoom\") unzoom();\n"
    "    else if (e.target.id == \"search\") searchPrompt();\n"
    "  });\n"
    "  document.addEventListener(\"mouseover\", function (e) {\n"
    "    var k = frameOf(e.target);\n"
    "    if (k >= 0) details.nodeValue = "
    "F[k].g.children[0].textContent.split(\"\\n\").join(\", \");\n"
    "  });\n"
    "  document.addEventListener(\"mouseout\", function (e) {\n"
    "    if (frameOf(e.target) >= 0) details.nodeValue = \" \";\n"
    "  });\n"
    "  document.addEventListener(\"keydown\", function (e) {\n"
    "    if (e.keyCode === 114 || (e.ctrlKey && e.keyCode === 70)) {\n"
    "      e.preventDefault();\n"
    "      searchPrompt();\n"
    "    } else if (e.keyCode === 27) {\n"
    "      unzoom();\n"
    "    }\n"
    "  });\n"
    "}\n"
    "function frameOf(node) {\n"
    "  for (; node && node.parentNode; node = node.parentNode)\n"
    "    if (node.parentNode.id == \"frames\") return node.fi;\n"
    "  return -1;\n"
    "}\n"
    "function label(f, w) {\n"
    "  var room = Math.floor((w - 3) / CHAR_W), name = f.name;\n"
    "  if (room < 3) name = \"\";\n"
    "  else if (Array.from(name).length > room)\n"
    "    name = Array.from(name).slice(0, room - 2).join(\"\") + \"..\";\n"
    "  f.t.textContent = name;\n"
    "}\n"
    "function place(f, x, w) {\n"
    "  f.r.setAttribute(\"x\", x.toFixed(2));\n"
    "  f.r.setAttribute(\"width\", w.toFixed(2));\n"
    "  f.t.setAttribute(\"x\", (x + 3).toFixed(2));\n"
    "  label(f, w);\n"
    "}\n"
    "function zoom(k) {\n"
    "  var z = F[k], ratio = z.w > 0 ? FULL_W / z.w : 0;\n"
    "  for (var i = 0; i < F.length; i++) {\n"
    "    F[i].g.classList.add(\"hide\");\n"
    "    F[i].g.classList.remove(\"parent\");\n"
    "  }\n"
    "  for (var a = z.parent; a >= 0; a = F[a].parent) {\n"
    "    F[a].g.classList.remove(\"hide\");\n"
    "    F[a].g.classList.add(\"parent\");\n"
    "    place(F[a], XPAD, FULL_W);\n"
    "  }\n"
    "  for (var i = k; i < z.end; i++) {\n"
    "    F[i].g.classList.remove(\"hide\");\n"
    "    place(F[i], XPAD + (F[i].x - z.x) * ratio, F[i].w * ratio);\n"
    "  }\n"
    "  zoomed = k;\n"
    "  unzoomBtn.classList.remove(\"hide\");\n"
    "}\n"
    "function unzoom() {\n"
    "  if (zoomed < 0) return;\n"
    "  for (var i = 0; i < F.length; i++) {\n"
    "    F[i].g.classList.remove(\"hide\", \"parent\");\n"
    "    place(F[i], F[i].x, F[i].w);\n"
    "  }\n"
    "  zoomed = -1;\n"
    "  unzoomBtn.classList.add(\"hide\");\n"
    "}\n"
    "function searchPrompt() {\n"
    "  if (term !== null) { resetSearch(); return; }\n"
    "  var t = prompt(\"Search for functions (a regular expression, e.g. ^lua_)\", \"\");\n"
    "  if (t) search(t);\n"
    "}\n"
    "function resetSearch() {\n"
    "  for (var i = 0; i < F.length; i++) F[i].r.setAttribute(\"fill\", F[i].fill);\n"
    "  term = null;\n"
    "  searchBtn.classList.remove(\"show\");\n"
    "  searchBtn.firstChild.nodeValue = \"Search\";\n"
    "  matched.nodeValue = \" \";\n"
    "}\n"
    "function search(t) {\n"
    "  var re;\n"
    "  try { re = new RegExp(t); } catch (err) { alert(err.message); return; }\n"
    "  term = t;\n"
    "  /* share of the whole: matches not inside another match, by their unzoomed width */\n"
    "  var sum = 0, skip = 0;\n"
    "  for (var i = 1; i < F.length; i++) {\n"
    "    var hit = re.test(F[i].name) && !F[i].g.hasAttribute(\"data-synthetic\");\n"
    "    F[i].r.setAttribute(\"fill\", hit ? \"rgb(230,0,230)\" : F[i].fill);\n"
    "    if (hit && i >= skip) { sum += F[i].w; skip = F[i].end; }\n"
    "  }\n"
    "  searchBtn.classList.add(\"show\");\n"
    "  searchBtn.firstChild.nodeValue = \"Reset Search\";\n"
    "  var pct = F.length && F[0].w > 0 ? 100 * sum / F[0].w : 0;\n"
    "  matched.nodeValue = \"Matched: \" + (pct == 100 ? \"100\" : pct.toFixed(1)) + \"%\";\n"
    "}\n"
    "]]></script>\n";

static void write_head(struct fnp_sink *s, const struct layout *l, const struct fnp_view_opts *o)
{
    const struct fnp_profile *p = l->p;
    unsigned long long h = l->height;
    fnp_sink_puts(s, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n");
    fnp_sink_printf(s,
                    "<svg version=\"1.1\" width=\"%d\" height=\"%llu\" viewBox=\"0 0 %d %llu\" "
                    "onload=\"init(evt)\" xmlns=\"http://www.w3.org/2000/svg\">\n",
                    IMAGE_W, h, IMAGE_W, h);
    fnp_sink_puts(s, "<title>Flame Graph");
    if (o->title) {
        fnp_sink_puts(s, ": ");
        fnp_xml_text(s, fnp_base_name(o->title));
    }
    fnp_sink_puts(s, "</title>\n");
    fnp_sink_puts(s, "<desc>Made by fnprof convert --to flamegraph. Frame widths: each calling "
                     "context's total value (its own plus its callees'). Frames are in "
                     "pre-order; data-node is the node's index in the profile's "
                     "calling-context tree. No frame is left out, however narrow.</desc>\n");
    fnp_sink_printf(s,
                    "<defs><linearGradient id=\"background\" y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\">"
                    "<stop stop-color=\"#eeeeee\" offset=\"5%%\"/>"
                    "<stop stop-color=\"#eeeeb0\" offset=\"95%%\"/></linearGradient></defs>\n");
    fnp_sink_puts(s, style);
    fnp_sink_printf(
        s, "<script type=\"text/ecmascript\">var XPAD = %d, FULL_W = %d, CHAR_W = %g;</script>\n",
        XPAD, FULL_W, CHAR_W);
    fnp_sink_puts(s, script);
    fnp_sink_printf(
        s, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%llu\" fill=\"url(#background)\"/>\n",
        IMAGE_W, h);
    fnp_sink_printf(s, "<text id=\"title\" x=\"%d\" y=\"%d\">Flame Graph</text>\n", IMAGE_W / 2,
                    FONT * 2);
    fnp_sink_printf(s, "<text id=\"subtitle\" x=\"%d\" y=\"%d\">", IMAGE_W / 2, FONT * 3 + 4);
    if (o->title) {
        fnp_xml_text(s, o->title);
        fnp_sink_puts(s, ": ");
    }
    fnp_sink_puts(s, p->tree_kind == FNP_TREE_CALLS ? "width is calls (a count-only run)"
                                                    : "width is total time");
    if (p->nthreads > 1)
        fnp_sink_printf(s, ", %zu threads", p->nthreads);
    if (o->rebuilt)
        fnp_sink_puts(s, "; paths rebuilt from caller edges: estimates");
    fnp_sink_puts(s, "</text>\n");
    fnp_sink_printf(s, "<text id=\"unzoom\" class=\"hide\" x=\"%d\" y=\"%d\">Reset Zoom</text>\n",
                    XPAD, FONT * 2);
    fnp_sink_printf(s, "<text id=\"search\" x=\"%d\" y=\"%d\">Search</text>\n",
                    IMAGE_W - XPAD - 100, FONT * 2);
    fnp_sink_printf(s, "<text id=\"details\" x=\"%d\" y=\"%llu\"> </text>\n", XPAD, h - BOTTOM / 2);
    fnp_sink_printf(s, "<text id=\"matched\" x=\"%d\" y=\"%llu\"> </text>\n", IMAGE_W - XPAD - 100,
                    h - BOTTOM / 2);
    if (!l->total)
        fnp_sink_printf(s, "<text x=\"%d\" y=\"%llu\" style=\"text-anchor: middle\">%s</text>\n",
                        IMAGE_W / 2, h / 2, p->ntree ? "every value is 0" : "no calls recorded");
}

int fnp_view_flamegraph(const struct fnp_profile *p, const struct fnp_view_opts *o,
                        struct fnp_sink *s)
{
    struct layout l;
    int rc = layout_new(&l, p, o && o->short_names);
    if (rc) {
        if (!s->err)
            s->err = rc;
        layout_free(&l);
        return s->err;
    }
    write_head(s, &l, o);
    fnp_sink_puts(s, "<g id=\"frames\">\n");
    fnp_sink_puts(s, "<g data-synthetic=\"all\"><title>all");
    if (p->nthreads > 1)
        fnp_sink_printf(s, "\n%zu threads", p->nthreads);
    value_line(s, &l, "total", l.total);
    frame_end(s, &l, "all", XPAD, FULL_W, 0, "rgb(220,220,220)");
    size_t n = p->ntree, i = 0;
    size_t nthreads = p->nthreads ? p->nthreads : 1;
    for (size_t t = 0; t < nthreads && !s->err; t++) {
        if (p->nthreads > 1) {
            fnp_sink_printf(s, "<g data-synthetic=\"thread\" data-thread=\"%zu\"><title>", t);
            fnp_xml_text(s, p->threads[t]);
            value_line(s, &l, "total", fnp_tree_ns(p, l.thread_total[t]));
            frame_end(s, &l, p->threads[t], XPAD + (double)l.thread_start[t] * l.scale,
                      (double)l.thread_total[t] * l.scale, 1, "rgb(200,200,200)");
        }
        /* this thread's roots and their subtrees: contiguous, roots sorted by thread */
        while (i < n && !s->err && p->tree[i].parent == FNP_NO_PARENT &&
               (p->tree[i].thread == t || p->nthreads <= 1)) {
            do
                node_frame(s, &l, i++);
            while (i < n && !s->err && p->tree[i].parent != FNP_NO_PARENT);
        }
    }
    fnp_sink_puts(s, "</g>\n</svg>\n");
    layout_free(&l);
    return s->err;
}
