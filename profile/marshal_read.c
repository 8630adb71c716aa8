/* SPDX-License-Identifier: MIT */
/*
 * Reading Python's marshal format into a flat tree of values (pstats_read.h).
 *
 * The input is untrusted (fnprof report runs on files from anywhere, and is fuzzed), so:
 * every length is checked against the bytes left before anything is allocated for it, so
 * memory stays proportional to the input; nesting is bounded; a reference may only name an
 * object already read whole. Type codes and reference numbering follow CPython's
 * Python/marshal.c r_object(): an object whose type byte has 0x80 set gets the next
 * reference number when its type byte is read (containers before their items, pre-order);
 * None, True, False, Ellipsis, StopIteration and references themselves never get one, even
 * when flagged, since CPython ignores the flag there.
 */
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"

#define FLAG_REF 0x80
#define NO_PAIR UINT32_MAX

struct reader {
    struct fnp_marshal_doc *d;
    const unsigned char *p;
    size_t len, pos;
    size_t pending; /* item slots reserved by open sequences and not yet read */
    unsigned depth;
    char *why;
    size_t whylen;
    locale_t c_locale; /* for text floats ('f', 'x'), made on first use */
};

static int fail(struct reader *r, size_t off, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(struct reader *r, size_t off, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = fnp_read_fail(r->why, r->whylen, off, NULL, fmt, ap);
    va_end(ap);
    return rc;
}

int fnp_read_fail(char *why, size_t whylen, size_t off, const char *what, const char *fmt,
                  va_list ap)
{
    if (!why || !whylen)
        return -EINVAL;
    int n = snprintf(why, whylen, "offset %zu: %s%s", off, what ? what : "", what ? ": " : "");
    if (n >= 0 && (size_t)n < whylen)
        vsnprintf(why + n, whylen - (size_t)n, fmt, ap);
    fnp_marshal_one_line(why);
    return -EINVAL;
}

void fnp_marshal_one_line(char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            *s = '?';
}

static int oom(struct reader *r)
{
    if (r->why && r->whylen)
        snprintf(r->why, r->whylen, "out of memory");
    return -ENOMEM;
}

const char *fnp_marshal_kind_name(unsigned kind)
{
    static const char *const names[] = {
        [FNP_MVAL_NONE] = "None",
        [FNP_MVAL_BOOL] = "bool",
        [FNP_MVAL_ELLIPSIS] = "Ellipsis",
        [FNP_MVAL_STOPITER] = "StopIteration",
        [FNP_MVAL_INT] = "int",
        [FNP_MVAL_FLOAT] = "float",
        [FNP_MVAL_COMPLEX] = "complex",
        [FNP_MVAL_BYTES] = "bytes",
        [FNP_MVAL_STR] = "str",
        [FNP_MVAL_TUPLE] = "tuple",
        [FNP_MVAL_LIST] = "list",
        [FNP_MVAL_SET] = "set",
        [FNP_MVAL_FROZENSET] = "frozenset",
        [FNP_MVAL_DICT] = "dict",
    };
    return kind < sizeof(names) / sizeof(names[0]) && names[kind] ? names[kind] : "?";
}

static size_t left(const struct reader *r)
{
    return r->len - r->pos;
}

static int need(struct reader *r, size_t n, const char *what)
{
    if (left(r) >= n)
        return 0;
    return fail(r, r->pos, "unexpected end of data: %s needs %zu bytes, %zu left", what, n,
                left(r));
}

static uint32_t get_u32(const unsigned char *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static int read_i32(struct reader *r, const char *what, int32_t *out)
{
    int rc = need(r, 4, what);
    if (rc)
        return rc;
    uint32_t u = get_u32(r->p + r->pos);
    r->pos += 4;
    memcpy(out, &u, sizeof(*out)); /* two's complement, as marshal wrote it */
    return 0;
}

/* A count of things that follow, each at least min_size bytes: bounded by the bytes left
 * after the count less those that reserved bytes still have to come from. */
static int read_count(struct reader *r, int small, size_t min_size, size_t reserved,
                      const char *what, uint32_t *out)
{
    size_t off = r->pos;
    uint32_t n;
    if (small) {
        int rc = need(r, 1, what);
        if (rc)
            return rc;
        n = r->p[r->pos++];
    } else {
        int32_t s;
        int rc = read_i32(r, what, &s);
        if (rc)
            return rc;
        if (s < 0)
            return fail(r, off, "%s is negative (%ld)", what, (long)s);
        n = (uint32_t)s;
    }
    size_t avail = left(r) > reserved ? left(r) - reserved : 0;
    if (n > avail / min_size)
        return fail(r, off, "%s is %lu but only %zu bytes are left", what, (unsigned long)n, avail);
    *out = n;
    return 0;
}

static int new_val(struct reader *r, unsigned kind, size_t off, uint32_t *idx)
{
    struct fnp_marshal_doc *d = r->d;
    if (fnp_array_grow((void **)&d->vals, &d->vals_cap, d->nvals + 1, sizeof(*d->vals)))
        return oom(r);
    struct fnp_mval *v = &d->vals[d->nvals];
    memset(v, 0, sizeof(*v));
    v->kind = (uint8_t)kind;
    v->off = (uint32_t)off;
    *idx = (uint32_t)d->nvals++;
    return 0;
}

static int add_ref(struct reader *r, int flag, uint32_t idx)
{
    struct fnp_marshal_doc *d = r->d;
    if (!flag)
        return 0;
    if (fnp_array_grow((void **)&d->refs, &d->refs_cap, d->nrefs + 1, sizeof(*d->refs)))
        return oom(r);
    d->refs[d->nrefs++] = idx;
    return 0;
}

/* CPython's "surrogatepass" UTF-8: like strict UTF-8, but encoded surrogates (ED A0..BF)
 * pass, since CPython writes them for file names that were not UTF-8 (surrogateescape).
 * Returns the offset of the first bad byte, or n. */
static size_t utf8_check(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned char c = s[i];
        size_t len;
        unsigned char lo = 0x80, hi = 0xbf; /* range of the second byte */
        if (c < 0x80) {
            i++;
            continue;
        } else if (c >= 0xc2 && c <= 0xdf) {
            len = 2;
        } else if (c >= 0xe0 && c <= 0xef) {
            len = 3;
            if (c == 0xe0)
                lo = 0xa0;
        } else if (c >= 0xf0 && c <= 0xf4) {
            len = 4;
            if (c == 0xf0)
                lo = 0x90;
            else if (c == 0xf4)
                hi = 0x8f;
        } else {
            return i;
        }
        if (n - i < len || s[i + 1] < lo || s[i + 1] > hi)
            return i;
        for (size_t k = 2; k < len; k++)
            if ((s[i + k] & 0xc0) != 0x80)
                return i;
        i += len;
    }
    return n;
}

/* A text float: one length byte, then what repr() gave. Parsed as CPython's
 * PyOS_string_to_double would: the whole text, C locale, no hex, no spaces. */
static int read_text_float(struct reader *r, double *out)
{
    size_t off = r->pos;
    uint32_t n;
    int rc = read_count(r, 1, 1, 0, "text float length", &n);
    if (rc)
        return rc;
    char buf[256];
    memcpy(buf, r->p + r->pos, n);
    buf[n] = '\0';
    r->pos += n;
    if (n == 0 || strlen(buf) != n || strpbrk(buf, "xX \t\n\v\f\r"))
        return fail(r, off, "text float \"%.40s\" is not a number", buf);
    if (!r->c_locale) {
        r->c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
        if (!r->c_locale)
            return oom(r);
    }
    char *endp;
    *out = strtod_l(buf, &endp, r->c_locale);
    if (*endp)
        return fail(r, off, "text float \"%.40s\" is not a number", buf);
    return 0;
}

static int read_double(struct reader *r, double *out)
{
    int rc = need(r, 8, "float");
    if (rc)
        return rc;
    /* Assembled by value, so the host's byte order does not matter. */
    uint64_t u = (uint64_t)get_u32(r->p + r->pos) | (uint64_t)get_u32(r->p + r->pos + 4) << 32;
    memcpy(out, &u, sizeof(*out));
    r->pos += 8;
    return 0;
}

/* TYPE_LONG: a signed digit count (its sign is the number's), then 15-bit digits, least
 * significant first. Only what fits a uint64 magnitude is accepted: 5 digits at most. */
static int read_long(struct reader *r, size_t off, struct fnp_mval *v)
{
    int32_t n;
    int rc = read_i32(r, "long int digit count", &n);
    if (rc)
        return rc;
    uint32_t nd = n < 0 ? (uint32_t)0 - (uint32_t)n : (uint32_t)n;
    if (nd > 5)
        return fail(r, off, "long int of %lu 15-bit digits is beyond 64 bits", (unsigned long)nd);
    rc = need(r, 2 * (size_t)nd, "long int digits");
    if (rc)
        return rc;
    uint64_t mag = 0;
    for (uint32_t i = 0; i < nd; i++) {
        const unsigned char *b = r->p + r->pos + 2 * i;
        unsigned digit = b[0] | (unsigned)b[1] << 8;
        if (digit >= 0x8000)
            return fail(r, off, "long int digit 0x%04x out of range", digit);
        if (i == nd - 1 && digit == 0)
            return fail(r, off, "unnormalized long int (top digit 0)");
        if (i == 4 && digit >> 4)
            return fail(r, off, "long int beyond 64 bits");
        mag |= (uint64_t)digit << (15 * i);
    }
    r->pos += 2 * (size_t)nd;
    v->v.u = mag;
    if (n < 0)
        v->flags |= FNP_MVAL_NEGATIVE;
    return 0;
}

static int read_object(struct reader *r, uint32_t *out);

/* Tuples, lists and sets: the container is numbered before its items (pre-order). */
static int read_sequence(struct reader *r, unsigned kind, int small, int flag, size_t off,
                         uint32_t *out)
{
    struct fnp_marshal_doc *d = r->d;
    uint32_t n, idx;
    /* Every item takes at least its type byte, and so does every item still owed to the
     * sequences around this one: nested counts cannot claim the same bytes twice, which
     * keeps the item array within the input's size. */
    int rc = read_count(r, small, 1, r->pending, "item count", &n);
    if (!rc)
        rc = new_val(r, kind, off, &idx);
    if (!rc)
        rc = add_ref(r, flag, idx);
    if (rc)
        return rc;
    if (fnp_array_grow((void **)&d->items, &d->items_cap, d->nitems + n, sizeof(*d->items)))
        return oom(r);
    uint32_t first = (uint32_t)d->nitems;
    d->nitems += n;
    d->vals[idx].n = n;
    d->vals[idx].v.first = first;
    r->pending += n;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t item;
        r->pending--;
        rc = read_object(r, &item);
        if (rc)
            return rc;
        d->items[first + i] = item; /* d->items may have moved: index, never a pointer */
    }
    d->vals[idx].flags |= FNP_MVAL_COMPLETE;
    *out = idx;
    return 0;
}

