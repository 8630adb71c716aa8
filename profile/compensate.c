/* SPDX-License-Identifier: MIT */
/*
 * Compensation: the hooks' own cost taken out of a profile's times, so that they predict
 * the program built without instrumentation (docs/compensation.md).
 *
 * A hook pair costs in_ns inside the measured interval of the call it brackets (from the
 * enter hook's clock reading to the body, and from the body to the exit hook's reading)
 * and out_ns outside it, which the caller's interval holds. So a calling context's own
 * time holds its calls' in_ns and its children's calls' out_ns: per context,
 *     own' = own - ncalls * in - (calls of its children) * out,    never below 0,
 * and a context's time under it (ticks) is rebuilt from the own' of its subtree. This is
 * arithmetic on the tree alone, done once by whoever holds the tree: the runtime's dump
 * (PROF_COMPENSATE=1) and the command (report and convert --compensate) call the same
 * function on the same tree, with the calibration read back from the same metadata text.
 *
 * The dict then follows the tree: cProfile's numbers of the raw tree and of the
 * compensated one (model.c, which keeps the recursion rules in one place) differ by what
 * compensation took; that difference is applied to the dict, so that a dict the tree
 * explains exactly becomes exactly the compensated tree's numbers, and whatever the tree
 * does not explain (a merge's label, a sum of runs each clamped apart) stays as it was.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"

#define PROCESS_FILE "~"
#define PROCESS_NAME "<process>"

int fnp_calibration_put(struct fnp_profile *p, double in_ns, double out_ns)
{
    if (!(in_ns >= 0 && in_ns <= FNP_HOOK_MAX_NS && out_ns >= 0 && out_ns <= FNP_HOOK_MAX_NS))
        return -EINVAL;
    char in[32], out[32];
    snprintf(in, sizeof(in), "%.3f", in_ns);
    snprintf(out, sizeof(out), "%.3f", out_ns);
    int rc = fnp_profile_set_meta(p, FNP_META_HOOK_IN, in);
    if (!rc)
        rc = fnp_profile_set_meta(p, FNP_META_HOOK_OUT, out);
    return rc;
}

/* A cost in ns as fnp_calibration_put writes it: digits, a point, digits; nothing else
 * (no sign, exponent, nan or inf that strtod would take), within FNP_HOOK_MAX_NS. */
static int parse_ns(const char *s, double *out)
{
    size_t i = 0, digits = 0, point = 0;
    for (; s[i]; i++) {
        if (s[i] >= '0' && s[i] <= '9')
            digits++;
        else if (s[i] == '.' && !point)
            point = 1;
        else
            return -EINVAL;
    }
    if (!digits || i > 24)
        return -EINVAL;
    double v = strtod(s, NULL);
    if (!(v >= 0 && v <= FNP_HOOK_MAX_NS))
        return -EINVAL;
    *out = v;
    return 0;
}

int fnp_calibration_get(const struct fnp_profile *p, struct fnp_hook_cost *ns)
{
    const char *in = fnp_profile_meta(p, FNP_META_HOOK_IN);
    const char *out = fnp_profile_meta(p, FNP_META_HOOK_OUT);
    if (!in && !out)
        return -ENOENT;
    if (!in || !out || parse_ns(in, &ns->in) || parse_ns(out, &ns->out))
        return -EINVAL;
    return 0;
}

static int by_func(const void *a, const void *b, void *t_)
{
    const struct fnp_tree_node *t = t_;
    uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
    if (t[i].func != t[j].func)
        return t[i].func < t[j].func ? -1 : 1;
    return i < j ? -1 : i > j; /* a function's nodes in tree order: one result */
}

/*
 * A folded recursion (runtime/cct.c) counts the calls its link took as calls of the link's
 * target, a child of a node that did not make them (the target's tree parent, whose back
 * is negative: it gave their time back); the node that made them (the link's parent, back
 * positive) is a node of the same function. So the caller's share of those calls is taken
 * off the wrong one of two nodes of one function: the function's time is right, but the
 * first node can go below 0 and the second keep too much. Here the first is raised to 0
 * from the second, never below 0 itself. Nodes with no back are not touched: their own
 * time is theirs. 0 or -ENOMEM.
 */
