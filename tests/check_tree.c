/*
 * The calling-context tree a profile keeps: canonical form, values, merging, the rebuild
 * from edges, and its file format (write, read back, refuse damage), with the run's
 * metadata (version 2) and the version 1 files written before it.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "profile.h"

#define ROOT FNP_NO_PARENT

static uint32_t fn(struct fnp_profile *p, const char *name)
{
    struct fnp_key k = {"/src/x.c", 7, name};
    int64_t i = fnp_profile_func(p, &k);
    ck_assert_int_ge(i, 0);
    return (uint32_t)i;
}

static const char *const one_thread[] = {"thread 1"};
static const char *const two_threads[] = {"thread 1", "thread 2"};

/* p with functions main, a, b, c (indices 0-3) and the tree given, its numbers derived
 * from the tree as the runtime's dump does. */
static void make(struct fnp_profile *p, const struct fnp_tree_node *t, size_t n, size_t nthreads,
                 double tick_seconds)
{
    fnp_profile_init(p);
    fn(p, "main");
    fn(p, "a");
    fn(p, "b");
    fn(p, "c");
    ck_assert_int_eq(fnp_profile_add_tree(p, t, n, tick_seconds), 0);
    ck_assert_int_eq(fnp_tree_set(p, t, n, FNP_TREE_TIME, tick_seconds,
                                  nthreads > 1 ? two_threads : one_thread, nthreads),
                     0);
}

/* The path of node i as function indices joined by '/', e.g. "0/1/3". */
static void path(const struct fnp_profile *p, size_t i, char *buf, size_t len)
{
    uint32_t stack[64];
    size_t d = 0;
    for (uint32_t k = (uint32_t)i; k != ROOT && d < 64; k = p->tree[k].parent)
        stack[d++] = p->tree[k].func;
    size_t off = 0;
    buf[0] = 0;
    while (d-- > 0 && off < len)
        off += (size_t)snprintf(buf + off, len - off, off ? "/%u" : "%u", stack[d]);
}

/* The node with this path, or -1. */
static long find(const struct fnp_profile *p, const char *want)
{
    char buf[256];
    for (size_t i = 0; i < p->ntree; i++) {
        path(p, i, buf, sizeof(buf));
        if (!strcmp(buf, want))
            return (long)i;
    }
    return -1;
}

static void assert_preorder(const struct fnp_profile *p)
{
    /* A parent before its child, and every subtree contiguous: a node's parent is on the
     * path of the node before it. */
    for (size_t i = 0; i < p->ntree; i++) {
        uint32_t parent = p->tree[i].parent;
        if (parent == ROOT)
            continue;
        ck_assert_uint_lt(parent, i);
        uint32_t k = (uint32_t)i - 1;
        while (k != ROOT && k != parent)
            k = p->tree[k].parent;
        ck_assert_uint_eq(k, parent);
    }
}

START_TEST(set_merges_siblings_of_one_function_and_orders_them)
{
    struct fnp_profile p;
    /* main -> c, main -> a (twice, as two clones of a would be) -> b */
    struct fnp_tree_node t[] = {
        {0, ROOT, 1, 100, 0, 0, 0}, {3, 0, 2, 10, 0, 0, 0}, {1, 0, 1, 30, 0, 0, 0},
        {2, 2, 1, 5, 0, 0, 0},      {1, 0, 2, 40, 0, 0, 0}, {2, 4, 3, 7, 0, 0, 0},
    };
    make(&p, t, 6, 1, 1e-9);
    ck_assert_uint_eq(p.ntree, 4);
    assert_preorder(&p);
    long a = find(&p, "0/1"), b = find(&p, "0/1/2"), c = find(&p, "0/3");
    ck_assert_int_eq(a, 1); /* siblings by function: a (1) before c (3) */
    ck_assert_int_eq(c, 3);
    ck_assert_uint_eq(p.tree[a].ncalls, 3);
    ck_assert_uint_eq(p.tree[a].ticks, 70);
    ck_assert_uint_eq(p.tree[b].ncalls, 4);
    ck_assert_uint_eq(p.tree[b].ticks, 12);
    fnp_profile_free(&p);
}
END_TEST

START_TEST(set_keeps_threads_apart_and_children_on_their_root_thread)
{
    struct fnp_profile p;
    struct fnp_tree_node t[] = {
        {0, ROOT, 1, 100, 0, 0, 0},
        {1, 0, 1, 50, 0, 0, 0},
        {0, ROOT, 1, 80, 0, 0, 1},
        {1, 2, 2, 20, 0, 0, 1},
    };
    make(&p, t, 4, 2, 1e-9);
    ck_assert_uint_eq(p.ntree, 4);
    ck_assert_uint_eq(p.nthreads, 2);
    ck_assert_str_eq(p.threads[1], "thread 2");
    ck_assert_uint_eq(p.tree[0].thread, 0);
    ck_assert_uint_eq(p.tree[2].thread, 1);
    ck_assert_uint_eq(p.tree[3].thread, 1);
    ck_assert_uint_eq(p.tree[3].ncalls, 2);
    fnp_profile_free(&p);
}
END_TEST

