/* SPDX-License-Identifier: MIT */
/*
 * From recorded addresses to a profile: where the runtime's exit dump and `fnprof
 * symbolize` (a raw snapshot written by a signal handler) meet. Each node's address is
 * placed in the module that held it when it was recorded, named once per distinct
 * (module, address) by the symbolizer, and the forest handed to the model.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"
#include "symbolizer.h"

#define SYNTHETIC_FILE "~"
#define PROCESS_NAME "<process>"
#define NO_MODULE UINT32_MAX

/* One distinct thing to name: an address in a module (or in none). */
struct site {
    uint32_t mod;
    uint64_t addr; /* runtime address */
};

static int by_site(const void *a, const void *b)
{
    const struct site *x = a, *y = b;
    if (x->mod != y->mod)
        return x->mod < y->mod ? -1 : 1;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The module that held addr under generation gen: of the modules covering addr, the one
 * unloaded first after gen began (a live one has gen_end UINT32_MAX). Address ranges of
 * modules alive at the same time never overlap, so that one was loaded at the time. */
static uint32_t module_of(const struct fnp_raw *r, uint64_t addr, uint32_t gen)
{
    uint32_t best = NO_MODULE;
    for (size_t i = 0; i < r->nmods; i++) {
        const struct fnp_raw_module *m = &r->mods[i];
        if (addr < m->lo || addr >= m->hi || gen >= m->gen_end)
            continue;
        if (best == NO_MODULE || m->gen_end < r->mods[best].gen_end)
            best = (uint32_t)i;
    }
    return best;
}

void fnp_raw_add_link(struct fnp_raw_node *nodes, uint32_t target, uint32_t parent, uint64_t ncalls,
                      uint64_t ticks, uint32_t flags)
{
    struct fnp_raw_node *to = &nodes[target];
    to->ncalls += ncalls;
    to->ticks += ticks;
    if (flags & FNP_OPEN_GIVEN) {
        /* Merged beyond the cap: the target takes the class's flags. A link with no caller
         * node (a class's own, keyed by the caller's function) leaves its time to the
         * target's tree parent, a node of the same caller function, which stands for all
         * its callers: function times stay exact, their split among edges not. */
        to->flags = flags;
        if (parent == FNP_NO_PARENT)
            return;
    }
    /* The target's tree parent did not make these calls: its children's ticks overstate
     * what it spent in them, and parent, which did, spent these ticks in them. Back ticks
     * wrap, as the model's tick sums do (model.c wrap_add): a raw snapshot has no checksum
     * and may hold any numbers, and a signed overflow would be undefined behaviour. */
    if (to->parent != FNP_NO_PARENT)
        nodes[to->parent].back = (int64_t)((uint64_t)nodes[to->parent].back - ticks);
    if (parent != FNP_NO_PARENT)
        nodes[parent].back = (int64_t)((uint64_t)nodes[parent].back + ticks);
}

void fnp_raw_wrote_line(char *buf, size_t len, const struct fnp_raw *r, const char *path,
                        size_t nfuncs, uint64_t threads)
{
    uint64_t calls = 0;
    for (size_t i = 0; i < r->n; i++)
        calls += r->nodes[i].ncalls;
    snprintf(buf, len, "wrote %s (%zu functions, %llu calls, %llu thread%s%s)", path, nfuncs,
             (unsigned long long)calls, (unsigned long long)threads, threads == 1 ? "" : "s",
             r->count_only ? "; count-only: no times taken, 1 call counts as 1 second" : "");
}

/* Where the merged contexts were, by what made them merge (both when not known): past the
 * node cap, or deeper than a tree path holds, PROF_MAX_NODES / 64 levels and at least 64
 * (runtime/cct.c: max_levels). */
static void merged_where(char *buf, size_t len, const struct fnp_raw *r)
{
    unsigned long long max = r->max_nodes, levels = max / 64 < 64 ? 64 : max / 64;
    switch (r->merge_causes) {
    case FNP_MERGED_BY_NODES:
        snprintf(buf, len, "beyond PROF_MAX_NODES=%llu", max);
        break;
    case FNP_MERGED_BY_DEPTH:
        snprintf(buf, len, "deeper than %llu levels (PROF_MAX_NODES=%llu / 64, at least 64)",
                 levels, max);
        break;
    default:
        snprintf(buf, len, "beyond PROF_MAX_NODES=%llu or deeper than %llu levels", max, levels);
    }
}

int fnp_raw_merged_line(char *buf, size_t len, const struct fnp_raw *r)
{
    if (!r->merged)
        return 0;
    char where[128];
    merged_where(where, sizeof(where), r);
    snprintf(buf, len,
             "%llu calls in calling contexts %s were merged by caller: calls, primitive calls "
             "and edges are exact, the contexts below them lost; raise PROF_MAX_NODES to keep "
             "them",
             (unsigned long long)r->merged, where);
    return 1;
}

/* A key for an address nothing could name: the object and the offset in it. */
static int64_t address_func(struct fnp_profile *p, const char *object, uint64_t offset)
{
    char name[32];
    snprintf(name, sizeof(name), "0x%llx", (unsigned long long)offset);
    struct fnp_key key = {.file = object, .line = 0, .name = name};
    return fnp_profile_func(p, &key);
}

/*
 * A region's key: its file as the compiler spelled __FILE__, made the path the debug info
 * gives its functions when exactly one file recorded so far ends with it (region sites
 * sort after every module's, so the functions are named by then).
 */
static int64_t region_func(struct fnp_profile *p, const struct fnp_raw_region *g)
{
    const char *file = g->file, *match = NULL;
    size_t len = strlen(file);
    for (size_t f = 0; file[0] != '/' && f < p->nfuncs; f++) {
        const char *other = p->funcs[f].key.file;
        size_t olen = strlen(other);
        if (olen > len && other[olen - len - 1] == '/' && strcmp(other + olen - len, file) == 0) {
            if (match && strcmp(match, other) != 0) {
                match = NULL;
                break;
            }
            match = other;
        }
    }
    char *copy = match ? strdup(match) : NULL; /* funcs may move while adding */
    struct fnp_key key = {.file = copy ? copy : file, .line = g->line, .name = g->name};
    int64_t f = fnp_profile_func(p, &key);
    free(copy);
    return f;
}

/* funcs[i]: the function of sites[i] (sorted, unique). */
static int name_sites(struct fnp_profile *p, const struct fnp_raw *r, const struct site *sites,
                      size_t n, uint32_t *funcs, const struct fnp_symbolizer_api *api)
{
    struct fnp_symbolizer *sym = !api ? NULL : api->kept ? api->kept : api->create(api->warn, NULL);
    if (sym && !api->kept && api->debug_dirs && api->set_debug_dirs)
        api->set_debug_dirs(sym, api->debug_dirs);
    uint64_t *elf = malloc((n ? n : 1) * sizeof(*elf));
    struct fnp_symbol *out = malloc((n ? n : 1) * sizeof(*out));
    int rc = elf && out ? 0 : -ENOMEM;
    for (size_t i = 0; i < n && !rc;) {
        size_t j = i + 1;
        while (j < n && sites[j].mod == sites[i].mod)
            j++;
        const struct fnp_raw_module *m = sites[i].mod == NO_MODULE ? NULL : &r->mods[sites[i].mod];
        for (size_t k = i; k < j; k++)
            elf[k - i] = m ? sites[k].addr - m->bias : sites[k].addr;
        if (sym && m)
            api->resolve(sym, m->path, elf, j - i, out);
        for (size_t k = i; k < j && !rc; k++) {
            int64_t f;
            uint64_t region = sites[k].addr & ~FNP_REGION_TAG;
            if (!m && (sites[k].addr & FNP_REGION_TAG) && region >= 1 && region <= r->nregions) {
                f = region_func(p, &r->regions[region - 1]);
            } else if (sym && m) {
                struct fnp_key key = {out[k - i].file, out[k - i].line, out[k - i].name};
                f = fnp_profile_func(p, &key);
            } else {
                f = address_func(p, m ? m->path : "<unknown>", elf[k - i]);
            }
            rc = f < 0 ? (int)f : 0;
            funcs[k] = (uint32_t)f;
        }
        i = j;
    }
    if (sym && !api->kept)
        api->destroy(sym);
    free(elf);
    free(out);
    return rc;
}

/*
 * Count-only mode took no timestamps. Rather than all-zero times, which snakeviz draws as
 * nothing, every call weighs one tick: a node's ticks become the calls in its subtree,
 * itself included. The model then gives tottime = a function's own calls and cumtime = the
 * calls made under it, so the charts show where the calls happen.
 */
static void count_as_ticks(struct fnp_tree_node *nodes, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        nodes[i].ticks = nodes[i].ncalls;
        nodes[i].back = 0;
    }
    for (size_t i = n; i-- > 0;)
        if (nodes[i].parent != FNP_NO_PARENT)
            nodes[nodes[i].parent].ticks += nodes[i].ticks;
}

