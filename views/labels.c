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

/* What the labels are made of: the functions, and the names shown for them. */
struct names {
    const struct fnp_func *funcs;
    char **names;
};

/* Sort order for labels: by name, then base name and line, so that a name's keys are
 * together and, among them, those whose short labels would be equal are neighbours. */
static int by_label(const void *a, const void *b, void *ctx)
{
    const struct names *n = ctx;
    uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
    const struct fnp_key *x = &n->funcs[i].key, *y = &n->funcs[j].key;
    int c = strcmp(n->names[i], n->names[j]);
    if (!c)
        c = strcmp(fnp_base_name(x->file), fnp_base_name(y->file));
    if (!c)
        c = x->line < y->line ? -1 : x->line > y->line;
    return c;
}

static int by_string(const void *a, const void *b, void *labels)
{
    char **l = labels;
    return strcmp(l[*(const uint32_t *)a], l[*(const uint32_t *)b]);
}

/* labels[i] for each function: names[i], or "name [file:line]" where names are shared. */
static int label(const struct fnp_profile *p, char **names, uint32_t *order, char **labels)
{
    size_t n = p->nfuncs;
    struct names ctx = {p->funcs, names};
    for (size_t i = 0; i < n; i++)
        order[i] = (uint32_t)i;
    qsort_r(order, n, sizeof(*order), by_label, &ctx);
    for (size_t i = 0; i < n; i++) {
        const char *name = names[order[i]];
        const struct fnp_key *k = &p->funcs[order[i]].key;
        const char *prev = i ? names[order[i - 1]] : NULL;
        const char *next = i + 1 < n ? names[order[i + 1]] : NULL;
        int shared = (prev && !strcmp(prev, name)) || (next && !strcmp(next, name));
        /* Two files of one base name (a.c in two folders) at the same line: the whole path. */
        int same_base = (prev && !by_label(&order[i - 1], &order[i], &ctx)) ||
                        (next && !by_label(&order[i + 1], &order[i], &ctx));
        char *l;
        if (!shared) {
            l = strdup(name);
        } else {
            const char *file = same_base ? k->file : fnp_base_name(k->file);
            size_t len = strlen(name) + strlen(file) + 16;
            l = malloc(len);
            if (l)
                snprintf(l, len, "%s [%s:%u]", name, file, k->line);
        }
        if (!l)
            return -1;
        labels[order[i]] = l;
    }
    return 0;
}

char **fnp_labels_new(const struct fnp_profile *p, int short_names)
{
    size_t n = p->nfuncs;
    char **labels = calloc(n ? n : 1, sizeof(*labels));
    char **full = NULL, **names = calloc(n ? n : 1, sizeof(*names));
    uint32_t *order = malloc((n ? n : 1) * sizeof(*order));
    if (!labels || !names || !order)
        goto fail;
    for (size_t i = 0; i < n; i++) {
        const struct fnp_key *k = &p->funcs[i].key;
        names[i] = short_names ? fnp_short_name(k->name, k->file) : strdup(k->name);
        if (!names[i])
            goto fail;
    }
    if (label(p, names, order, labels))
        goto fail;
    if (!short_names)
        goto done;
    /* Two names shortened alike at one place (std::__1::string and std::string overloads of
     * one line): both get the label of their full name, which the keys keep apart. */
    qsort_r(order, n, sizeof(*order), by_string, labels);
    for (size_t i = 0; i + 1 < n; i++) {
        if (strcmp(labels[order[i]], labels[order[i + 1]]))
            continue;
        if (!full) {
            full = fnp_labels_new(p, 0);
            if (!full)
                goto fail;
        }
        size_t j = i + 1;
        while (j < n && !strcmp(labels[order[i]], labels[order[j]]))
            j++;
        for (size_t m = i; m < j; m++) {
            free(labels[order[m]]);
            labels[order[m]] = strdup(full[order[m]]);
            if (!labels[order[m]])
                goto fail;
        }
        i = j - 1;
    }
    /* A full name's label equal to another's short one: only the function's index is left. */
    qsort_r(order, n, sizeof(*order), by_string, labels);
    for (size_t i = 0; i + 1 < n; i++) {
        if (strcmp(labels[order[i]], labels[order[i + 1]]))
            continue;
        for (size_t m = i; m < i + 2; m++) {
            size_t len = strlen(labels[order[m]]) + 24;
            char *l = malloc(len);
            if (!l)
                goto fail;
            snprintf(l, len, "%s #%u", labels[order[m]], order[m]);
            free(labels[order[m]]);
            labels[order[m]] = l;
        }
    }
done:
    fnp_labels_free(full, n);
    fnp_labels_free(names, n);
    free(order);
    return labels;
fail:
    fnp_labels_free(full, n);
    fnp_labels_free(names, n);
    fnp_labels_free(labels, n);
    free(order);
    return NULL;
}

/* Sort order for fnp_names_new: by name, then place. */
static int by_place(const void *a, const void *b, void *ctx)
{
    const struct names *n = ctx;
    uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
    const struct fnp_key *x = &n->funcs[i].key, *y = &n->funcs[j].key;
    int c = strcmp(n->names[i], n->names[j]);
    if (!c)
        c = strcmp(x->file, y->file);
    if (!c)
        c = x->line < y->line ? -1 : x->line > y->line;
    return c;
}

char **fnp_names_new(const struct fnp_profile *p)
{
    size_t n = p->nfuncs;
    char **names = calloc(n ? n : 1, sizeof(*names));
    uint32_t *order = malloc((n ? n : 1) * sizeof(*order));
    if (!names || !order)
        goto fail;
    for (size_t i = 0; i < n; i++) {
        order[i] = (uint32_t)i;
        names[i] = fnp_short_name(p->funcs[i].key.name, p->funcs[i].key.file);
        if (!names[i])
            goto fail;
    }
    struct names ctx = {p->funcs, names};
    qsort_r(order, n, sizeof(*order), by_place, &ctx);
    /* Where the name and place of two differ only by the shortening, both keep their keys'
     * names. A group's first member is compared with its neighbours before any changes. */
    for (size_t i = 0; i + 1 < n; i++) {
        size_t j = i + 1;
        while (j < n && !by_place(&order[i], &order[j], &ctx))
            j++;
        for (size_t m = i; j > i + 1 && m < j; m++) {
            char *full = strdup(p->funcs[order[m]].key.name);
            if (!full)
                goto fail;
            free(names[order[m]]);
            names[order[m]] = full;
        }
        i = j - 1;
    }
    free(order);
    return names;
fail:
    fnp_labels_free(names, n);
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