START_TEST(set_keeps_siblings_apart_that_say_differently_what_was_open)
{
    /* Beyond the node cap one caller can have two children of b, one whose calls found b
     * open above them and one whose calls did not: merged, b's primitive calls would be
     * wrong. */
    struct fnp_profile p;
    struct fnp_tree_node t[] = {
        {0, ROOT, 1, 100, 0, 0, 0},
        {2, 0, 2, 10, 0, FNP_OPEN_GIVEN, 0},
        {2, 0, 3, 20, 0, FNP_OPEN_GIVEN | FNP_OPEN_FUNC, 0},
        {2, 0, 1, 5, 0, FNP_OPEN_GIVEN, 0},
    };
    make(&p, t, 4, 1, 1e-9);
    ck_assert_uint_eq(p.ntree, 3);
    ck_assert_uint_eq(p.tree[1].flags, FNP_OPEN_GIVEN);
    ck_assert_uint_eq(p.tree[1].ncalls, 3);
    ck_assert_uint_eq(p.tree[2].flags, FNP_OPEN_GIVEN | FNP_OPEN_FUNC);
    ck_assert_uint_eq(p.tree[2].ncalls, 3);
    /* the tree still derives the numbers the forest gave */
    struct fnp_profile q;
    fnp_profile_init(&q);
    for (size_t i = 0; i < p.nfuncs; i++)
        fnp_profile_func(&q, &p.funcs[i].key);
    ck_assert_int_eq(fnp_profile_add_tree(&q, p.tree, p.ntree, 1e-9), 0);
    ck_assert_uint_eq(q.funcs[2].st.pcalls, p.funcs[2].st.pcalls);
    ck_assert_uint_eq(q.funcs[2].st.pcalls, 3);
    fnp_profile_free(&q);
    fnp_profile_free(&p);
}
END_TEST

START_TEST(set_rejects_a_child_before_its_parent_and_bad_indices)
{
    struct fnp_profile p;
    fnp_profile_init(&p);
    fn(&p, "main");
    struct fnp_tree_node late[] = {{0, 1, 1, 1, 0, 0, 0}, {0, ROOT, 1, 1, 0, 0, 0}};
    struct fnp_tree_node func[] = {{7, ROOT, 1, 1, 0, 0, 0}};
    struct fnp_tree_node thread[] = {{0, ROOT, 1, 1, 0, 0, 3}};
    ck_assert_int_eq(fnp_tree_set(&p, late, 2, FNP_TREE_TIME, 1, one_thread, 1), -EINVAL);
    ck_assert_int_eq(fnp_tree_set(&p, func, 1, FNP_TREE_TIME, 1, one_thread, 1), -EINVAL);
    ck_assert_int_eq(fnp_tree_set(&p, thread, 1, FNP_TREE_TIME, 1, one_thread, 1), -EINVAL);
    ck_assert_uint_eq(p.tree_kind, FNP_TREE_NONE);
    fnp_profile_free(&p);
}
END_TEST

START_TEST(values_give_own_time_and_widths_children_fit_in)
{
    struct fnp_profile p;
    /* main 100 -> a 60 (back 10: a folded recursion gave 10 back) -> b 30; main -> c 50,
     * more than main has left: clock noise, own time clamps at 0. */
    struct fnp_tree_node t[] = {
        {0, ROOT, 1, 100, 0, 0, 0},
        {1, 0, 1, 60, 10, 0, 0},
        {2, 1, 1, 30, 0, 0, 0},
        {3, 0, 1, 50, 0, 0, 0},
    };
    make(&p, t, 4, 1, 1e-9);
    uint64_t self[4], incl[4];
    fnp_tree_values(&p, self, incl);
    ck_assert_uint_eq(self[0], 0); /* 100 - 60 - 50 < 0 */
    ck_assert_uint_eq(self[1], 20);
    ck_assert_uint_eq(self[2], 30);
    ck_assert_uint_eq(self[3], 50);
    ck_assert_uint_eq(incl[1], 50);
    ck_assert_uint_eq(incl[0], 100);
    fnp_profile_free(&p);
}
END_TEST

START_TEST(merge_adds_paths_and_rescales_the_other_clock)
{
    struct fnp_profile x, y;
    struct fnp_tree_node tx[] = {{0, ROOT, 1, 100, 0, 0, 0}, {1, 0, 2, 40, 0, 0, 0}};
    struct fnp_tree_node ty[] = {
        {0, ROOT, 1, 50, 0, 0, 0}, {1, 0, 1, 20, 0, 0, 0}, {2, 0, 1, 10, 0, 0, 0}};
    make(&x, tx, 2, 1, 1e-9);
    make(&y, ty, 3, 1, 2e-9); /* y's ticks are twice as long */
    ck_assert_int_eq(fnp_profile_merge(&x, &y), 0);
    ck_assert_uint_eq(x.tree_kind, FNP_TREE_TIME);
    ck_assert_uint_eq(x.ntree, 3);
    ck_assert_uint_eq(x.tree[0].ticks, 200);
    long a = find(&x, "0/1"), b = find(&x, "0/2");
    ck_assert_uint_eq(x.tree[a].ncalls, 3);
    ck_assert_uint_eq(x.tree[a].ticks, 80);
    ck_assert_uint_eq(x.tree[b].ticks, 20);
    fnp_profile_free(&x);
    fnp_profile_free(&y);
}
END_TEST