/*
 * Beyond the node cap, calls a tree node made into the merged region past the links'
 * slack (runtime/cct.c: capped_child) had their time taken off one node of the caller's
 * function, not off the node that made them: that node's own time can come out negative
 * and the makers' too large, by at most the time of those calls. The function's own time
 * is exact, so each node of it left below zero is raised to zero with time taken from
 * the function's other nodes that have own time to give, never below zero: every node's
 * own time then lies between zero and its time less its children's, as the truth's does.
 * The self of node i is its ticks less its back and its children's ticks.
 */
static int settle_merged(struct fnp_tree_node *nodes, size_t n, size_t nfuncs)
{
    int64_t *self = malloc((n ? n : 1) * sizeof(*self));
    uint64_t *need = calloc(nfuncs ? nfuncs : 1, sizeof(*need));
    if (!self || !need) {
        free(self);
        free(need);
        return -ENOMEM;
    }
    for (size_t i = 0; i < n; i++)
        self[i] = (int64_t)(nodes[i].ticks - (uint64_t)nodes[i].back);
    for (size_t i = 0; i < n; i++)
        if (nodes[i].parent != FNP_NO_PARENT)
            self[nodes[i].parent] = (int64_t)((uint64_t)self[nodes[i].parent] - nodes[i].ticks);
    int short_ = 0;
    for (size_t i = 0; i < n; i++) {
        if (self[i] >= 0 || nodes[i].func >= nfuncs)
            continue;
        uint64_t d = 0 - (uint64_t)self[i];
        need[nodes[i].func] += d;
        nodes[i].back = (int64_t)((uint64_t)nodes[i].back - d);
        short_ = 1;
    }
    for (size_t i = 0; i < n && short_; i++) {
        uint64_t *want = nodes[i].func < nfuncs ? &need[nodes[i].func] : NULL;
        if (self[i] <= 0 || !want || !*want)
            continue;
        uint64_t take = (uint64_t)self[i] < *want ? (uint64_t)self[i] : *want;
        *want -= take;
        nodes[i].back = (int64_t)((uint64_t)nodes[i].back + take);
    }
    free(self);
    free(need);
    return 0;
}

