/* SPDX-License-Identifier: MIT */
/*
 * Reads the tree's trailer (tree_write.c, docs/tree-format.md). The bytes are hostile: every
 * number is bounded by what is left of the input before anything is allocated for it, a
 * node may only name a parent before it, a function of the dict and a thread of the
 * table; the checksums catch a trailer damaged, cut short or glued to another dict.
 * Versions 1 to 4 are read: 2 adds the run's metadata at the start of the body, 3 a memory
 * profile's columns after the nodes, 4 a checksum over the header's fields as well as the
 * body. Whatever the version, fnp_tree_check_dict holds tick_seconds to the dict's times.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"

struct reader {
    const unsigned char *p;
    size_t len, pos;
    size_t base; /* file offset of p[0], for messages */
    char *why;
    size_t whylen;
};

__attribute__((format(printf, 2, 3))) static int bad(struct reader *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = fnp_read_fail(r->why, r->whylen, r->base + r->pos, "calling-context tree", fmt, ap);
    va_end(ap);
    return rc;
}

static uint64_t get_le(const unsigned char *b, int bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++)
        v |= (uint64_t)b[i] << (8 * i);
    return v;
}

static int get_uleb(struct reader *r, uint64_t *out)
{
    uint64_t v = 0;
    for (unsigned shift = 0;; shift += 7) {
        if (r->pos >= r->len)
            return bad(r, "cut short");
        unsigned char b = r->p[r->pos++];
        if (shift == 63 && (b & 0x7e))
            return bad(r, "a number over 64 bits");
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            break;
        if (shift == 63)
            return bad(r, "a number over 64 bits");
    }
    *out = v;
    return 0;
}

static int get_sleb(struct reader *r, int64_t *out)
{
    uint64_t v = 0;
    unsigned shift = 0;
    unsigned char b;
    do {
        if (r->pos >= r->len)
            return bad(r, "cut short");
        if (shift > 63)
            return bad(r, "a number over 64 bits");
        b = r->p[r->pos++];
        /* The 10th byte holds bit 63 only: the rest must repeat it (sign extension). */
        if (shift == 63 && (b & 0x7f) != 0 && (b & 0x7f) != 0x7f)
            return bad(r, "a number over 64 bits");
        v |= (uint64_t)(b & 0x7f) << shift;
        shift += 7;
    } while (b & 0x80);
    if (shift < 64 && (b & 0x40))
        v |= ~(uint64_t)0 << shift;
    *out = (int64_t)v;
    return 0;
}

/* A count of items of at least min_bytes each: no more than the input has left. */
static int get_count(struct reader *r, size_t min_bytes, uint64_t limit, const char *what,
                     size_t *out)
{
    uint64_t v;
    int rc = get_uleb(r, &v);
    if (rc)
        return rc;
    if (v > (r->len - r->pos) / min_bytes || v > limit)
        return bad(r, "%llu %s: more than the file holds", (unsigned long long)v, what);
    *out = (size_t)v;
    return 0;
}

/* A length, then that many bytes of text, copied into *out (NUL-terminated): what of at
 * least min_len and at most max_len bytes, without NUL, which C strings cannot hold. */
static int read_text(struct reader *r, size_t min_len, size_t max_len, const char *what, char **out)
{
    size_t len = 0;
    int rc = get_count(r, 1, max_len, what, &len);
    if (rc)
        return rc;
    if (len < min_len)
        return bad(r, "%zu %s (at least %zu)", len, what, min_len);
    if (memchr(r->p + r->pos, 0, len))
        return bad(r, "%s include a NUL byte", what);
    *out = malloc(len + 1);
    if (!*out)
        return -ENOMEM;
    memcpy(*out, r->p + r->pos, len);
    (*out)[len] = 0;
    r->pos += len;
    return 0;
}

static int read_threads(struct reader *r, char ***names, size_t *n)
{
    int rc = get_count(r, 1, FNP_TREE_MAX_THREADS, "threads", n);
    if (rc)
        return rc;
    *names = calloc(*n ? *n : 1, sizeof(**names));
    if (!*names)
        return -ENOMEM;
    for (size_t i = 0; i < *n && !rc; i++)
        rc = read_text(r, 0, FNP_TREE_MAX_NAME, "bytes of a thread name", &(*names)[i]);
    return rc;
}

static int by_key(const void *a, const void *b)
{
    return strcmp((*(const struct fnp_meta *const *)a)->key,
                  (*(const struct fnp_meta *const *)b)->key);
}

/* Version 2's metadata: pairs of a key and a value. A key twice is refused: the writer
 * takes pairs from a table of distinct keys (fnp_profile_set_meta), and a reader should
 * not have to pick one of two values. */