START_TEST(merge_saturates_a_paths_calls_and_ticks)
{
    struct fnp_profile x, y;
    struct fnp_tree_node tx[] = {{0, ROOT, UINT64_MAX - 1, UINT64_MAX - 5, 0, 0, 0}};
    struct fnp_tree_node ty[] = {{0, ROOT, 3, 10, 0, 0, 0}};
    make(&x, tx, 1, 1, 1e-9);
    make(&y, ty, 1, 1, 1e-9);
    ck_assert_int_eq(fnp_profile_merge(&x, &y), 0);
    ck_assert_uint_eq(x.ntree, 1);
    /* wrapped, they would be 1 call of 4 ticks */
    ck_assert_uint_eq(x.tree[0].ncalls, UINT64_MAX);
    ck_assert_uint_eq(x.tree[0].ticks, UINT64_MAX);
    fnp_profile_free(&x);
    fnp_profile_free(&y);
}
END_TEST

START_TEST(merge_with_a_profile_without_tree_drops_the_tree)
{
    struct fnp_profile x, y;
    struct fnp_tree_node t[] = {{0, ROOT, 1, 100, 0, 0, 0}};
    make(&x, t, 1, 1, 1e-9);
    fnp_profile_init(&y);
    fn(&y, "main");
    ck_assert_int_eq(fnp_profile_merge(&x, &y), 0);
    ck_assert_uint_eq(x.tree_kind, FNP_TREE_NONE);
    ck_assert_uint_eq(x.ntree, 0);
    /* ... and into an empty profile, the first input's tree comes along. */
    struct fnp_profile e;
    fnp_profile_init(&e);
    fnp_profile_free(&y);
    make(&y, t, 1, 1, 1e-9);
    ck_assert_int_eq(fnp_profile_merge(&e, &y), 0);
    ck_assert_uint_eq(e.tree_kind, FNP_TREE_TIME);
    ck_assert_uint_eq(e.ntree, 1);
    fnp_profile_free(&e);
    fnp_profile_free(&x);
    fnp_profile_free(&y);
}
END_TEST

/* p written as a file (dict + tree) into s. */
static void write_file(const struct fnp_profile *p, struct fnp_sink *s)
{
    fnp_sink_memory(s);
    ck_assert_int_eq(fnp_profile_write(p, s), 0);
}

static struct fnp_profile sample(void)
{
    struct fnp_profile p;
    struct fnp_tree_node t[] = {
        {0, ROOT, 1, 1000, 0, 0, 0}, {1, 0, 3, 600, -5, 0, 0}, {2, 1, 300, 200, 0, 7, 0},
        {0, ROOT, 2, 90, 0, 0, 1},   {3, 3, 1, 40, 0, 0, 1},
    };
    make(&p, t, 5, 2, 4e-10);
    return p;
}

START_TEST(a_written_tree_reads_back_the_same)
{
    struct fnp_profile p = sample(), q;
    struct fnp_sink s;
    write_file(&p, &s);
    char why[256] = "";
    fnp_profile_init(&q);
    ck_assert_msg(fnp_pstats_read(&q, s.buf, s.len, why, sizeof(why)) == 0, "%s", why);
    ck_assert_uint_eq(q.tree_kind, FNP_TREE_TIME);
    ck_assert_double_eq(q.tick_seconds, 4e-10);
    ck_assert_uint_eq(q.ntree, p.ntree);
    ck_assert_uint_eq(q.nthreads, 2);
    ck_assert_str_eq(q.threads[1], "thread 2");
    for (size_t i = 0; i < p.ntree; i++) {
        const struct fnp_tree_node *a = &p.tree[i], *b = &q.tree[i];
        ck_assert_str_eq(q.funcs[b->func].key.name, p.funcs[a->func].key.name);
        ck_assert_uint_eq(a->parent, b->parent);
        ck_assert_uint_eq(a->ncalls, b->ncalls);
        ck_assert_uint_eq(a->ticks, b->ticks);
        ck_assert_int_eq(a->back, b->back);
        ck_assert_uint_eq(a->flags, b->flags);
        ck_assert_uint_eq(a->thread, b->thread);
    }
    /* A profile without a tree writes the dict alone, byte for byte cProfile's layout. */
    struct fnp_sink dict;
    fnp_sink_memory(&dict);
    ck_assert_int_eq(fnp_pstats_write(&p, &dict), 0);
    ck_assert_int_eq(memcmp(s.buf, dict.buf, dict.len), 0);
    ck_assert_int_eq(memcmp(s.buf + dict.len, FNP_TREE_MAGIC, 8), 0);
    fnp_sink_free(&dict);
    fnp_sink_free(&s);
    fnp_profile_free(&p);
    fnp_profile_free(&q);
}
END_TEST

/* Reads buf; expects -EINVAL with a reason containing want. */
static void expect_refused(const char *buf, size_t len, const char *want)
{
    struct fnp_profile q;
    char why[256] = "";
    fnp_profile_init(&q);
    ck_assert_int_eq(fnp_pstats_read(&q, buf, len, why, sizeof(why)), -EINVAL);
    ck_assert_msg(strstr(why, want) && !strncmp(why, "offset ", 7), "'%s' lacks '%s'", why, want);
    ck_assert_uint_eq(q.nfuncs, 0);
    ck_assert_uint_eq(q.ntree, 0);
    fnp_profile_free(&q);
}