static int is_dict_end(const struct reader *r)
{
    /* CPython stops a dict at any type byte whose code is '0', flagged or not. */
    return left(r) > 0 && (r->p[r->pos] & ~FLAG_REF) == '0';
}

static int read_dict(struct reader *r, int flag, size_t off, uint32_t *out)
{
    struct fnp_marshal_doc *d = r->d;
    uint32_t idx, last = NO_PAIR;
    int rc = new_val(r, FNP_MVAL_DICT, off, &idx);
    if (!rc)
        rc = add_ref(r, flag, idx);
    if (rc)
        return rc;
    d->vals[idx].v.first = NO_PAIR;
    for (;;) {
        if (!left(r))
            return fail(r, r->pos, "unexpected end of data in a dict (no '0' ending it)");
        if (is_dict_end(r)) {
            r->pos++;
            break;
        }
        uint32_t key, val;
        rc = read_object(r, &key);
        if (rc)
            return rc;
        if (is_dict_end(r))
            return fail(r, r->pos, "dict ends between a key and its value");
        rc = read_object(r, &val);
        if (rc)
            return rc;
        /* Each pair took at least 2 bytes of an input under 4 GiB: no overflow. */
        if (fnp_array_grow((void **)&d->pairs, &d->pairs_cap, d->npairs + 1, sizeof(*d->pairs)))
            return oom(r);
        uint32_t pi = (uint32_t)d->npairs++;
        d->pairs[pi] = (struct fnp_mpair){key, val, NO_PAIR};
        if (last == NO_PAIR)
            d->vals[idx].v.first = pi;
        else
            d->pairs[last].next = pi;
        last = pi;
        d->vals[idx].n++;
    }
    d->vals[idx].flags |= FNP_MVAL_COMPLETE;
    *out = idx;
    return 0;
}