/*
 * The forest handed to the model, in tree[1..n]. With more than one thread or more than
 * one outermost function, every outermost call hangs from one synthetic function in
 * tree[0]: snakeviz draws only the caller-less function with the largest cumtime, so
 * without it a multi-threaded run would show the main thread alone. pstats prints it as
 * {process}, the way it prints cProfile's own built-ins. Returns the first node used.
 */
static int64_t hang_roots(struct fnp_profile *p, const struct fnp_raw *r,
                          struct fnp_tree_node *tree)
{
    struct fnp_tree_node *body = tree + 1;
    int several = r->threads > 1;
    uint32_t first_root = FNP_NO_PARENT;
    for (size_t i = 0; i < r->n; i++) {
        if (body[i].parent != FNP_NO_PARENT)
            continue;
        if (first_root == FNP_NO_PARENT)
            first_root = body[i].func;
        else if (body[i].func != first_root)
            several = 1;
    }
    if (!several)
        return 1;
    struct fnp_key key = {.file = SYNTHETIC_FILE, .line = 0, .name = PROCESS_NAME};
    int64_t root = fnp_profile_func(p, &key);
    if (root < 0)
        return root;
    tree[0] = (struct fnp_tree_node){.func = (uint32_t)root, .parent = FNP_NO_PARENT, .ncalls = 1};
    for (size_t i = 0; i < r->n; i++) {
        if (body[i].parent == FNP_NO_PARENT) {
            body[i].parent = 0;
            tree[0].ticks += body[i].ticks;
        } else {
            body[i].parent++;
        }
    }
    return 0;
}