START_TEST(a_damaged_tree_is_refused_with_a_reason)
{
    struct fnp_profile p = sample();
    /* Metadata too: its bytes are cut and changed like the rest. */
    ck_assert_int_eq(fnp_profile_set_meta(&p, "program", "/usr/bin/app"), 0);
    struct fnp_sink s, d;
    write_file(&p, &s);
    fnp_sink_memory(&d);
    fnp_pstats_write(&p, &d);
    size_t at = d.len; /* the trailer's offset */
    char *buf = malloc(s.len);
    /* cut anywhere in the trailer */
    for (size_t cut = at + 1; cut < s.len; cut++) {
        memcpy(buf, s.buf, cut);
        expect_refused(buf, cut, "cut short");
    }
    /* any byte of the body changed */
    for (size_t i = at + FNP_TREE_HEADER; i < s.len; i++) {
        memcpy(buf, s.buf, s.len);
        buf[i] ^= 0x40;
        expect_refused(buf, s.len, "checksum");
    }
    /* any bit of the header's fields changed: version 4's checksum covers them, the tick
     * (36-43) included, which would multiply every time */
    for (size_t i = at + 8; i < at + FNP_TREE_HEADER; i++) {
        if (i >= at + 20 && i < at + 36)
            continue; /* the dict's checksum, the length and the checksum say it themselves */
        for (int bit = 0; bit < 8; bit++) {
            memcpy(buf, s.buf, s.len);
            buf[i] ^= (char)(1 << bit);
            struct fnp_profile q;
            fnp_profile_init(&q);
            ck_assert_msg(fnp_pstats_read(&q, buf, s.len, NULL, 0) == -EINVAL,
                          "header byte %zu bit %d changed, and the file still reads", i - at, bit);
            fnp_profile_free(&q);
        }
    }
    /* the tick, its checksum made right again (a writer that wrote it wrong): the dict */
    memcpy(buf, s.buf, s.len);
    double twice = 8e-10; /* the sample's 4e-10, doubled */
    memcpy(buf + at + 36, &twice, 8);
    uint32_t crc = fnp_tree_crc((unsigned char *)buf + at, buf + at + FNP_TREE_HEADER,
                                s.len - at - FNP_TREE_HEADER);
    for (int k = 0; k < 4; k++)
        buf[at + 32 + k] = (char)(crc >> (8 * k));
    expect_refused(buf, s.len, "the tick or the dict was changed");
    /* the dict changed under the tree (a name: the dict still reads) */
    memcpy(buf, s.buf, s.len);
    char *name = memmem(buf, at, "main", 4);
    ck_assert_ptr_nonnull(name);
    name[1] = 'b';
    expect_refused(buf, s.len, "dict");
    /* a newer version, an unknown unit, another dict's function count */
    memcpy(buf, s.buf, s.len);
    buf[at + 8] = 5;
    expect_refused(buf, s.len, "version 5");
    memcpy(buf, s.buf, s.len);
    buf[at + 12] = 9;
    expect_refused(buf, s.len, "unit");
    memcpy(buf, s.buf, s.len);
    buf[at + 16] ^= 1;
    expect_refused(buf, s.len, "functions");
    /* bytes after the tree */
    char *longer = malloc(s.len + 1);
    memcpy(longer, s.buf, s.len);
    longer[s.len] = 0;
    expect_refused(longer, s.len + 1, "present");
    free(longer);
    free(buf);
    fnp_sink_free(&s);
    fnp_sink_free(&d);
    fnp_profile_free(&p);
}
END_TEST

/* ---- metadata in the trailer (version 2) ---- */

static void put_uleb(struct fnp_sink *b, uint64_t v)
{
    do {
        unsigned char byte = (unsigned char)(v & 0x7f);
        v >>= 7;
        if (v)
            byte |= 0x80;
        fnp_sink_write(b, &byte, 1);
    } while (v);
}

static void put_text(struct fnp_sink *b, const char *str, size_t len)
{
    put_uleb(b, len);
    fnp_sink_write(b, str, len);
}

static void put_le(unsigned char *b, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        b[i] = (unsigned char)(v >> (8 * i));
}

/* p's dict, then a trailer of this version and kind around body[0, n), with the right
 * checksums and length: what a writer of that body would make. Caller frees out->buf. */
static void craft(const struct fnp_profile *p, uint32_t version, uint32_t kind, const void *body,
                  size_t n, struct fnp_sink *out)
{
    fnp_sink_memory(out);
    ck_assert_int_eq(fnp_pstats_write(p, out), 0);
    unsigned char h[FNP_TREE_HEADER];
    double tick = kind != FNP_TREE_TIME ? 1.0 : p->tick_seconds > 0 ? p->tick_seconds : 1e-9;
    uint64_t bits;
    memcpy(&bits, &tick, sizeof(bits));
    memcpy(h, FNP_TREE_MAGIC, 8);
    put_le(h + 8, version, 4);
    put_le(h + 12, kind, 4);
    put_le(h + 16, p->nfuncs, 4);
    put_le(h + 20, fnp_crc32(0, out->buf, out->len), 4);
    put_le(h + 24, n, 8);
    put_le(h + 36, bits, 8);
    put_le(h + 32, fnp_tree_crc(h, body, n), 4);
    fnp_sink_write(out, h, sizeof(h));
    fnp_sink_write(out, body, n);
}

