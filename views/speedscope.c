/* SPDX-License-Identifier: MIT */
/*
 * speedscope's JSON file format (jlfwong/speedscope, src/lib/file-format-spec.ts): one
 * frame per function in "shared", and one "sampled" profile per thread, named for it.
 * A calling context becomes one sample, its stack of frame indices from the outermost
 * call, weighted by the context's own time in integer nanoseconds (unit "nanoseconds"),
 * or by its own calls in a count-only profile (unit "none"). The format has no field
 * for call counts; summing the weights of a subtree gives its exact inclusive value.
 *
 * Why sampled and not evented: an evented profile would have to invent timestamps for
 * contexts that ran interleaved, and speedscope rebuilds the same flame chart from
 * weighted stacks. Samples come in the tree's pre-order, so speedscope's time-ordered
 * view merges neighbouring stacks into one frame per context. Contexts whose own value
 * rounds to 0 get no sample: they add no width, and their children's stacks still
 * pass through them. The price of the format: a sample repeats its whole path, so the
 * file grows with the sum of the contexts' depths; fnprof convert cuts paths at
 * --max-depth (views/depth_cut.c) to keep it O(contexts x cut).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "views.h"

#define SCHEMA "https://www.speedscope.app/file-format-schema.json"

static void write_frames(const struct fnp_profile *p, char **labels, struct fnp_sink *s)
{
    fnp_sink_puts(s, "\"shared\":{\"frames\":[");
    for (size_t i = 0; i < p->nfuncs; i++) {
        const struct fnp_key *k = &p->funcs[i].key;
        fnp_sink_puts(s, i ? ",\n{\"name\":" : "\n{\"name\":");
        fnp_json_string(s, labels[i]);
        /* pstats names built-ins ('~', 0, name): no file to point at */
        if (strcmp(k->file, "~") != 0) {
            fnp_sink_puts(s, ",\"file\":");
            fnp_json_string(s, k->file);
            fnp_sink_printf(s, ",\"line\":%u", k->line);
        }
        fnp_sink_puts(s, "}");
    }
    fnp_sink_puts(s, "]},\n");
}

/* Per-node arrays of the writer, sized for the whole tree: a path is at most ntree long,
 * and its text at most 11 bytes (",4294967295") a level. */
struct work {
    uint64_t *self;
    uint32_t *path;
    size_t *ends;
    char *text;
};

/*
 * The profile of thread t: the nodes [from, to) (the thread's roots and their subtrees,
 * contiguous since roots are sorted by thread). A sample's text is its parent's plus one
 * frame, so w->text keeps the current path's text, w->ends[d] where its first d+1 frames
 * end and w->path[d] their nodes: each node is formatted once, a sample costs one copy.
 */
static void write_thread(const struct fnp_profile *p, const char *name, size_t from, size_t to,
                         const struct work *w, struct fnp_sink *s)
{
    const uint64_t *self = w->self;
    uint32_t *path = w->path;
    size_t *ends = w->ends;
    char *text = w->text;
    uint64_t total = 0;
    for (size_t i = from; i < to; i++)
        total += fnp_tree_ns(p, self[i]);
    fnp_sink_puts(s, "{\"type\":\"sampled\",\"name\":");
    fnp_json_string(s, name);
    fnp_sink_printf(s, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":%llu,\n\"samples\":[",
                    p->tree_kind == FNP_TREE_CALLS ? "none" : "nanoseconds",
                    (unsigned long long)total);
    size_t depth = 0, nsamples = 0;
    for (size_t i = from; i < to && !s->err; i++) {
        const struct fnp_tree_node *nd = &p->tree[i];
        while (depth && path[depth - 1] != nd->parent)
            depth--;
        char *end = text + (depth ? ends[depth - 1] : 0);
        if (depth)
            *end++ = ',';
        end = fnp_put_u64(end, nd->func);
        path[depth] = (uint32_t)i;
        ends[depth++] = (size_t)(end - text);
        if (!fnp_tree_ns(p, self[i]))
            continue;
        fnp_sink_puts(s, nsamples++ ? ",\n[" : "\n[");
        fnp_sink_write(s, text, (size_t)(end - text));
        fnp_sink_write(s, "]", 1);
    }
    fnp_sink_puts(s, "],\n\"weights\":[");
    nsamples = 0;
    for (size_t i = from; i < to && !s->err; i++) {
        uint64_t v = fnp_tree_ns(p, self[i]);
        if (!v)
            continue;
        char num[24], *e = num;
        if (nsamples)
            *e++ = ',';
        if (nsamples && nsamples % 16 == 0)
            *e++ = '\n';
        e = fnp_put_u64(e, v);
        fnp_sink_write(s, num, (size_t)(e - num));
        nsamples++;
    }
    fnp_sink_puts(s, "]}");
}

int fnp_view_speedscope(const struct fnp_profile *p, const struct fnp_view_opts *o,
                        struct fnp_sink *s)
{
    size_t n = p->ntree ? p->ntree : 1;
    char **labels = fnp_labels_new(p, o->short_names);
    struct work w = {
        .self = malloc(n * sizeof(*w.self)),
        .path = malloc(n * sizeof(*w.path)),
        .ends = malloc(n * sizeof(*w.ends)),
        .text = malloc(n * 11),
    };
    if (!labels || !w.self || !w.path || !w.ends || !w.text) {
        if (!s->err)
            s->err = -ENOMEM;
        goto out;
    }
    fnp_tree_values(p, w.self, NULL);
    fnp_sink_puts(s, "{\"$schema\":\"" SCHEMA "\",\n");
    write_frames(p, labels, s);
    fnp_sink_puts(s, "\"profiles\":[\n");
    /* A profile with no thread (no tree at all) still gets one empty profile: speedscope
     * names and shows the file by its first. */
    size_t nthreads = p->nthreads ? p->nthreads : 1;
    size_t i = 0;
    for (size_t t = 0; t < nthreads && !s->err; t++) {
        size_t from = i;
        while (i < p->ntree && p->tree[i].parent == FNP_NO_PARENT && p->tree[i].thread == t) {
            i++;
            while (i < p->ntree && p->tree[i].parent != FNP_NO_PARENT)
                i++;
        }
        if (t)
            fnp_sink_puts(s, ",\n");
        const char *name = t < p->nthreads ? p->threads[t] : (o->title ? o->title : "profile");
        write_thread(p, name, from, i, &w, s);
    }
    fnp_sink_puts(s, "\n],\n\"name\":");
    /* speedscope shows the name atop every view: the place to say paths are estimates */
    if (o->rebuilt) {
        const char *title = o->title ? o->title : "fnprof profile";
        const char *note = " (paths rebuilt from caller edges: estimates)";
        char *name = malloc(strlen(title) + strlen(note) + 1);
        if (!name) {
            if (!s->err)
                s->err = -ENOMEM;
            goto out;
        }
        strcpy(name, title);
        strcat(name, note);
        fnp_json_string(s, name);
        free(name);
    } else {
        fnp_json_string(s, o->title ? o->title : "fnprof profile");
    }
    fnp_sink_puts(s, ",\"activeProfileIndex\":0,\"exporter\":\"fnprof\"}\n");
out:
    fnp_labels_free(labels, p->nfuncs);
    free(w.self);
    free(w.path);
    free(w.ends);
    free(w.text);
    return s->err;
}