static int settle(const struct fnp_tree_node *t, size_t n, int64_t *own)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        m += t[i].back != 0;
    if (!m)
        return 0;
    uint32_t *idx = malloc(m * sizeof(*idx));
    if (!idx)
        return -ENOMEM;
    m = 0;
    for (size_t i = 0; i < n; i++)
        if (t[i].back != 0)
            idx[m++] = (uint32_t)i;
    qsort_r(idx, m, sizeof(*idx), by_func, (void *)t);
    for (size_t a = 0, b; a < m; a = b) {
        uint64_t need = 0;
        for (b = a; b < m && t[idx[b]].func == t[idx[a]].func; b++)
            if (t[idx[b]].back < 0 && own[idx[b]] < 0) {
                /* saturating: a crafted file's deficits must not wrap */
                uint64_t d = (uint64_t)-own[idx[b]], cap = INT64_MAX / 2;
                need = need > cap - (d < cap ? d : cap) ? cap : need + d;
                own[idx[b]] = 0;
            }
        uint64_t gave = 0;
        for (size_t k = a; k < b && gave < need; k++) {
            int64_t *o = &own[idx[k]];
            if (t[idx[k]].back > 0 && *o > 0) {
                uint64_t take = (uint64_t)*o < need - gave ? (uint64_t)*o : need - gave;
                *o -= (int64_t)take;
                gave += take;
            }
        }
        /* what no node could give stays a deficit, on the first node that had one */
        for (size_t k = a; k < b && gave < need; k++)
            if (t[idx[k]].back < 0 && own[idx[k]] == 0) {
                own[idx[k]] = -(int64_t)(need - gave);
                break;
            }
    }
    free(idx);
    return 0;
}

int fnp_tree_compensate(struct fnp_tree_node *t, size_t n, double in, double out,
                        struct fnp_compensated *r)
{
    memset(r, 0, sizeof(*r));
    if (!(in >= 0 && out >= 0 && isfinite(in) && isfinite(out)))
        return -EINVAL;
    for (size_t i = 0; i < n; i++)
        if (t[i].parent != FNP_NO_PARENT && t[i].parent >= i)
            return -EINVAL;
    /* own[i]: the node's own ticks (ticks - back - children's ticks), signed while the
     * children subtract; kids[i]: the calls its children took. Sums wrap (own) or
     * saturate (kids), as model.c's do: a hostile file may hold any numbers. */
    int64_t *own = malloc((n ? n : 1) * sizeof(*own));
    uint64_t *kids = calloc(n ? n : 1, sizeof(*kids));
    if (!own || !kids) {
        free(own);
        free(kids);
        return -ENOMEM;
    }
    for (size_t i = 0; i < n; i++)
        own[i] = (int64_t)(t[i].ticks - (uint64_t)t[i].back);
    for (size_t i = 0; i < n; i++) {
        uint32_t up = t[i].parent;
        if (up == FNP_NO_PARENT)
            continue;
        own[up] = (int64_t)((uint64_t)own[up] - t[i].ticks);
        kids[up] = fnp_sat_add(kids[up], t[i].ncalls);
    }
    /* The new own time of each node, signed: a folded recursion may leave one below 0,
     * which settle() makes up from its function's other nodes. */
    double *cut = malloc((n ? n : 1) * sizeof(*cut));
    if (!cut) {
        free(own);
        free(kids);
        return -ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        cut[i] = (double)t[i].ncalls * in + (double)kids[i] * out;
        double left = (double)own[i] - cut[i];
        /* past +-9e18 only in a crafted file: kept in range, as it was */
        if (left > -9e18 && left < 9e18)
            own[i] = left >= 0 ? (int64_t)(left + 0.5) : -(int64_t)(0.5 - left);
        else if (left <= -9e18)
            own[i] = INT64_MIN / 2;
    }
    if (settle(t, n, own)) {
        free(cut);
        free(own);
        free(kids);
        return -ENOMEM;
    }
    /* What is still below 0 is clamped: the hook cost that could not be taken off is
     * counted, not the clock's noise a context had before (own already below 0). */
    double not_taken = 0;
    for (size_t i = 0; i < n; i++) {
        if (own[i] < 0) {
            r->clamped++;
            not_taken += (double)-own[i] < cut[i] ? (double)-own[i] : cut[i];
            own[i] = 0;
        }
        kids[i] = 0;
    }
    free(cut);
    /* Ticks from the subtree's own times: children come after their parent, so a backward
     * pass has every child's before its parent's; kids[] sums the children's new ticks. */
    for (size_t i = n; i-- > 0;) {
        uint64_t ticks = (uint64_t)own[i] + (uint64_t)t[i].back + kids[i];
        /* Below 0 only for a back no real run makes (a crafted file): a tick count is never
         * negative. */
        if ((int64_t)ticks < 0)
            ticks = 0;
        t[i].ticks = ticks;
        if (t[i].parent != FNP_NO_PARENT)
            kids[t[i].parent] += ticks;
    }
    r->contexts = n;
    r->not_taken = not_taken < 1.8e19 ? (uint64_t)(not_taken + 0.5) : UINT64_MAX;
    free(own);
    free(kids);
    return 0;
}