/* Reads a file; expects it to load, and returns the profile (caller frees). */
static struct fnp_profile load(const struct fnp_sink *s)
{
    struct fnp_profile q;
    char why[256] = "";
    fnp_profile_init(&q);
    ck_assert_msg(fnp_pstats_read(&q, s->buf, s->len, why, sizeof(why)) == 0, "%s", why);
    return q;
}

START_TEST(metadata_round_trips_in_order_and_bounded)
{
    struct fnp_profile p = sample();
    char *big = malloc(FNP_TREE_MAX_META_VALUE + 8);
    char *long_key = malloc(FNP_TREE_MAX_META_KEY + 2);
    /* A value one byte too long whose last character is two bytes across the bound: cut
     * before that character, not inside it. */
    memset(big, 'v', FNP_TREE_MAX_META_VALUE + 8);
    memcpy(big + FNP_TREE_MAX_META_VALUE - 1, "\xc3\xa9", 2);
    big[FNP_TREE_MAX_META_VALUE + 1] = 0;
    memset(long_key, 'k', FNP_TREE_MAX_META_KEY + 1);
    long_key[FNP_TREE_MAX_META_KEY + 1] = 0;
    ck_assert_int_eq(fnp_profile_set_meta(&p, "program", "/usr/bin/app"), 0);
    ck_assert_int_eq(fnp_profile_set_meta(&p, "pid", "4242"), 0);
    ck_assert_int_eq(fnp_profile_set_meta(&p, long_key, "left out: key too long"), 0);
    ck_assert_int_eq(fnp_profile_set_meta(&p, "", "left out: no key"), 0);
    ck_assert_int_eq(fnp_profile_set_meta(&p, "na\xc3\xafve", "line 1\nline 2 <&>"), 0);
    ck_assert_int_eq(fnp_profile_set_meta(&p, "empty", ""), 0);
    ck_assert_int_eq(fnp_profile_set_meta(&p, "big", big), 0);
    long_key[FNP_TREE_MAX_META_KEY] = 0; /* the longest key that fits */
    ck_assert_int_eq(fnp_profile_set_meta(&p, long_key, "kept"), 0);
    struct fnp_sink s;
    write_file(&p, &s);
    struct fnp_profile q = load(&s);
    ck_assert_uint_eq(q.tree_kind, FNP_TREE_TIME);
    ck_assert_uint_eq(q.ntree, p.ntree);
    ck_assert_uint_eq(q.nmeta, 6);
    const char *keys[] = {"program", "pid", "na\xc3\xafve", "empty", "big", long_key};
    for (size_t i = 0; i < 6; i++)
        ck_assert_str_eq(q.meta[i].key, keys[i]);
    ck_assert_str_eq(q.meta[0].value, "/usr/bin/app");
    ck_assert_str_eq(q.meta[1].value, "4242");
    ck_assert_str_eq(q.meta[2].value, "line 1\nline 2 <&>");
    ck_assert_str_eq(q.meta[3].value, "");
    ck_assert_uint_eq(strlen(q.meta[4].value), FNP_TREE_MAX_META_VALUE - 1);
    ck_assert_int_eq(strncmp(q.meta[4].value, big, FNP_TREE_MAX_META_VALUE - 1), 0);
    ck_assert_str_eq(q.meta[5].value, "kept");
    /* Written again, the same bytes: the form is canonical. */
    struct fnp_sink s2;
    write_file(&q, &s2);
    ck_assert_uint_eq(s2.len, s.len);
    ck_assert_int_eq(memcmp(s.buf, s2.buf, s.len), 0);
    fnp_sink_free(&s2);
    fnp_sink_free(&s);
    fnp_profile_free(&q);
    fnp_profile_free(&p);
    free(big);
    free(long_key);
}
END_TEST

START_TEST(metadata_without_a_tree_keeps_a_trailer_of_its_own)
{
    struct fnp_profile p = sample();
    fnp_tree_clear(&p);
    struct fnp_sink dict, s;
    fnp_sink_memory(&dict);
    ck_assert_int_eq(fnp_pstats_write(&p, &dict), 0);
    ck_assert_int_eq(fnp_profile_set_meta(&p, "host", "box"), 0);
    write_file(&p, &s);
    ck_assert_uint_gt(s.len, dict.len + FNP_TREE_HEADER);
    ck_assert_int_eq(memcmp(s.buf + dict.len, FNP_TREE_MAGIC, 8), 0);
    ck_assert_int_eq(s.buf[dict.len + 12], FNP_TREE_NONE);
    struct fnp_profile q = load(&s);
    ck_assert_uint_eq(q.tree_kind, FNP_TREE_NONE);
    ck_assert_uint_eq(q.ntree, 0);
    ck_assert_uint_eq(q.nmeta, 1);
    ck_assert_str_eq(fnp_profile_meta(&q, "host"), "box");
    ck_assert_uint_eq(q.nfuncs, p.nfuncs);
    fnp_profile_free(&q);
    fnp_sink_free(&s);
    fnp_sink_free(&dict);
    fnp_profile_free(&p);
}
END_TEST