static int is_container(unsigned kind)
{
    return kind == FNP_MVAL_TUPLE || kind == FNP_MVAL_LIST || kind == FNP_MVAL_SET ||
           kind == FNP_MVAL_FROZENSET || kind == FNP_MVAL_DICT;
}

static int read_ref(struct reader *r, size_t off, uint32_t *out)
{
    int32_t n;
    int rc = read_i32(r, "reference", &n);
    if (rc)
        return rc;
    if (n < 0 || (size_t)n >= r->d->nrefs)
        return fail(r, off, "reference %ld to an unnumbered object (%zu numbered so far)", (long)n,
                    r->d->nrefs);
    uint32_t idx = r->d->refs[n];
    const struct fnp_mval *v = &r->d->vals[idx];
    /* CPython hands out a half-built tuple or dict here; nothing valid needs it. */
    if (is_container(v->kind) && !(v->flags & FNP_MVAL_COMPLETE))
        return fail(r, off, "reference %ld to a %s still being read", (long)n,
                    fnp_marshal_kind_name(v->kind));
    *out = idx;
    return 0;
}

static int read_string(struct reader *r, unsigned type, int flag, size_t off, uint32_t *out)
{
    int small = type == 'z' || type == 'Z';
    int latin1 = small || type == 'a' || type == 'A';
    unsigned kind = type == 's' ? FNP_MVAL_BYTES : FNP_MVAL_STR;
    uint32_t n, idx;
    int rc = read_count(r, small, 1, 0, "string length", &n);
    if (rc)
        return rc;
    if (kind == FNP_MVAL_STR && !latin1) {
        size_t bad = utf8_check(r->p + r->pos, n);
        if (bad != n)
            return fail(r, r->pos + bad, "invalid UTF-8 in a str");
    }
    rc = new_val(r, kind, off, &idx);
    if (!rc)
        rc = add_ref(r, flag, idx);
    if (rc)
        return rc;
    struct fnp_mval *v = &r->d->vals[idx];
    v->n = n;
    v->v.u = r->pos;
    if (latin1)
        v->flags |= FNP_MVAL_LATIN1;
    r->pos += n;
    *out = idx;
    return 0;
}