int fnp_key_is_process(const struct fnp_key *k)
{
    return k->line == 0 && !strcmp(k->file, PROCESS_FILE) && !strcmp(k->name, PROCESS_NAME);
}

int fnp_profile_add_rooted(struct fnp_profile *q, const struct fnp_tree_node *t, size_t n,
                           double tick_seconds, int64_t proc, uint64_t ncalls)
{
    if (proc < 0)
        return fnp_profile_add_tree(q, t, n, tick_seconds);
    struct fnp_tree_node *all = malloc((n + 1) * sizeof(*all));
    if (!all)
        return -ENOMEM;
    all[0] =
        (struct fnp_tree_node){.func = (uint32_t)proc, .parent = FNP_NO_PARENT, .ncalls = ncalls};
    for (size_t i = 0; i < n; i++) {
        all[i + 1] = t[i];
        if (t[i].parent == FNP_NO_PARENT) {
            all[i + 1].parent = 0;
            all[0].ticks = fnp_sat_add(all[0].ticks, t[i].ticks);
        } else {
            all[i + 1].parent = t[i].parent + 1;
        }
    }
    int rc = fnp_profile_add_tree(q, all, n + 1, tick_seconds);
    free(all);
    return rc;
}

/* The function ('~', 0, '<process>') the dump hangs a run's outermost calls from when there
 * are several (build.c: hang_roots), or -1: it has no node in the tree, so its numbers
 * are worked out from the roots, as the dump did. */
static int64_t process_func(const struct fnp_profile *p)
{
    for (size_t f = 0; f < p->nfuncs; f++)
        if (fnp_key_is_process(&p->funcs[f].key))
            return (int64_t)f;
    return -1;
}

/* cProfile's numbers of the forest t[0, n) into q, a profile with p's functions but no
 * keys: below one synthetic root of function proc when proc >= 0. */
static int tree_numbers(const struct fnp_profile *p, const struct fnp_tree_node *t, size_t n,
                        int64_t proc, struct fnp_profile *q)
{
    fnp_profile_init(q);
    q->funcs = calloc(p->nfuncs ? p->nfuncs : 1, sizeof(*q->funcs));
    if (!q->funcs)
        return -ENOMEM;
    q->nfuncs = q->funcs_cap = p->nfuncs;
    return fnp_profile_add_rooted(q, t, n, p->tick_seconds, proc, 1);
}

/* The dict's figure once the tree's moved from raw to comp: the compensated figure itself
 * when the dict is exactly the raw tree's (the dump's own profile, or one read back),
 * else the dict moved by as much, never below 0. */