START_TEST(a_version_1_trailer_reads_without_metadata)
{
    /* Version 1 is version 4's body less the metadata count in front and the memory rows'
     * count at the end: a profile without metadata or memory writes each as one 0 byte. */
    struct fnp_profile p = sample();
    struct fnp_sink s, v1;
    write_file(&p, &s);
    struct fnp_sink d;
    fnp_sink_memory(&d);
    fnp_pstats_write(&p, &d);
    size_t body = d.len + FNP_TREE_HEADER;
    ck_assert_int_eq(s.buf[body], 0);
    ck_assert_int_eq(s.buf[s.len - 1], 0);
    craft(&p, 1, FNP_TREE_TIME, s.buf + body + 1, s.len - body - 2, &v1);
    struct fnp_profile q = load(&v1);
    ck_assert_uint_eq(q.tree_kind, FNP_TREE_TIME);
    ck_assert_uint_eq(q.ntree, p.ntree);
    ck_assert_uint_eq(q.nmeta, 0);
    for (size_t i = 0; i < p.ntree; i++)
        ck_assert_uint_eq(q.tree[i].ticks, p.tree[i].ticks);
    /* Version 1 had no kind 0, and its body has no metadata to read: a v2 body is
     * misread as threads, and refused. */
    fnp_sink_free(&v1);
    craft(&p, 1, FNP_TREE_NONE, "\0\0\0", 3, &v1);
    expect_refused(v1.buf, v1.len, "unit 0");
    fnp_profile_free(&q);
    fnp_sink_free(&v1);
    fnp_sink_free(&s);
    fnp_sink_free(&d);
    fnp_profile_free(&p);
}
END_TEST

/* A v2 body of one metadata pair (key, value of klen and vlen bytes), then no thread and no
 * node, in a kind-0 trailer: expects it refused with want in the reason. */
static void expect_meta_refused(const struct fnp_profile *p, const char *key, size_t klen,
                                const char *value, size_t vlen, const char *want)
{
    struct fnp_sink b, f;
    fnp_sink_memory(&b);
    put_uleb(&b, 1);
    put_text(&b, key, klen);
    put_text(&b, value, vlen);
    put_uleb(&b, 0);
    put_uleb(&b, 0);
    craft(p, 2, FNP_TREE_NONE, b.buf, b.len, &f);
    expect_refused(f.buf, f.len, want);
    fnp_sink_free(&f);
    fnp_sink_free(&b);
}

START_TEST(oversized_truncated_or_ambiguous_metadata_is_refused)
{
    struct fnp_profile p = sample();
    fnp_tree_clear(&p);
    char *big = calloc(1, FNP_TREE_MAX_META_VALUE + 2);
    memset(big, 'x', FNP_TREE_MAX_META_VALUE + 1);
    /* The bounds, each one past what a writer writes. */
    expect_meta_refused(&p, big, FNP_TREE_MAX_META_KEY + 1, "v", 1, "bytes of a metadata key");
    expect_meta_refused(&p, "k", 1, big, FNP_TREE_MAX_META_VALUE + 1, "bytes of a metadata value");
    expect_meta_refused(&p, "", 0, "v", 1, "metadata key (at least 1)");
    expect_meta_refused(&p, "k", 1, "a\0b", 3, "NUL");
    /* ... and the largest that fit are read. */
    struct fnp_sink b, f;
    fnp_sink_memory(&b);
    put_uleb(&b, 1);
    put_text(&b, big, FNP_TREE_MAX_META_KEY);
    put_text(&b, big, FNP_TREE_MAX_META_VALUE);
    put_uleb(&b, 0);
    put_uleb(&b, 0);
    craft(&p, 2, FNP_TREE_NONE, b.buf, b.len, &f);
    struct fnp_profile q = load(&f);
    ck_assert_uint_eq(q.nmeta, 1);
    ck_assert_uint_eq(strlen(q.meta[0].value), FNP_TREE_MAX_META_VALUE);
    fnp_profile_free(&q);
    fnp_sink_free(&f);
    fnp_sink_free(&b);
    /* More pairs than the bound, though the bytes are there. */
    fnp_sink_memory(&b);
    put_uleb(&b, FNP_TREE_MAX_META + 1);
    for (unsigned i = 0; i <= FNP_TREE_MAX_META; i++) {
        char k[16];
        int klen = snprintf(k, sizeof(k), "k%u", i);
        put_text(&b, k, (size_t)klen);
        put_text(&b, "", 0);
    }
    put_uleb(&b, 0);
    put_uleb(&b, 0);
    craft(&p, 2, FNP_TREE_NONE, b.buf, b.len, &f);
    expect_refused(f.buf, f.len, "4097 metadata pairs");
    fnp_sink_free(&f);
    /* Three pairs announced, two present, cut anywhere: refused wherever the bytes end;
     * and a count the bytes cannot hold, before anything is read. */
    fnp_sink_free(&b);
    fnp_sink_memory(&b);
    put_uleb(&b, 3);
    put_text(&b, "program", 7);
    put_text(&b, "/bin/x", 6);
    put_text(&b, "pid", 3);
    put_text(&b, "1", 1);
    for (size_t cut = 1; cut <= b.len; cut++) {
        craft(&p, 2, FNP_TREE_NONE, b.buf, cut, &f);
        expect_refused(f.buf, f.len, cut < b.len ? "calling-context tree: " : "cut short");
        fnp_sink_free(&f);
    }
    b.buf[0] = 100;
    craft(&p, 2, FNP_TREE_NONE, b.buf, b.len, &f);
    expect_refused(f.buf, f.len, "100 metadata pairs: more than the file holds");
    fnp_sink_free(&f);
    /* One key twice. */
    fnp_sink_free(&b);
    fnp_sink_memory(&b);
    put_uleb(&b, 3);
    put_text(&b, "pid", 3);
    put_text(&b, "1", 1);
    put_text(&b, "host", 4);
    put_text(&b, "h", 1);
    put_text(&b, "pid", 3);
    put_text(&b, "2", 1);
    put_uleb(&b, 0);
    put_uleb(&b, 0);
    craft(&p, 2, FNP_TREE_NONE, b.buf, b.len, &f);
    expect_refused(f.buf, f.len, "'pid' twice");
    fnp_sink_free(&f);
    /* No tree announced (kind 0), yet a thread and a node follow. */
    fnp_sink_free(&b);
    fnp_sink_memory(&b);
    put_uleb(&b, 0);
    put_uleb(&b, 1);
    put_text(&b, "thread 1", 8);
    put_uleb(&b, 1);
    static const unsigned char node[] = {0, 0, 0, 1, 5, 0, 0};
    fnp_sink_write(&b, node, sizeof(node));
    craft(&p, 2, FNP_TREE_NONE, b.buf, b.len, &f);
    expect_refused(f.buf, f.len, "no tree announced");
    fnp_sink_free(&f);
    fnp_sink_free(&b);
    free(big);
    fnp_profile_free(&p);
}
END_TEST

