/* SPDX-License-Identifier: MIT */
/*
 * Loading a pstats file (docs/pstats.md) into the profile model:
 *   {(file, line, name): (pcalls, ncalls, tottime, cumtime, {caller key: (ncalls, pcalls,
 *    tottime, cumtime)})}
 * The function tuple puts primitive calls first, the edge tuple the total first.
 *
 * marshal_read.c has already bounded and decoded the bytes; this file only judges the
 * shape. Two passes over the top-level dict: every top-level key first, so that function
 * indices follow the file's order (the order pstats sorts ties in), then the callers,
 * whose keys are then nearly all known. Everything goes into a profile of its own, which
 * replaces or is merged into the caller's only once the whole file has passed.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"

#define NO_PAIR UINT32_MAX

struct loader {
    const struct fnp_marshal_doc *d;
    struct fnp_profile p;
    uint32_t *func_of; /* per value: function index + 1 of a key tuple already resolved */
    char *buf;         /* the current key's strings, as UTF-8: file NUL name NUL */
    size_t cap;
    char *why;
    size_t whylen;
};

#define NO_FUNC UINT32_MAX

static const char *key_text(const struct fnp_key *k, char *out, size_t n);

/* "offset N: [a.c:3(f): [caller b.c:9(g): ]]what": the function (and caller) whose entry
 * was wrong, named only when failing, so that reading stays cheap. */
static int vfail_in(struct loader *ld, uint32_t val, uint32_t func, uint32_t caller,
                    const char *fmt, va_list ap)
{
    if (!ld->why || !ld->whylen)
        return -EINVAL;
    char kt[160], ct[160];
    int n;
    if (func == NO_FUNC)
        n = snprintf(ld->why, ld->whylen, "offset %lu: ", (unsigned long)ld->d->vals[val].off);
    else if (caller == NO_FUNC)
        n = snprintf(ld->why, ld->whylen, "offset %lu: %s: ", (unsigned long)ld->d->vals[val].off,
                     key_text(&ld->p.funcs[func].key, kt, sizeof(kt)));
    else
        n = snprintf(ld->why, ld->whylen,
                     "offset %lu: %s: caller %s: ", (unsigned long)ld->d->vals[val].off,
                     key_text(&ld->p.funcs[func].key, kt, sizeof(kt)),
                     key_text(&ld->p.funcs[caller].key, ct, sizeof(ct)));
    if (n >= 0 && (size_t)n < ld->whylen)
        vsnprintf(ld->why + n, ld->whylen - (size_t)n, fmt, ap);
    fnp_marshal_one_line(ld->why);
    return -EINVAL;
}

static int fail_in(struct loader *ld, uint32_t val, uint32_t func, uint32_t caller, const char *fmt,
                   ...) __attribute__((format(printf, 5, 6)));

static int fail_in(struct loader *ld, uint32_t val, uint32_t func, uint32_t caller, const char *fmt,
                   ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = vfail_in(ld, val, func, caller, fmt, ap);
    va_end(ap);
    return rc;
}