/* Scalars that carry a number: numbered after their bytes, which holds nothing nested, so
 * the order is the same as CPython's. */
static int read_number(struct reader *r, unsigned type, int flag, size_t off, uint32_t *out)
{
    struct fnp_mval tmp = {.off = (uint32_t)off};
    int rc = 0;
    switch (type) {
    case 'i': {
        int32_t s;
        rc = read_i32(r, "int", &s);
        tmp.kind = FNP_MVAL_INT;
        tmp.v.u = s < 0 ? (uint64_t)0 - (uint64_t)(int64_t)s : (uint64_t)s;
        tmp.flags = s < 0 ? FNP_MVAL_NEGATIVE : 0;
        break;
    }
    case 'I': /* TYPE_INT64: Python 2 wrote it; CPython 3 still reads it */
        rc = need(r, 8, "int64");
        if (!rc) {
            uint64_t u = (uint64_t)get_u32(r->p + r->pos) | (uint64_t)get_u32(r->p + r->pos + 4)
                                                                << 32;
            r->pos += 8;
            tmp.kind = FNP_MVAL_INT;
            tmp.v.u = u >> 63 ? (uint64_t)0 - u : u;
            tmp.flags = u >> 63 ? FNP_MVAL_NEGATIVE : 0;
        }
        break;
    case 'l':
        tmp.kind = FNP_MVAL_INT;
        rc = read_long(r, off, &tmp);
        break;
    case 'g':
        tmp.kind = FNP_MVAL_FLOAT;
        rc = read_double(r, &tmp.v.d);
        break;
    case 'f':
        tmp.kind = FNP_MVAL_FLOAT;
        rc = read_text_float(r, &tmp.v.d);
        break;
    case 'x': {
        double im;
        tmp.kind = FNP_MVAL_COMPLEX;
        rc = read_text_float(r, &tmp.v.d);
        if (!rc)
            rc = read_text_float(r, &im);
        break;
    }
    case 'y':
        tmp.kind = FNP_MVAL_COMPLEX;
        rc = need(r, 16, "complex");
        if (!rc)
            r->pos += 16;
        break;
    }
    if (!rc)
        rc = new_val(r, tmp.kind, off, out);
    if (!rc) {
        r->d->vals[*out] = tmp;
        rc = add_ref(r, flag, *out);
    }
    return rc;
}

