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

static int by_name(const void *a, const void *b, void *funcs_)
{
    const struct fnp_func *f = funcs_;
    return strcmp(f[*(const uint32_t *)a].key.name, f[*(const uint32_t *)b].key.name);
}

/* Two keys of one name whose short labels would be equal. */
static int same_place(const struct fnp_key *a, const struct fnp_key *b)
{
    return a->line == b->line && !strcmp(fnp_base_name(a->file), fnp_base_name(b->file));
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
    qsort_r(order, n, sizeof(*order), by_name, p->funcs);
    for (size_t i = 0; i < n; i++) {
        const struct fnp_key *k = &p->funcs[order[i]].key;
        int shared = 0, same_base = 0;
        for (size_t j = i; j-- > 0 && !strcmp(p->funcs[order[j]].key.name, k->name);)
            shared = 1, same_base |= same_place(&p->funcs[order[j]].key, k);
        for (size_t j = i + 1; j < n && !strcmp(p->funcs[order[j]].key.name, k->name); j++)
            shared = 1, same_base |= same_place(&p->funcs[order[j]].key, k);
        char *label;
        if (!shared) {
            label = strdup(k->name);
        } else {
            /* Two files of one name (a.c in two folders) at the same line: the whole path. */
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
