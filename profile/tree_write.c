/* SPDX-License-Identifier: MIT */
/*
 * The tree's trailer (docs/tree-format.md), written after the pstats dict: a fixed header
 * that checksums the dict it belongs to and the body, then the body in LEB128 numbers, the
 * varint of DWARF and protobuf: most counts fit in one or two bytes. The body starts with
 * the run's metadata, so a profile whose tree was lost (merged with CPython's) keeps it; a
 * memory profile's columns follow the nodes (version 3; 0 rows for a timing tree). The
 * body's checksum covers the header too (version 4): tick_seconds multiplies every time a
 * view shows, so a damaged one must not read as a valid file.
 */
#include <errno.h>
#include <string.h>

#include "profile.h"

static void put_le(unsigned char *b, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        b[i] = (unsigned char)(v >> (8 * i));
}

static void put_uleb(struct fnp_sink *s, uint64_t v)
{
    unsigned char b[10];
    size_t n = 0;
    do {
        b[n] = v & 0x7f;
        v >>= 7;
        if (v)
            b[n] |= 0x80;
        n++;
    } while (v);
    fnp_sink_write(s, b, n);
}

static void put_sleb(struct fnp_sink *s, int64_t v)
{
    unsigned char b[10];
    size_t n = 0;
    for (;;) {
        unsigned char byte = v & 0x7f;
        v >>= 7; /* arithmetic on every compiler fnprof builds with (gcc, clang) */
        int done = (v == 0 && !(byte & 0x40)) || (v == -1 && (byte & 0x40));
        b[n++] = done ? byte : byte | 0x80;
        if (done)
            break;
    }
    fnp_sink_write(s, b, n);
}

/* A pair the format can hold: a key of 1 to FNP_TREE_MAX_META_KEY bytes. */
static int meta_fits(const struct fnp_meta *m)
{
    size_t len = strlen(m->key);
    return len >= 1 && len <= FNP_TREE_MAX_META_KEY;
}

/* The pairs written: those that fit, the first FNP_TREE_MAX_META of them. */
static size_t meta_count(const struct fnp_profile *p)
{
    size_t n = 0;
    for (size_t i = 0; i < p->nmeta && n < FNP_TREE_MAX_META; i++)
        n += meta_fits(&p->meta[i]);
    return n;
}

/* A string of len bytes cut to at most max, at the start of a character (not inside a
 * UTF-8 sequence), so that valid UTF-8 stays valid. */
static size_t cut_at_char(const char *str, size_t len, size_t max)
{
    if (len <= max)
        return len;
    while (max > 0 && ((unsigned char)str[max] & 0xc0) == 0x80)
        max--;
    return max;
}

static void write_meta(const struct fnp_profile *p, struct fnp_sink *b)
{
    size_t n = meta_count(p);
    put_uleb(b, n);
    for (size_t i = 0; n > 0; i++) {
        const struct fnp_meta *m = &p->meta[i];
        if (!meta_fits(m))
            continue;
        size_t klen = strlen(m->key);
        size_t vlen = cut_at_char(m->value, strlen(m->value), FNP_TREE_MAX_META_VALUE);
        put_uleb(b, klen);
        fnp_sink_write(b, m->key, klen);
        put_uleb(b, vlen);
        fnp_sink_write(b, m->value, vlen);
        n--;
    }
}

static void write_body(const struct fnp_profile *p, struct fnp_sink *b)
{
    write_meta(p, b);
    if (p->tree_kind == FNP_TREE_NONE) {
        /* Metadata alone: no thread, no node, no memory row. */
        put_uleb(b, 0);
        put_uleb(b, 0);
        put_uleb(b, 0);
        return;
    }
    put_uleb(b, p->nthreads);
    for (size_t i = 0; i < p->nthreads; i++) {
        size_t len = strlen(p->threads[i]);
        put_uleb(b, len);
        fnp_sink_write(b, p->threads[i], len);
    }
    put_uleb(b, p->ntree);
    for (size_t i = 0; i < p->ntree; i++) {
        const struct fnp_tree_node *n = &p->tree[i];
        put_uleb(b, n->func);
        /* Distance back to the parent, 0 for a root: in pre-order mostly 1. */
        put_uleb(b, n->parent == FNP_NO_PARENT ? 0 : i - n->parent);
        if (n->parent == FNP_NO_PARENT)
            put_uleb(b, n->thread);
        put_uleb(b, n->ncalls);
        put_uleb(b, n->ticks);
        put_sleb(b, n->back);
        put_uleb(b, n->flags);
    }
    /* The memory columns (from version 3): none, or one row per node in their order. */
    put_uleb(b, p->mem ? p->ntree : 0);
    if (!p->mem)
        return;
    for (size_t i = 0; i < p->ntree; i++) {
        put_uleb(b, p->mem[i].allocs);
        put_uleb(b, p->mem[i].frees);
        put_uleb(b, p->mem[i].freed);
        put_uleb(b, p->mem[i].peak);
    }
}

uint32_t fnp_tree_crc(const unsigned char *header, const void *body, size_t n)
{
    uint32_t version = (uint32_t)header[8] | (uint32_t)header[9] << 8 | (uint32_t)header[10] << 16 |
                       (uint32_t)header[11] << 24;
    uint32_t crc = 0;
    if (version >= 4) {
        crc = fnp_crc32(crc, header + 8, 24);
        crc = fnp_crc32(crc, header + 36, 8);
    }
    return fnp_crc32(crc, body, n);
}

int fnp_profile_write_fn(struct fnp_sink *s, void *profile)
{
    return fnp_profile_write(profile, s);
}

int fnp_profile_write(const struct fnp_profile *p, struct fnp_sink *s)
{
    s->checksum = 1;
    s->crc = 0;
    /* Without a tree or metadata the file is the dict alone, as cProfile writes it. */
    if (fnp_pstats_write(p, s) || (p->tree_kind == FNP_TREE_NONE && !meta_count(p)))
        return s->err;
    uint32_t dict_crc = s->crc;
    struct fnp_sink body;
    fnp_sink_memory(&body);
    write_body(p, &body);
    if (body.err) {
        s->err = body.err;
        fnp_sink_free(&body);
        return s->err;
    }
    unsigned char h[FNP_TREE_HEADER];
    memcpy(h, FNP_TREE_MAGIC, 8);
    put_le(h + 8, FNP_TREE_VERSION, 4);
    put_le(h + 12, p->tree_kind, 4);
    put_le(h + 16, p->nfuncs, 4);
    put_le(h + 20, dict_crc, 4);
    put_le(h + 24, body.len, 8);
    /* A trailer without a tree has no ticks; 1 keeps the header's rule (> 0) for all. */
    double tick = p->tree_kind == FNP_TREE_NONE ? 1.0 : p->tick_seconds;
    uint64_t bits;
    memcpy(&bits, &tick, sizeof(bits));
    put_le(h + 36, bits, 8);
    /* Last: it covers the fields above (version 4). */
    put_le(h + 32, fnp_tree_crc(h, body.buf, body.len), 4);
    fnp_sink_write(s, h, sizeof(h));
    fnp_sink_write(s, body.buf, body.len);
    fnp_sink_free(&body);
    return s->err;
}