static double moved(double dict, double raw, double comp)
{
    if (dict == raw)
        return comp;
    double v = dict + (comp - raw);
    return v > 0 && isfinite(v) ? v : v > 0 ? dict : 0.0;
}

static void move_stats(struct fnp_stats *d, const struct fnp_stats *raw,
                       const struct fnp_stats *comp)
{
    d->tottime = moved(d->tottime, raw->tottime, comp->tottime);
    d->cumtime = moved(d->cumtime, raw->cumtime, comp->cumtime);
}

/* What compensation changes in p, kept to be put back should the result be refused. */
struct kept {
    struct fnp_stats *funcs, *edges;
    uint64_t *ticks;
};

static int keep(const struct fnp_profile *p, struct kept *k)
{
    k->funcs = malloc((p->nfuncs ? p->nfuncs : 1) * sizeof(*k->funcs));
    k->edges = malloc((p->nedges ? p->nedges : 1) * sizeof(*k->edges));
    k->ticks = malloc((p->ntree ? p->ntree : 1) * sizeof(*k->ticks));
    if (!k->funcs || !k->edges || !k->ticks)
        return -ENOMEM;
    for (size_t f = 0; f < p->nfuncs; f++)
        k->funcs[f] = p->funcs[f].st;
    for (size_t e = 0; e < p->nedges; e++)
        k->edges[e] = p->edges[e].st;
    for (size_t i = 0; i < p->ntree; i++)
        k->ticks[i] = p->tree[i].ticks;
    return 0;
}

static void put_back(struct fnp_profile *p, const struct kept *k)
{
    for (size_t f = 0; f < p->nfuncs; f++)
        p->funcs[f].st = k->funcs[f];
    for (size_t e = 0; e < p->nedges; e++)
        p->edges[e].st = k->edges[e];
    for (size_t i = 0; i < p->ntree; i++)
        p->tree[i].ticks = k->ticks[i];
}

/* The metadata saying what was done, in p; 0 or -ENOMEM (then neither is set). */
static int note(struct fnp_profile *p, const struct fnp_hook_cost *ns,
                const struct fnp_compensated *r)
{
    char text[320], clamped[24];
    snprintf(text, sizeof(text),
             "%.3f ns a call taken off the callee's time and %.3f ns off its caller's; "
             "%llu of %llu calling contexts clamped at 0 (%.9f s of hook cost not taken off)",
             ns->in, ns->out, (unsigned long long)r->clamped, (unsigned long long)r->contexts,
             (double)r->not_taken * p->tick_seconds);
    snprintf(clamped, sizeof(clamped), "%llu", (unsigned long long)r->clamped);
    int rc = fnp_profile_set_meta(p, FNP_META_COMPENSATED, text);
    if (!rc && (rc = fnp_profile_set_meta(p, FNP_META_CLAMPED, clamped)))
        fnp_profile_del_meta(p, FNP_META_COMPENSATED);
    return rc;
}