START_TEST(merge_keeps_the_first_metadata_and_adds_new_keys)
{
    struct fnp_profile x, y;
    struct fnp_tree_node t[] = {{0, ROOT, 1, 100, 0, 0, 0}};
    make(&x, t, 1, 1, 1e-9);
    make(&y, t, 1, 1, 1e-9);
    ck_assert_int_eq(fnp_profile_set_meta(&x, "program", "/bin/x"), 0);
    ck_assert_int_eq(fnp_profile_set_meta(&x, "pid", "1"), 0);
    ck_assert_int_eq(fnp_profile_set_meta(&y, "pid", "2"), 0);
    ck_assert_int_eq(fnp_profile_set_meta(&y, "epoch", "7"), 0);
    ck_assert_int_eq(fnp_profile_merge(&x, &y), 0);
    ck_assert_uint_eq(x.nmeta, 3);
    ck_assert_str_eq(x.meta[0].key, "program");
    ck_assert_str_eq(x.meta[1].value, "1");
    ck_assert_str_eq(x.meta[2].key, "epoch");
    ck_assert_str_eq(x.meta[2].value, "7");
    /* A profile without a tree drops the sum's tree, not its metadata. */
    struct fnp_profile z;
    fnp_profile_init(&z);
    fn(&z, "main");
    ck_assert_int_eq(fnp_profile_set_meta(&z, "host", "h"), 0);
    ck_assert_int_eq(fnp_profile_merge(&x, &z), 0);
    ck_assert_uint_eq(x.tree_kind, FNP_TREE_NONE);
    ck_assert_uint_eq(x.nmeta, 4);
    ck_assert_str_eq(fnp_profile_meta(&x, "host"), "h");
    fnp_profile_free(&x);
    fnp_profile_free(&y);
    fnp_profile_free(&z);
}
END_TEST

START_TEST(a_tree_rebuilt_from_edges_follows_their_shares)
{
    /* main calls a twice and b once; a calls c, b calls c; c calls itself. */
    struct fnp_profile p;
    fnp_profile_init(&p);
    uint32_t m = fn(&p, "main"), a = fn(&p, "a"), b = fn(&p, "b"), c = fn(&p, "c");
    p.funcs[m].st = (struct fnp_stats){1, 1, 0.1, 1.0};
    p.funcs[a].st = (struct fnp_stats){2, 2, 0.2, 0.6};
    p.funcs[b].st = (struct fnp_stats){1, 1, 0.1, 0.3};
    p.funcs[c].st = (struct fnp_stats){6, 3, 0.6, 0.6};
    struct {
        uint32_t from, to;
        struct fnp_stats st;
    } e[] = {{m, a, {2, 2, 0.2, 0.6}},
             {m, b, {1, 1, 0.1, 0.3}},
             {a, c, {2, 2, 0.4, 0.4}},
             {b, c, {1, 1, 0.2, 0.2}},
             {c, c, {3, 0, 0.0, 0.3}}};
    for (size_t i = 0; i < 5; i++) {
        int64_t k = fnp_profile_edge(&p, e[i].from, e[i].to);
        ck_assert_int_ge(k, 0);
        p.edges[k].st = e[i].st;
    }
    ck_assert_int_eq(fnp_tree_from_edges(&p, 0, 1000), 0);
    assert_preorder(&p);
    ck_assert_uint_eq(p.ntree, 5); /* main, a, a/c, b, b/c: c's self-edge stops the path */
    long ac = find(&p, "0/1/3"), bc = find(&p, "0/2/3");
    ck_assert_int_ge(ac, 0);
    ck_assert_int_ge(bc, 0);
    ck_assert_uint_eq(p.tree[0].ticks, 1000000000);
    ck_assert_uint_eq(p.tree[ac].ticks, 400000000);
    ck_assert_uint_eq(p.tree[bc].ncalls, 1);
    /* a floor of half the total keeps main and a only */
    ck_assert_int_eq(fnp_tree_from_edges(&p, 0.5, 1000), 0);
    ck_assert_uint_eq(p.ntree, 2);
    /* a budget of 3 nodes stops there and still makes a tree */
    ck_assert_int_eq(fnp_tree_from_edges(&p, 0, 3), 0);
    ck_assert_uint_eq(p.ntree, 3);
    assert_preorder(&p);
    fnp_profile_free(&p);
}
END_TEST

