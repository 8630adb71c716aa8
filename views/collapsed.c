/* SPDX-License-Identifier: MIT */
/*
 * Collapsed stacks, the input of flamegraph.pl, inferno and speedscope: one line per
 * calling context, its frames from the outermost call joined by ';', a space, and its own
 * time in integer nanoseconds (count-only profiles: its calls). With more than one thread
 * every line starts with the thread ("thread 1;main;..."); with one, at the outermost
 * function. Contexts whose own value rounds to 0 are left out: they add no width.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "views.h"

/* The format reserves ';' between frames and a line per stack. */
static void sanitize(char *label)
{
    for (char *c = label; *c; c++)
        if (*c == ';')
            *c = ':';
        else if (*c == '\n' || *c == '\r')
            *c = '?';
}

int fnp_view_collapsed(const struct fnp_profile *p, const struct fnp_view_opts *o,
                       struct fnp_sink *s)
{
    (void)o;
    size_t n = p->ntree;
    char **labels = fnp_labels_new(p, o->short_names);
    char **threads = calloc(p->nthreads ? p->nthreads : 1, sizeof(*threads));
    uint64_t *self = malloc((n ? n : 1) * sizeof(*self));
    uint32_t *stack = malloc((n ? n : 1) * sizeof(*stack));
    if (!labels || !threads || !self || !stack) {
        if (!s->err)
            s->err = -ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < p->nfuncs; i++)
        sanitize(labels[i]);
    for (size_t i = 0; i < p->nthreads && !s->err; i++) {
        threads[i] = strdup(p->threads[i]);
        if (threads[i])
            sanitize(threads[i]);
        else
            s->err = -ENOMEM;
    }
    fnp_tree_values(p, self, NULL);
    size_t depth = 0;
    for (size_t i = 0; i < n && !s->err; i++) {
        const struct fnp_tree_node *nd = &p->tree[i];
        while (depth && stack[depth - 1] != nd->parent)
            depth--;
        stack[depth++] = (uint32_t)i;
        uint64_t v = fnp_tree_ns(p, self[i]);
        if (!v)
            continue;
        if (p->nthreads > 1) {
            fnp_sink_puts(s, threads[p->tree[stack[0]].thread]);
            fnp_sink_write(s, ";", 1);
        }
        for (size_t d = 0; d < depth; d++) {
            if (d)
                fnp_sink_write(s, ";", 1);
            fnp_sink_puts(s, labels[p->tree[stack[d]].func]);
        }
        fnp_sink_printf(s, " %llu\n", (unsigned long long)v);
    }
out:
    fnp_labels_free(labels, p->nfuncs);
    fnp_labels_free(threads, p->nthreads);
    free(self);
    free(stack);
    return s->err;
}