static int read_meta(struct reader *r, struct fnp_meta **meta, size_t *n)
{
    /* A pair takes at least 3 bytes: two lengths and a byte of key. */
    int rc = get_count(r, 3, FNP_TREE_MAX_META, "metadata pairs", n);
    if (rc)
        return rc;
    *meta = calloc(*n ? *n : 1, sizeof(**meta));
    if (!*meta)
        return -ENOMEM;
    for (size_t i = 0; i < *n && !rc; i++) {
        rc = read_text(r, 1, FNP_TREE_MAX_META_KEY, "bytes of a metadata key", &(*meta)[i].key);
        if (!rc)
            rc = read_text(r, 0, FNP_TREE_MAX_META_VALUE, "bytes of a metadata value",
                           &(*meta)[i].value);
    }
    if (rc || *n < 2)
        return rc;
    /* Sorted, a key twice is two neighbours: n log n, where comparing every pair of 4096
     * keys of 256 bytes alike but for the last would read about 2 GB. */
    const struct fnp_meta **sorted = malloc(*n * sizeof(*sorted));
    if (!sorted)
        return -ENOMEM;
    for (size_t i = 0; i < *n; i++)
        sorted[i] = &(*meta)[i];
    qsort(sorted, *n, sizeof(*sorted), by_key);
    for (size_t i = 1; i < *n && !rc; i++)
        if (!strcmp(sorted[i - 1]->key, sorted[i]->key))
            rc = bad(r, "the metadata key '%.64s' twice", sorted[i]->key);
    free(sorted);
    return rc;
}

static void free_meta(struct fnp_meta *meta, size_t n)
{
    for (size_t i = 0; meta && i < n; i++) {
        free(meta[i].key);
        free(meta[i].value);
    }
    free(meta);
}

/* Node i's fields, checked against what came before. */
static int read_node(struct reader *r, size_t i, size_t nkeys, size_t nthreads,
                     struct fnp_tree_node *nd)
{
    uint64_t func, up, thread = 0, flags;
    int rc = get_uleb(r, &func);
    if (!rc && func >= nkeys)
        rc = bad(r, "node %zu names function %llu of %zu", i, (unsigned long long)func, nkeys);
    if (!rc)
        rc = get_uleb(r, &up);
    if (!rc && up > i)
        rc = bad(r, "node %zu has a parent %llu nodes before the first", i,
                 (unsigned long long)(up - i));
    if (!rc && up == 0) {
        rc = get_uleb(r, &thread);
        if (!rc && thread >= nthreads)
            rc = bad(r, "node %zu runs on thread %llu of %zu", i, (unsigned long long)thread,
                     nthreads);
    }
    if (!rc)
        rc = get_uleb(r, &nd->ncalls);
    if (!rc)
        rc = get_uleb(r, &nd->ticks);
    if (!rc)
        rc = get_sleb(r, &nd->back);
    if (!rc)
        rc = get_uleb(r, &flags);
    if (!rc && flags > (FNP_OPEN_GIVEN | FNP_OPEN_FUNC | FNP_OPEN_EDGE))
        rc = bad(r, "node %zu has unknown flags 0x%llx", i, (unsigned long long)flags);
    if (rc)
        return rc;
    nd->func = (uint32_t)func;
    nd->parent = up ? (uint32_t)(i - up) : FNP_NO_PARENT;
    nd->thread = (uint32_t)thread;
    nd->flags = (uint32_t)flags;
    return 0;
}

/* Version 3's memory columns: a count, 0 (a timing tree) or one row per node, each row
 * allocs, frees, freed, peak; *mem stays NULL for 0. A row cannot free more blocks than it
 * allocated. */
static int read_mem(struct reader *r, size_t n, struct fnp_mem_node **mem)
{
    size_t rows = 0;
    int rc = get_count(r, 4, FNP_TREE_MAX_NODES, "memory rows", &rows);
    if (rc || rows == 0)
        return rc;
    if (rows != n)
        return bad(r, "%zu memory rows for %zu nodes", rows, n);
    *mem = malloc(rows * sizeof(**mem));
    if (!*mem)
        return -ENOMEM;
    for (size_t i = 0; i < rows && !rc; i++) {
        struct fnp_mem_node *m = &(*mem)[i];
        rc = get_uleb(r, &m->allocs);
        if (!rc)
            rc = get_uleb(r, &m->frees);
        if (!rc)
            rc = get_uleb(r, &m->freed);
        if (!rc)
            rc = get_uleb(r, &m->peak);
        if (!rc && m->frees > m->allocs)
            rc = bad(r, "node %zu frees %llu blocks of %llu allocated", i,
                     (unsigned long long)m->frees, (unsigned long long)m->allocs);
    }
    return rc;
}