START_TEST(a_tree_rebuilt_from_edges_saturates_calls_past_2_64)
{
    /* A hostile file: main, called once, calls f 2^64 - 1 times and takes the largest
     * double's seconds. The estimates (f's calls on main's path, nanoseconds) are past
     * what a u64 holds: they saturate, rather than convert out of range (UBSan). */
    struct fnp_profile p;
    fnp_profile_init(&p);
    uint32_t m = fn(&p, "main"), f = fn(&p, "f");
    p.funcs[m].st = (struct fnp_stats){1, 1, 0.5, 1e300};
    p.funcs[f].st = (struct fnp_stats){UINT64_MAX, UINT64_MAX, 0.5, 1e300};
    int64_t e = fnp_profile_edge(&p, m, f);
    ck_assert_int_ge(e, 0);
    p.edges[e].st = (struct fnp_stats){UINT64_MAX, UINT64_MAX, 0.5, 1e300};
    ck_assert_int_eq(fnp_tree_from_edges(&p, 0, 1000), 0);
    long mf = find(&p, "0/1");
    ck_assert_int_ge(mf, 0);
    ck_assert_uint_eq(p.tree[mf].ncalls, UINT64_MAX);
    ck_assert_uint_eq(p.tree[mf].ticks, UINT64_MAX);
    fnp_profile_free(&p);
}
END_TEST

START_TEST(merge_rescales_the_most_negative_back_ticks)
{
    /* b's clock ticks twice as long as a's: its ticks double in the sum. Back ticks of
     * -2^63 (a hostile file's) saturate at -(2^63 - 1) rather than overflow a negation. */
    struct fnp_tree_node t[] = {{0, ROOT, 1, 100, 0, 0, 0}};
    struct fnp_tree_node u[] = {{0, ROOT, 1, 100, INT64_MIN, 0, 0}};
    struct fnp_profile a, b;
    make(&a, t, 1, 1, 1e-9);
    make(&b, u, 1, 1, 2e-9);
    ck_assert_int_eq(fnp_profile_merge(&a, &b), 0);
    ck_assert_uint_eq(a.ntree, 1);
    ck_assert_uint_eq(a.tree[0].ticks, 300);
    ck_assert_int_eq(a.tree[0].back, -INT64_MAX);
    fnp_profile_free(&a);
    fnp_profile_free(&b);
}
END_TEST

START_TEST(crc32_is_zlibs)
{
    ck_assert_uint_eq(fnp_crc32(0, "123456789", 9), 0xCBF43926u);
    ck_assert_uint_eq(fnp_crc32(fnp_crc32(0, "1234", 4), "56789", 5), 0xCBF43926u);
    ck_assert_uint_eq(fnp_crc32(0, "", 0), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("tree");
    TCase *tc = tcase_create("tree");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, set_merges_siblings_of_one_function_and_orders_them);
    tcase_add_test(tc, set_keeps_threads_apart_and_children_on_their_root_thread);
    tcase_add_test(tc, set_keeps_siblings_apart_that_say_differently_what_was_open);
    tcase_add_test(tc, set_rejects_a_child_before_its_parent_and_bad_indices);
    tcase_add_test(tc, values_give_own_time_and_widths_children_fit_in);
    tcase_add_test(tc, merge_adds_paths_and_rescales_the_other_clock);
    tcase_add_test(tc, merge_with_a_profile_without_tree_drops_the_tree);
    tcase_add_test(tc, merge_saturates_a_paths_calls_and_ticks);
    tcase_add_test(tc, a_written_tree_reads_back_the_same);
    tcase_add_test(tc, a_damaged_tree_is_refused_with_a_reason);
    tcase_add_test(tc, metadata_round_trips_in_order_and_bounded);
    tcase_add_test(tc, metadata_without_a_tree_keeps_a_trailer_of_its_own);
    tcase_add_test(tc, a_version_1_trailer_reads_without_metadata);
    tcase_add_test(tc, oversized_truncated_or_ambiguous_metadata_is_refused);
    tcase_add_test(tc, merge_keeps_the_first_metadata_and_adds_new_keys);
    tcase_add_test(tc, a_tree_rebuilt_from_edges_follows_their_shares);
    tcase_add_test(tc, a_tree_rebuilt_from_edges_saturates_calls_past_2_64);
    tcase_add_test(tc, merge_rescales_the_most_negative_back_ticks);
    tcase_add_test(tc, crc32_is_zlibs);
    suite_add_tcase(s, tc);
    return fnp_check_run(s);
}
/* SPDX-License-Identifier: MIT */