static int read_singleton(struct reader *r, unsigned type, size_t off, uint32_t *out)
{
    unsigned kind = type == 'N'   ? FNP_MVAL_NONE
                    : type == '.' ? FNP_MVAL_ELLIPSIS
                    : type == 'S' ? FNP_MVAL_STOPITER
                                  : FNP_MVAL_BOOL;
    int rc = new_val(r, kind, off, out);
    if (!rc)
        r->d->vals[*out].v.u = type == 'T';
    return rc;
}

static int read_typed(struct reader *r, unsigned type, int flag, size_t off, uint32_t *out)
{
    switch (type) {
    case 'N':
    case 'T':
    case 'F':
    case '.':
    case 'S':
        return read_singleton(r, type, off, out);
    case 'i':
    case 'I':
    case 'l':
    case 'g':
    case 'f':
    case 'x':
    case 'y':
        return read_number(r, type, flag, off, out);
    case 's':
    case 'u':
    case 't':
    case 'a':
    case 'A':
    case 'z':
    case 'Z':
        return read_string(r, type, flag, off, out);
    case '(':
        return read_sequence(r, FNP_MVAL_TUPLE, 0, flag, off, out);
    case ')':
        return read_sequence(r, FNP_MVAL_TUPLE, 1, flag, off, out);
    case '[':
        return read_sequence(r, FNP_MVAL_LIST, 0, flag, off, out);
    case '<':
        return read_sequence(r, FNP_MVAL_SET, 0, flag, off, out);
    case '>':
        return read_sequence(r, FNP_MVAL_FROZENSET, 0, flag, off, out);
    case '{':
        return read_dict(r, flag, off, out);
    case 'r':
        return read_ref(r, off, out);
    case '0':
        return fail(r, off, "dict end '0' where an object is expected");
    case 'c':
        return fail(r, off, "code object (type 'c') cannot be in a pstats file");
    default:
        if (type >= 0x20 && type < 0x7f)
            return fail(r, off, "unknown type code '%c'", (char)type);
        return fail(r, off, "unknown type code 0x%02x", type);
    }
}

static int read_object(struct reader *r, uint32_t *out)
{
    size_t off = r->pos;
    if (!left(r))
        return fail(r, off, "unexpected end of data where an object is expected");
    unsigned code = r->p[r->pos++];
    /* Recursion is bounded here, so hostile nesting cannot exhaust the stack. */
    if (r->depth >= FNP_MARSHAL_MAX_DEPTH)
        return fail(r, off, "objects nested deeper than %d", FNP_MARSHAL_MAX_DEPTH);
    r->depth++;
    int rc = read_typed(r, code & ~FLAG_REF, code & FLAG_REF, off, out);
    r->depth--;
    return rc;
}

void fnp_marshal_doc_free(struct fnp_marshal_doc *d)
{
    if (!d)
        return;
    free(d->vals);
    free(d->items);
    free(d->pairs);
    free(d->refs);
    memset(d, 0, sizeof(*d));
}

int fnp_marshal_read(struct fnp_marshal_doc *d, const void *data, size_t len, char *why,
                     size_t whylen)
{
    memset(d, 0, sizeof(*d));
    struct reader r = {.d = d, .p = data, .len = len, .why = why, .whylen = whylen};
    if (why && whylen)
        why[0] = '\0';
    if (len > FNP_MARSHAL_MAX_INPUT) {
        if (why && whylen)
            snprintf(why, whylen, "%zu bytes: larger than the %u bytes a pstats file may have", len,
                     FNP_MARSHAL_MAX_INPUT);
        return -EFBIG;
    }
    d->data = data;
    d->len = len;
    int rc = read_object(&r, &d->root);
    if (r.c_locale)
        freelocale(r.c_locale);
    if (rc) {
        fnp_marshal_doc_free(d);
        return rc;
    }
    d->end = r.pos;
    return 0;
}