int fnp_tree_read(struct fnp_profile *p, size_t nkeys, const unsigned char *dict, size_t dict_len,
                  const unsigned char *data, size_t len, char *why, size_t whylen)
{
    struct reader r = {.p = data, .len = len, .base = dict_len, .why = why, .whylen = whylen};
    fnp_tree_clear(p);
    if (len < FNP_TREE_HEADER)
        return bad(&r, "cut short in its header (%zu of %d bytes)", len, FNP_TREE_HEADER);
    if (memcmp(data, FNP_TREE_MAGIC, 8))
        return bad(&r, "no FNPTREE header");
    uint64_t version = get_le(data + 8, 4), kind = get_le(data + 12, 4);
    uint64_t nfuncs = get_le(data + 16, 4), dict_crc = get_le(data + 20, 4);
    uint64_t body_len = get_le(data + 24, 8), body_crc = get_le(data + 32, 4);
    r.pos = 8;
    if (version < 1 || version > FNP_TREE_VERSION)
        return bad(&r, "version %llu (this fnprof reads versions 1 to %d)",
                   (unsigned long long)version, FNP_TREE_VERSION);
    r.pos = 12;
    /* Kind 0, a trailer for metadata alone, came with version 2. */
    if (kind != FNP_TREE_TIME && kind != FNP_TREE_CALLS && (kind != FNP_TREE_NONE || version < 2))
        return bad(&r, "unknown unit %llu", (unsigned long long)kind);
    r.pos = 16;
    if (nfuncs != nkeys)
        return bad(&r, "made for a dict of %llu functions, not this one of %zu",
                   (unsigned long long)nfuncs, nkeys);
    r.pos = 20;
    if (dict_crc != fnp_crc32(0, dict, dict_len))
        return bad(&r, "its checksum of the dict does not match: the dict was changed, or the "
                       "tree belongs to another");
    r.pos = 24;
    if (body_len != len - FNP_TREE_HEADER)
        return bad(&r, "%llu bytes announced, %zu present%s", (unsigned long long)body_len,
                   len - FNP_TREE_HEADER, body_len > len - FNP_TREE_HEADER ? " (cut short)" : "");
    r.pos = 32;
    if (body_crc != fnp_tree_crc(data, data + FNP_TREE_HEADER, (size_t)body_len))
        return bad(&r, version >= 4 ? "the checksum of its header and body does not match: the "
                                      "file is damaged"
                                    : "the body's checksum does not match: the file is damaged");
    uint64_t bits = get_le(data + 36, 8);
    double tick_seconds;
    memcpy(&tick_seconds, &bits, sizeof(tick_seconds));
    r.pos = 36;
    if (!(tick_seconds > 0 && tick_seconds < 1e6))
        return bad(&r, "a tick of %g seconds", tick_seconds);
    /* Calls and metadata alone have no clock: their "tick" is 1, as the dict's 1 call = 1 s. */
    if (kind != FNP_TREE_TIME && tick_seconds != 1.0)
        return bad(&r, "a tick of %.17g seconds for %s (it is 1)", tick_seconds,
                   kind == FNP_TREE_CALLS ? "calls" : "no tree");
    r.pos = FNP_TREE_HEADER;

    struct fnp_meta *meta = NULL;
    char **names = NULL;
    size_t nmeta = 0, nthreads = 0, n = 0;
    struct fnp_tree_node *nodes = NULL;
    struct fnp_mem_node *mem = NULL;
    int rc = version >= 2 ? read_meta(&r, &meta, &nmeta) : 0;
    if (!rc)
        rc = read_threads(&r, &names, &nthreads);
    /* A node takes at least 6 bytes: func, parent, ncalls, ticks, back, flags. */
    if (!rc)
        rc = get_count(&r, 6, FNP_TREE_MAX_NODES, "nodes", &n);
    if (!rc && kind == FNP_TREE_NONE && (nthreads || n))
        rc = bad(&r, "no tree announced, but %zu threads and %zu nodes", nthreads, n);
    if (!rc) {
        nodes = malloc((n ? n : 1) * sizeof(*nodes));
        rc = nodes ? 0 : -ENOMEM;
    }
    for (size_t i = 0; i < n && !rc; i++)
        rc = read_node(&r, i, nkeys, nthreads, &nodes[i]);
    if (!rc && version >= 3)
        rc = read_mem(&r, n, &mem);
    if (!rc && r.pos != r.len)
        rc = bad(&r, "%zu bytes after the last node", r.len - r.pos);
    if (!rc && kind != FNP_TREE_NONE) {
        /* Checked node by node above, so only memory can fail here. */
        rc = fnp_tree_set_mem(p, nodes, mem, n, (uint32_t)kind, tick_seconds,
                              (const char *const *)names, nthreads);
        if (rc == -EINVAL)
            bad(&r, "malformed");
    }
    if (!rc) {
        /* Last, when nothing can fail: on failure p's metadata stays as it was. */
        free_meta(p->meta, p->nmeta);
        p->meta = meta;
        p->nmeta = nmeta;
        meta = NULL;
    }
    if (rc == -ENOMEM && why)
        snprintf(why, whylen, "out of memory");
    free_meta(meta, nmeta);
    for (size_t i = 0; names && i < nthreads; i++)
        free(names[i]);
    free(names);
    free(nodes);
    free(mem);
    return rc;
}

int fnp_tree_check_dict(const struct fnp_profile *p, size_t nkeys, size_t off, char *why,
                        size_t whylen)
{
    struct reader r = {.base = off, .why = why, .whylen = whylen};
    double tree, dict;
    int rc = fnp_tree_dict_gap(p, nkeys, &tree, &dict);
    if (rc <= 0)
        return rc;
    return bad(&r,
               "its tick of %.9g seconds makes the tree's own times add up to %.9g s, where the "
               "dict's tottimes add up to %.9g s: the tick or the dict was changed",
               p->tick_seconds, tree, dict);
}