static int by_desc(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x > y ? -1 : x < y;
}

/*
 * Keeps the named forest body[0, n) as p's tree, in the run's ticks (or calls).
 * Threads are numbered from 1 in the order they first made a call: the runtime lists
 * thread states newest first, so the highest index is thread 1, normally main's.
 */
static int keep_tree(struct fnp_profile *p, const struct fnp_raw *r,
                     const struct fnp_tree_node *body)
{
    size_t n = r->n;
    struct fnp_tree_node *t = malloc((n ? n : 1) * sizeof(*t));
    uint32_t *ids = malloc((n ? n : 1) * sizeof(*ids));
    char(*names)[32] = NULL;
    const char **name_ptrs = NULL;
    int rc = -ENOMEM;
    if (!t || !ids)
        goto out;
    size_t nids = 0;
    for (size_t i = 0; i < n; i++)
        if (r->nodes[i].parent == FNP_NO_PARENT)
            ids[nids++] = r->nodes[i].thread;
    qsort(ids, nids, sizeof(*ids), by_desc);
    size_t u = 0;
    for (size_t i = 0; i < nids; i++)
        if (!u || ids[u - 1] != ids[i])
            ids[u++] = ids[i];
    names = malloc((u ? u : 1) * sizeof(*names));
    name_ptrs = malloc((u ? u : 1) * sizeof(*name_ptrs));
    if (!names || !name_ptrs)
        goto out;
    for (size_t i = 0; i < u; i++) {
        snprintf(names[i], sizeof(names[i]), "thread %zu", i + 1);
        name_ptrs[i] = names[i];
    }
    /* A root's thread is its number; fnp_tree_set gives every other node its root's. */
    memcpy(t, body, n * sizeof(*t));
    for (size_t i = 0; i < n; i++) {
        if (t[i].parent != FNP_NO_PARENT)
            continue;
        uint32_t key = r->nodes[i].thread;
        const uint32_t *hit = bsearch(&key, ids, u, sizeof(*ids), by_desc);
        t[i].thread = (uint32_t)(hit - ids); /* every root's thread is in ids */
    }
    rc = fnp_tree_set_mem(p, t, r->mem, n, r->count_only ? FNP_TREE_CALLS : FNP_TREE_TIME,
                          r->count_only ? 1.0 : r->tick_seconds, name_ptrs, u);
out:
    free(t);
    free(ids);
    free(names);
    free(name_ptrs);
    return rc;
}

