/* SPDX-License-Identifier: MIT */
/*
 * What views call functions, and the unit of their values.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "views.h"

const char *fnp_base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash && slash[1] ? slash + 1 : path;
}

/* Sort order for labels: by name, then base name and line, so that a name's keys are
 * together and, among them, those whose short labels would be equal are neighbours. */
static int by_label(const void *a, const void *b, void *funcs_)
{
    const struct fnp_func *f = funcs_;
    const struct fnp_key *x = &f[*(const uint32_t *)a].key, *y = &f[*(const uint32_t *)b].key;
    int c = strcmp(x->name, y->name);
    if (!c)
        c = strcmp(fnp_base_name(x->file), fnp_base_name(y->file));
    if (!c)
        c = x->line < y->line ? -1 : x->line > y->line;
    return c;
}

char **fnp_labels_new(const struct fnp_profile *p)
{
    size_t n = p->nfuncs;
    char **labels = calloc(n ? n : 1, sizeof(*labels));
    uint32_t *order = malloc((n ? n : 1) * sizeof(*order));
    if (!labels || !order)
        goto fail;
    for (size_t i = 0; i < n; i++)
        order[i] = (uint32_t)i;
    qsort_r(order, n, sizeof(*order), by_label, p->funcs);
    for (size_t i = 0; i < n; i++) {
        const struct fnp_key *k = &p->funcs[order[i]].key;
        const struct fnp_key *prev = i ? &p->funcs[order[i - 1]].key : NULL;
        const struct fnp_key *next = i + 1 < n ? &p->funcs[order[i + 1]].key : NULL;
        int shared =
            (prev && !strcmp(prev->name, k->name)) || (next && !strcmp(next->name, k->name));
        /* Two files of one base name (a.c in two folders) at the same line: the whole path. */
        int same_base = (prev && !by_label(&order[i - 1], &order[i], p->funcs)) ||
                        (next && !by_label(&order[i + 1], &order[i], p->funcs));
        char *label;
        if (!shared) {
            label = strdup(k->name);
        } else {
            const char *file = same_base ? k->file : fnp_base_name(k->file);
            size_t len = strlen(k->name) + strlen(file) + 16;
            label = malloc(len);
            if (label)
                snprintf(label, len, "%s [%s:%u]", k->name, file, k->line);
        }
        if (!label)
            goto fail;
        labels[order[i]] = label;
    }
    free(order);
    return labels;
fail:
    fnp_labels_free(labels, n);
    free(order);
    return NULL;
}

void fnp_labels_free(char **labels, size_t n)
{
    if (!labels)
        return;
    for (size_t i = 0; i < n; i++)
        free(labels[i]);
    free(labels);
}

uint64_t fnp_tree_ns(const struct fnp_profile *p, uint64_t ticks)
{
    if (p->tree_kind == FNP_TREE_CALLS)
        return ticks;
    return fnp_ticks_scale(ticks, p->tick_seconds * 1e9);
}

const char *fnp_tree_unit(const struct fnp_profile *p)
{
    return p->tree_kind == FNP_TREE_CALLS ? "calls" : "ns";
}