int fnp_profile_compensate(struct fnp_profile *p, struct fnp_compensated *r)
{
    struct fnp_compensated unused;
    if (!r)
        r = &unused;
    memset(r, 0, sizeof(*r));
    if (fnp_profile_meta(p, FNP_META_COMPENSATED))
        return -EALREADY;
    if (p->tree_kind != FNP_TREE_TIME || p->mem || !(p->tick_seconds > 0))
        return -ENOTSUP;
    struct fnp_hook_cost ns;
    int rc = fnp_calibration_get(p, &ns);
    if (rc)
        return rc;
    size_t n = p->ntree;
    /* Past 2^62 ticks (146 years at 1 ns) a tree holds no run's times, only a crafted file's
     * or sums that saturated: its dict was never held to it (tree_read.c), and would not
     * follow it. */
    for (size_t i = 0; i < n; i++) {
        uint64_t back =
            p->tree[i].back < 0 ? 0 - (uint64_t)p->tree[i].back : (uint64_t)p->tree[i].back;
        if (p->tree[i].ticks >= UINT64_C(1) << 62 || back >= UINT64_C(1) << 62)
            return -ERANGE;
    }
    struct fnp_tree_node *t = malloc((n ? n : 1) * sizeof(*t));
    if (!t)
        return -ENOMEM;
    if (n)
        memcpy(t, p->tree, n * sizeof(*t));
    /* ns to the tree's ticks: the same double arithmetic wherever it runs */
    double in = ns.in * 1e-9 / p->tick_seconds, out = ns.out * 1e-9 / p->tick_seconds;
    if (!isfinite(in) || !isfinite(out)) {
        free(t);
        return -ERANGE; /* a tick no clock has (a crafted file): no cost in ticks */
    }
    struct fnp_profile raw, comp;
    fnp_profile_init(&raw);
    fnp_profile_init(&comp);
    struct kept was = {0};
    int64_t proc = process_func(p);
    double tree_s, dict_s;
    /* Whether the dict follows the tree now, as the reader holds every file to (any run's
     * file does): if so, it must still once compensated, or the file would not read back. */
    int followed = fnp_tree_dict_gap(p, p->nfuncs, &tree_s, &dict_s);
    rc = followed < 0 ? followed : fnp_tree_compensate(t, n, in, out, r);
    if (!rc)
        rc = tree_numbers(p, p->tree, n, proc, &raw);
    if (!rc)
        rc = tree_numbers(p, t, n, proc, &comp);
    if (!rc)
        rc = keep(p, &was);
    if (rc)
        goto out;
    for (size_t f = 0; f < p->nfuncs; f++)
        move_stats(&p->funcs[f].st, &raw.funcs[f].st, &comp.funcs[f].st);
    for (size_t e = 0; e < raw.nedges; e++) {
        const struct fnp_edge *x = &raw.edges[e];
        int64_t c = fnp_profile_find_edge(&comp, x->caller, x->callee);
        int64_t d = fnp_profile_find_edge(p, x->caller, x->callee);
        if (c >= 0 && d >= 0)
            move_stats(&p->edges[d].st, &x->st, &comp.edges[c].st);
    }
    for (size_t i = 0; i < n; i++)
        p->tree[i].ticks = t[i].ticks;
    /* A dict that followed its raw tree only within the sums' slack (a hand-made or
     * edited file, never a run's) can part from the smaller compensated one. */
    if (followed == 0 && (rc = fnp_tree_dict_gap(p, p->nfuncs, &tree_s, &dict_s)) != 0)
        rc = rc < 0 ? rc : -EDOM;
    if (!rc)
        rc = note(p, &ns, r);
    if (rc)
        put_back(p, &was); /* p changes whole or not at all */
out:
    free(was.funcs);
    free(was.edges);
    free(was.ticks);
    fnp_profile_free(&raw);
    fnp_profile_free(&comp);
    free(t);
    return rc;
}

const char *fnp_compensate_strerror(int rc)
{
    switch (rc) {
    case -EALREADY:
        return "already compensated (its metadata has " FNP_META_COMPENSATED ")";
    case -ENOTSUP:
        return "no times to compensate (a count-only or memory profile, or no calling-context "
               "tree: a file from CPython or an older fnprof)";
    case -ENOENT:
        return "no calibration of the hooks in its metadata (" FNP_META_HOOK_IN
               ", " FNP_META_HOOK_OUT
               "): written by CPython, by an older fnprof, or by a run that could not calibrate";
    case -EINVAL:
        return "its calibration (" FNP_META_HOOK_IN ", " FNP_META_HOOK_OUT
               ") is not two costs in ns";
    case -ERANGE:
        return "its times are out of range (ticks past 2^62, or a tick shorter than any "
               "clock's)";
    case -EDOM:
        return "its functions' times follow its calling-context tree only roughly (a "
               "hand-made or edited file): compensated, they would part from it";
    default:
        return strerror(-rc);
    }
}