int fnp_profile_build(struct fnp_profile *p, const struct fnp_raw *r,
                      const struct fnp_symbolizer_api *api)
{
    struct fnp_tree_node *tree = malloc((r->n + 1) * sizeof(*tree));
    struct site *sites = malloc((r->n ? r->n : 1) * sizeof(*sites));
    uint32_t *funcs = malloc((r->n ? r->n : 1) * sizeof(*funcs));
    int rc = tree && sites && funcs ? 0 : -ENOMEM;
    size_t nsites = 0;
    for (size_t i = 0; i < r->n && !rc; i++) {
        if (r->nodes[i].parent != FNP_NO_PARENT && r->nodes[i].parent >= i)
            rc = -EINVAL; /* parent first, or the tree's sums are wrong */
        uint64_t addr = r->nodes[i].fn & FNP_ADDR_MASK;
        sites[i] =
            (struct site){module_of(r, addr, (uint32_t)(r->nodes[i].fn >> FNP_ADDR_BITS)), addr};
    }
    if (rc)
        goto out;
    /* tree[1 + i].func temporarily holds node i's site until the sites are named. */
    for (size_t i = 0; i < r->n; i++)
        tree[1 + i] = (struct fnp_tree_node){.parent = r->nodes[i].parent,
                                             .ncalls = r->nodes[i].ncalls,
                                             .ticks = r->nodes[i].ticks,
                                             .back = r->nodes[i].back,
                                             .flags = r->nodes[i].flags};
    struct site *sorted = malloc((r->n ? r->n : 1) * sizeof(*sorted));
    if (!sorted) {
        rc = -ENOMEM;
        goto out;
    }
    memcpy(sorted, sites, r->n * sizeof(*sites));
    qsort(sorted, r->n, sizeof(*sorted), by_site);
    for (size_t i = 0; i < r->n; i++)
        if (nsites == 0 || by_site(&sorted[nsites - 1], &sorted[i]) != 0)
            sorted[nsites++] = sorted[i];
    rc = name_sites(p, r, sorted, nsites, funcs, api);
    for (size_t i = 0; i < r->n && !rc; i++) {
        const struct site *s = bsearch(&sites[i], sorted, nsites, sizeof(*sorted), by_site);
        tree[1 + i].func = funcs[s - sorted];
        if (r->func_of)
            r->func_of[i] = funcs[s - sorted];
    }
    free(sorted);
    if (rc)
        goto out;
    if (r->count_only)
        count_as_ticks(tree + 1, r->n);
    else if (r->merged && !r->mem)
        rc = settle_merged(tree + 1, r->n, p->nfuncs);
    if (!rc)
        rc = keep_tree(p, r, tree + 1);
    if (rc)
        goto out;
    int64_t first = hang_roots(p, r, tree);
    if (first < 0) {
        rc = (int)first;
        goto out;
    }
    rc = fnp_profile_add_tree(p, tree + first, r->n + 1 - (size_t)first, r->tick_seconds);
    if (!rc && r->merged) {
        char where[128], label[224];
        merged_where(where, sizeof(where), r);
        snprintf(label, sizeof(label),
                 "<fnprof: %llu calls merged %s: calling contexts below them lost>",
                 (unsigned long long)r->merged, where);
        struct fnp_key key = {.file = SYNTHETIC_FILE, .line = 0, .name = label};
        int64_t f = fnp_profile_func(p, &key);
        rc = f < 0 ? (int)f : 0;
        if (f >= 0) /* one call: readers divide by calls, and a key is a called function */
            p->funcs[f].st.ncalls = p->funcs[f].st.pcalls = 1;
    }
out:
    free(tree);
    free(sites);
    free(funcs);
    return rc;
}

static int by_key(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int fnp_profile_name_keys(struct fnp_profile *p, const struct fnp_raw *tmpl, const uint64_t *key,
                          size_t n, uint32_t *func, fnp_build_fn build, void *ctx)
{
    uint64_t *u = malloc((n ? n : 1) * sizeof(*u));
    struct fnp_raw_node *roots = calloc(n ? n : 1, sizeof(*roots));
    uint32_t *func_of = malloc((n ? n : 1) * sizeof(*func_of));
    int rc = u && roots && func_of ? 0 : -ENOMEM;
    size_t nu = 0;
    if (!rc) {
        memcpy(u, key, n * sizeof(*u));
        qsort(u, n, sizeof(*u), by_key);
        for (size_t i = 0; i < n; i++)
            if (!nu || u[nu - 1] != u[i])
                u[nu++] = u[i];
        for (size_t i = 0; i < nu; i++)
            roots[i] = (struct fnp_raw_node){.fn = u[i], .parent = FNP_NO_PARENT, .ncalls = 1};
        struct fnp_raw r = *tmpl;
        r.nodes = roots;
        r.n = nu;
        r.threads = 1;
        r.func_of = func_of;
        r.merged = 0;
        r.count_only = 0;
        rc = build(p, &r, ctx);
    }
    for (size_t i = 0; i < n && !rc; i++) {
        const uint64_t *hit = bsearch(&key[i], u, nu, sizeof(*u), by_key);
        func[i] = func_of[hit - u];
    }
    free(u);
    free(roots);
    free(func_of);
    return rc;
}