static int fail(struct loader *ld, uint32_t val, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(struct loader *ld, uint32_t val, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = vfail_in(ld, val, NO_FUNC, NO_FUNC, fmt, ap);
    va_end(ap);
    return rc;
}

static int oom(struct loader *ld)
{
    if (ld->why && ld->whylen)
        snprintf(ld->why, ld->whylen, "out of memory");
    return -ENOMEM;
}

static const struct fnp_mval *val(const struct loader *ld, uint32_t i)
{
    return &ld->d->vals[i];
}

/* "a tuple", "an int": what value i is, for messages. */
static const char *kind_of(const struct loader *ld, uint32_t i)
{
    static const char *const names[] = {
        [FNP_MVAL_NONE] = "None",
        [FNP_MVAL_BOOL] = "a bool",
        [FNP_MVAL_ELLIPSIS] = "Ellipsis",
        [FNP_MVAL_STOPITER] = "StopIteration",
        [FNP_MVAL_INT] = "an int",
        [FNP_MVAL_FLOAT] = "a float",
        [FNP_MVAL_COMPLEX] = "a complex",
        [FNP_MVAL_BYTES] = "a bytes",
        [FNP_MVAL_STR] = "a str",
        [FNP_MVAL_TUPLE] = "a tuple",
        [FNP_MVAL_LIST] = "a list",
        [FNP_MVAL_SET] = "a set",
        [FNP_MVAL_FROZENSET] = "a frozenset",
        [FNP_MVAL_DICT] = "a dict",
    };
    unsigned k = val(ld, i)->kind;
    return k < sizeof(names) / sizeof(names[0]) && names[k] ? names[k] : "an unknown value";
}

static uint32_t item(const struct loader *ld, uint32_t tuple, uint32_t i)
{
    return ld->d->items[val(ld, tuple)->v.first + i];
}

static int is_tuple(const struct loader *ld, uint32_t i, uint32_t n)
{
    return val(ld, i)->kind == FNP_MVAL_TUPLE && val(ld, i)->n == n;
}

/* "a 4-tuple" for a tuple, else what the value is. */
static const char *tuple_size(const struct loader *ld, uint32_t i, char *out, size_t n)
{
    if (val(ld, i)->kind != FNP_MVAL_TUPLE)
        return kind_of(ld, i);
    snprintf(out, n, "a %lu-tuple", (unsigned long)val(ld, i)->n);
    return out;
}

/* "a.c:3(f)" for messages; strings are cut short, a message is one line. */
static const char *key_text(const struct fnp_key *k, char *out, size_t n)
{
    snprintf(out, n, "%.60s:%lu(%.60s)", k->file, (unsigned long)k->line, k->name);
    return out;
}

/* Appends str value i to ld->buf at *at as UTF-8 with a NUL: Latin-1 (the 'a' and 'z'
 * codes) widens to at most 2 bytes a character. */
static int append_str(struct loader *ld, uint32_t i, size_t *at, const char *what)
{
    const struct fnp_mval *v = val(ld, i);
    if (v->kind != FNP_MVAL_STR)
        return fail(ld, i, "key %s is %s, not a str", what, kind_of(ld, i));
    const unsigned char *s = ld->d->data + v->v.u;
    size_t need = *at + 2 * (size_t)v->n + 1;
    if (need > ld->cap) {
        size_t cap = ld->cap ? ld->cap : 256;
        while (cap < need)
            cap *= 2;
        char *b = realloc(ld->buf, cap);
        if (!b)
            return oom(ld);
        ld->buf = b;
        ld->cap = cap;
    }
    char *o = ld->buf + *at;
    for (uint32_t k = 0; k < v->n; k++) {
        /* The model keeps C strings: a NUL would silently merge distinct keys. */
        if (!s[k])
            return fail(ld, i, "key %s has a NUL character", what);
        if ((v->flags & FNP_MVAL_LATIN1) && s[k] >= 0x80) {
            *o++ = (char)(0xc0 | s[k] >> 6);
            *o++ = (char)(0x80 | (s[k] & 0x3f));
        } else {
            *o++ = (char)s[k];
        }
    }
    *o++ = '\0';
    *at = (size_t)(o - ld->buf);
    return 0;
}

static int get_count(struct loader *ld, uint32_t i, uint32_t func, uint32_t caller,
                     const char *what, uint64_t *out)
{
    const struct fnp_mval *v = val(ld, i);
    if (v->kind != FNP_MVAL_INT)
        return fail_in(ld, i, func, caller, "%s is %s, not an int", what, kind_of(ld, i));
    if ((v->flags & FNP_MVAL_NEGATIVE) && v->v.u)
        return fail_in(ld, i, func, caller, "%s is negative (-%llu)", what,
                       (unsigned long long)v->v.u);
    *out = v->v.u;
    return 0;
}

/* Times are floats; an int (0, say, from a hand-made file) is taken as what Python would
 * add. Non-finite or negative times are refused: docs/pstats.md says viewers break on them, and
 * the writer would silently clamp them. */
static int get_time(struct loader *ld, uint32_t i, uint32_t func, uint32_t caller, const char *what,
                    double *out)
{
    const struct fnp_mval *v = val(ld, i);
    double t;
    if (v->kind == FNP_MVAL_FLOAT) {
        t = v->v.d;
    } else if (v->kind == FNP_MVAL_INT) {
        t = (v->flags & FNP_MVAL_NEGATIVE) ? -(double)v->v.u : (double)v->v.u;
    } else {
        return fail_in(ld, i, func, caller, "%s is %s, not a float", what, kind_of(ld, i));
    }
    if (!isfinite(t))
        return fail_in(ld, i, func, caller, "%s is not finite (%g)", what, t);
    if (t < 0)
        return fail_in(ld, i, func, caller, "%s is negative (%g)", what, t);
    *out = t;
    return 0;
}

/* The function index of key tuple i, added if new. *added tells a new one from a known one;
 * a key read once and referenced many times (CPython does that) is resolved once. */
static int resolve_key(struct loader *ld, uint32_t i, const char *role, uint32_t *func, int *added)
{
    *added = 0;
    if (ld->func_of[i]) {
        *func = ld->func_of[i] - 1;
        return 0;
    }
    if (!is_tuple(ld, i, 3)) {
        const struct fnp_mval *v = val(ld, i);
        if (v->kind == FNP_MVAL_TUPLE)
            return fail(ld, i, "%s is a %lu-tuple, not a 3-tuple (file, line, name)", role,
                        (unsigned long)v->n);
        return fail(ld, i, "%s is %s, not a 3-tuple (file, line, name)", role, kind_of(ld, i));
    }
    size_t at = 0;
    int rc = append_str(ld, item(ld, i, 0), &at, "file name");
    size_t name_at = at;
    if (!rc)
        rc = append_str(ld, item(ld, i, 2), &at, "function name");
    if (rc)
        return rc;
    uint32_t li = item(ld, i, 1);
    const struct fnp_mval *lv = val(ld, li);
    if (lv->kind != FNP_MVAL_INT)
        return fail(ld, li, "key line number is %s, not an int", kind_of(ld, li));
    if ((lv->flags & FNP_MVAL_NEGATIVE && lv->v.u) || lv->v.u > UINT32_MAX)
        return fail(ld, li, "key line number %s%llu is out of range",
                    lv->flags & FNP_MVAL_NEGATIVE ? "-" : "", (unsigned long long)lv->v.u);
    struct fnp_key key = {ld->buf, (uint32_t)lv->v.u, ld->buf + name_at};
    size_t before = ld->p.nfuncs;
    int64_t f = fnp_profile_func(&ld->p, &key);
    if (f < 0)
        return f == -ENOMEM ? oom(ld) : fail(ld, i, "cannot add the function");
    *func = (uint32_t)f;
    *added = ld->p.nfuncs != before;
    ld->func_of[i] = *func + 1;
    return 0;
}

static int get_stats(struct loader *ld, uint32_t tuple, uint32_t func, uint32_t caller,
                     struct fnp_stats *st)
{
    /* The function's tuple is (pcalls, ncalls, ...), an edge's (ncalls, pcalls, ...). */
    int edge = caller != NO_FUNC;
    int rc = get_count(ld, item(ld, tuple, 0), func, caller, edge ? "ncalls" : "pcalls",
                       edge ? &st->ncalls : &st->pcalls);
    if (!rc)
        rc = get_count(ld, item(ld, tuple, 1), func, caller, edge ? "pcalls" : "ncalls",
                       edge ? &st->pcalls : &st->ncalls);
    if (!rc)
        rc = get_time(ld, item(ld, tuple, 2), func, caller, "tottime", &st->tottime);
    if (!rc)
        rc = get_time(ld, item(ld, tuple, 3), func, caller, "cumtime", &st->cumtime);
    return rc;
}

static int load_function(struct loader *ld, const struct fnp_mpair *pair)
{
    uint32_t f;
    int added;
    int rc = resolve_key(ld, pair->key, "key", &f, &added);
    if (rc)
        return rc;
    char tn[32];
    /* In this pass every function so far came from a top-level key: known means twice. */
    if (!added)
        return fail_in(ld, pair->key, f, NO_FUNC, "the key appears twice");
    uint32_t v = pair->val;
    if (!is_tuple(ld, v, 5))
        return fail_in(ld, v, f, NO_FUNC,
                       "value is %s, not a 5-tuple (pcalls, ncalls, tottime, cumtime, callers)",
                       tuple_size(ld, v, tn, sizeof(tn)));
    struct fnp_stats st;
    rc = get_stats(ld, v, f, NO_FUNC, &st);
    if (rc)
        return rc;
    uint32_t callers = item(ld, v, 4);
    if (val(ld, callers)->kind != FNP_MVAL_DICT)
        return fail_in(ld, callers, f, NO_FUNC, "callers is %s, not a dict", kind_of(ld, callers));
    ld->p.funcs[f].st = st;
    return 0;
}

static int load_edge(struct loader *ld, uint32_t callee, const struct fnp_mpair *pair)
{
    uint32_t caller;
    int added;
    int rc = resolve_key(ld, pair->key, "caller key", &caller, &added);
    if (rc)
        return rc;
    char tn[32];
    uint32_t v = pair->val;
    if (val(ld, v)->kind == FNP_MVAL_INT)
        return fail_in(ld, v, callee, caller,
                       "value is an int: that is the pure-Python profile module's format; "
                       "only cProfile's (ncalls, pcalls, tottime, cumtime) is read");
    if (!is_tuple(ld, v, 4))
        return fail_in(ld, v, callee, caller,
                       "value is %s, not a 4-tuple (ncalls, pcalls, tottime, cumtime)",
                       tuple_size(ld, v, tn, sizeof(tn)));
    struct fnp_stats st;
    rc = get_stats(ld, v, callee, caller, &st);
    if (rc)
        return rc;
    size_t before = ld->p.nedges;
    int64_t e = fnp_profile_edge(&ld->p, caller, callee);
    if (e < 0)
        return e == -ENOMEM ? oom(ld) : fail_in(ld, pair->key, callee, caller, "cannot add it");
    /* One callee's callers dict is the only place this edge can come from. */
    if (ld->p.nedges == before)
        return fail_in(ld, pair->key, callee, caller, "the caller appears twice");
    ld->p.edges[e].st = st;
    return 0;
}

static int load(struct loader *ld)
{
    const struct fnp_marshal_doc *d = ld->d;
    uint32_t root = d->root;
    if (val(ld, root)->kind != FNP_MVAL_DICT)
        return fail(ld, root, "the file holds %s, not a dict: not a pstats file",
                    kind_of(ld, root));
    if (!val(ld, root)->n)
        return fail(ld, root, "empty dict: a profile of no function (pstats refuses it too)");
    /* A tree's magic, or the start of one (a file cut short there): the tree reader says. */
    size_t after = d->len - d->end;
    int tree = after && !memcmp(d->data + d->end, FNP_TREE_MAGIC, after < 8 ? after : 8);
    if (d->end != d->len && !tree)
        return fail(ld, root, "%zu bytes follow the dict: not a pstats file", d->len - d->end);
    for (uint32_t pi = val(ld, root)->v.first; pi != NO_PAIR; pi = d->pairs[pi].next) {
        int rc = load_function(ld, &d->pairs[pi]);
        if (rc)
            return rc;
    }
    for (uint32_t pi = val(ld, root)->v.first; pi != NO_PAIR; pi = d->pairs[pi].next) {
        uint32_t callee = ld->func_of[d->pairs[pi].key] - 1;
        uint32_t callers = item(ld, d->pairs[pi].val, 4);
        for (uint32_t ci = val(ld, callers)->v.first; ci != NO_PAIR; ci = d->pairs[ci].next) {
            int rc = load_edge(ld, callee, &d->pairs[ci]);
            if (rc)
                return rc;
        }
    }
    if (!tree)
        return 0;
    int rc = fnp_tree_read(&ld->p, val(ld, root)->n, d->data, d->end, d->data + d->end,
                           d->len - d->end, ld->why, ld->whylen);
    /* The tick is the one field of the trailer that multiplies every time: held to the
     * dict's times, whatever the trailer's version (36: its offset in the header). */
    if (!rc)
        rc = fnp_tree_check_dict(&ld->p, val(ld, root)->n, d->end + 36, ld->why, ld->whylen);
    return rc == -ENOMEM ? oom(ld) : rc;
}

int fnp_pstats_read(struct fnp_profile *p, const void *data, size_t len, char *why, size_t whylen)
{
    struct fnp_marshal_doc d;
    int rc = fnp_marshal_read(&d, data, len, why, whylen);
    if (rc)
        return rc;
    struct loader ld = {.d = &d, .why = why, .whylen = whylen};
    fnp_profile_init(&ld.p);
    ld.func_of = calloc(d.nvals, sizeof(*ld.func_of));
    rc = ld.func_of ? load(&ld) : oom(&ld);
    free(ld.func_of);
    free(ld.buf);
    fnp_marshal_doc_free(&d);
    if (!rc) {
        if (!p->nfuncs && !p->nedges) {
            fnp_profile_free(p);
            *p = ld.p;
            return 0;
        }
        rc = fnp_profile_merge(p, &ld.p);
        if (rc)
            oom(&ld);
    }
    fnp_profile_free(&ld.p);
    return rc;
}
