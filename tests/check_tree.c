/*
 * The calling-context tree a profile keeps: canonical form, values, merging, the rebuild
 * from edges, and its file format (write, read back, refuse damage).
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
    /* the dict changed under the tree (a name: the dict still reads) */
    memcpy(buf, s.buf, s.len);
    char *name = memmem(buf, at, "main", 4);
    ck_assert_ptr_nonnull(name);
    name[1] = 'b';
    expect_refused(buf, s.len, "dict");
    /* a newer version, an unknown unit, another dict's function count */
    memcpy(buf, s.buf, s.len);
    buf[at + 8] = 2;
    expect_refused(buf, s.len, "version 2");
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
    tcase_add_test(tc, a_written_tree_reads_back_the_same);
    tcase_add_test(tc, a_damaged_tree_is_refused_with_a_reason);
    tcase_add_test(tc, a_tree_rebuilt_from_edges_follows_their_shares);
    tcase_add_test(tc, crc32_is_zlibs);
    suite_add_tcase(s, tc);
    return fnp_check_run(s);
}
