/*
 * The pstats reader: files CPython wrote (generated at test time by tests/data/pstats_gen.py
 * under every interpreter found, compared with what CPython's marshal read back from them),
 * every class of malformed input, and round trips through the model's writer.
 *
 * usage: check_pstats_read DATA_DIR, holding prof/NAME.prof and expect/NAME.expect
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"

static const char *data_dir;

/* ---- helpers --------------------------------------------------------------------------- */

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "%s: %s", path, strerror(errno));
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    ck_assert_ptr_nonnull(buf);
    for (;;) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap)
            break;
        cap *= 2;
        buf = realloc(buf, cap);
        ck_assert_ptr_nonnull(buf);
    }
    ck_assert(!ferror(f));
    fclose(f);
    *len = n;
    return buf;
}

/* Index of the function with this key, or -1; unlike fnp_profile_func, adds nothing. */
static int64_t find_func(const struct fnp_profile *p, const char *file, uint32_t line,
                         const char *name)
{
    for (size_t i = 0; i < p->nfuncs; i++) {
        const struct fnp_key *k = &p->funcs[i].key;
        if (k->line == line && !strcmp(k->file, file) && !strcmp(k->name, name))
            return (int64_t)i;
    }
    return -1;
}

static void assert_stats(const struct fnp_stats *st, uint64_t ncalls, uint64_t pcalls,
                         double tottime, double cumtime, const char *what)
{
    ck_assert_msg(st->ncalls == ncalls && st->pcalls == pcalls && st->tottime == tottime &&
                      st->cumtime == cumtime,
                  "%s: got %" PRIu64 "/%" PRIu64 " %a %a, want %" PRIu64 "/%" PRIu64 " %a %a", what,
                  st->ncalls, st->pcalls, st->tottime, st->cumtime, ncalls, pcalls, tottime,
                  cumtime);
}

/* A profile with one function, to check that a failed read leaves it as it was. */
static void sentinel(struct fnp_profile *p)
{
    fnp_profile_init(p);
    struct fnp_key k = {"sentinel.c", 1, "sentinel"};
    int64_t f = fnp_profile_func(p, &k);
    ck_assert_int_eq(f, 0);
    p->funcs[0].st = (struct fnp_stats){7, 5, 0.5, 0.75};
}

static void assert_sentinel(const struct fnp_profile *p)
{
    ck_assert_uint_eq(p->nfuncs, 1);
    ck_assert_uint_eq(p->nedges, 0);
    ck_assert_str_eq(p->funcs[0].key.name, "sentinel");
    assert_stats(&p->funcs[0].st, 7, 5, 0.5, 0.75, "sentinel");
}

/* ---- a tiny marshal writer for hand-made files ------------------------------------------ */

struct buf {
    unsigned char b[8192];
    size_t n;
    int flag; /* set the reference flag on the next type byte */
};

static void raw(struct buf *b, const void *p, size_t n)
{
    ck_assert_uint_le(b->n + n, sizeof(b->b));
    memcpy(b->b + b->n, p, n);
    b->n += n;
}

static void type(struct buf *b, char c)
{
    unsigned char t = (unsigned char)c | (b->flag ? 0x80 : 0);
    b->flag = 0;
    raw(b, &t, 1);
}

static void le32(struct buf *b, uint32_t v)
{
    unsigned char x[4] = {v & 0xff, v >> 8 & 0xff, v >> 16 & 0xff, v >> 24 & 0xff};
    raw(b, x, 4);
}

static void put_double(struct buf *b, double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    le32(b, (uint32_t)u);
    le32(b, (uint32_t)(u >> 32));
}

static void put_str(struct buf *b, const char *s)
{
    size_t n = strlen(s);
    type(b, 'z');
    unsigned char len = (unsigned char)n;
    raw(b, &len, 1);
    raw(b, s, n);
}

/*
 * Appends bytes described by fmt; spaces are ignored.
 *   {  0     dict begin, dict end          ^    flag the next type byte (reference)
 *   (n  small tuple of n (int arg; digits after '(' only repeat it for the eye)
 *   N   None                               i    int (int arg)       g  float (double arg)
 *   s   'z' str (char * arg)               r    reference (int arg)
 *   K   key (char *file, int line, char *name)
 *   V   function value up to its callers dict: (int pcalls, int ncalls, double tt, ct)
 *   E   edge value (int ncalls, int pcalls, double tt, double ct)
 *   b   one raw byte (int arg)            L    raw little-endian int32 (int arg)
 */
static void emit(struct buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    for (const char *c = fmt; *c; c++) {
        switch (*c) {
        case ' ':
            break;
        case '^':
            b->flag = 1;
            break;
        case '{':
        case '0':
            type(b, *c);
            break;
        case '(': {
            type(b, ')');
            unsigned char n = (unsigned char)va_arg(ap, int);
            raw(b, &n, 1);
            while (c[1] >= '1' && c[1] <= '9') /* "(3": the count, for the reader's eye */
                c++;
            break;
        }
        case 'N':
            type(b, 'N');
            break;
        case 'i':
            type(b, 'i');
            le32(b, (uint32_t)va_arg(ap, int));
            break;
        case 'g':
            type(b, 'g');
            put_double(b, va_arg(ap, double));
            break;
        case 's':
            put_str(b, va_arg(ap, const char *));
            break;
        case 'r':
            type(b, 'r');
            le32(b, (uint32_t)va_arg(ap, int));
            break;
        case 'K': {
            const char *file = va_arg(ap, const char *);
            int line = va_arg(ap, int);
            const char *name = va_arg(ap, const char *);
            emit(b, "(s i s", 3, file, line, name);
            break;
        }
        case 'V':
        case 'E': {
            int x = va_arg(ap, int), y = va_arg(ap, int);
            double tt = va_arg(ap, double), ct = va_arg(ap, double);
            emit(b, "(i i g g", *c == 'V' ? 5 : 4, x, y, tt, ct);
            break;
        }
        case 'b': {
            unsigned char x = (unsigned char)va_arg(ap, int);
            raw(b, &x, 1);
            break;
        }
        case 'L':
            le32(b, (uint32_t)va_arg(ap, int));
            break;
        default:
            ck_abort_msg("bad emit format '%c'", *c);
        }
    }
    va_end(ap);
}

/* Reads b into a profile holding a sentinel: must fail with -EINVAL, a reason naming an
 * offset and containing want, and leave the profile as it was. */
static void reject(const struct buf *b, const char *want)
{
    struct fnp_profile p;
    char why[512] = "";
    sentinel(&p);
    int rc = fnp_pstats_read(&p, b->b, b->n, why, sizeof(why));
    ck_assert_msg(rc == -EINVAL, "want -EINVAL (%s), got %d (%s)", want, rc, why);
    ck_assert_msg(!strncmp(why, "offset ", 7), "reason without offset: %s", why);
    ck_assert_msg(strstr(why, want), "reason \"%s\" does not say \"%s\"", why, want);
    ck_assert_msg(!strchr(why, '\n'), "reason is not one line: %s", why);
    assert_sentinel(&p);
    fnp_profile_free(&p);
}

static void accept(const struct buf *b, struct fnp_profile *p)
{
    char why[512] = "";
    fnp_profile_init(p);
    int rc = fnp_pstats_read(p, b->b, b->n, why, sizeof(why));
    ck_assert_msg(rc == 0, "rc %d: %s", rc, why);
}

#define REJECT_TEST(name, want, ...)                                                               \
    START_TEST(name)                                                                               \
    {                                                                                              \
        struct buf b = {0};                                                                        \
        emit(&b, __VA_ARGS__);                                                                     \
        reject(&b, want);                                                                          \
    }                                                                                              \
    END_TEST

/* ---- files CPython wrote ---------------------------------------------------------------- */

static size_t unhex(const char *h, char *out, size_t cap)
{
    size_t n = strlen(h) / 2;
    ck_assert_uint_lt(n, cap);
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        ck_assert(sscanf(h + 2 * i, "%2x", &v) == 1);
        out[i] = (char)v;
    }
    out[n] = '\0';
    return n;
}

struct cpython_file {
    char prof[8192];
    char expect[8192];
    char name[256];
};

/* Every DATA_DIR/expect/X.expect with its DATA_DIR/prof/X.prof. */
static size_t list_files(struct cpython_file **out)
{
    char dir[4096];
    ck_assert_uint_lt(strlen(data_dir), 4000);
    snprintf(dir, sizeof(dir), "%s/expect", data_dir);
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "%s: %s (run pstats_gen.py first)", dir, strerror(errno));
    struct cpython_file *files = NULL;
    size_t n = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t len = strlen(de->d_name);
        if (len < 8 || strcmp(de->d_name + len - 7, ".expect"))
            continue;
        files = realloc(files, (n + 1) * sizeof(*files));
        ck_assert_ptr_nonnull(files);
        struct cpython_file *f = &files[n++];
        snprintf(f->name, sizeof(f->name), "%.*s", (int)(len - 7), de->d_name);
        snprintf(f->expect, sizeof(f->expect), "%s/%s", dir, de->d_name);
        snprintf(f->prof, sizeof(f->prof), "%s/prof/%s.prof", data_dir, f->name);
    }
    closedir(d);
    *out = files;
    return n;
}

static void compare_with_expect(const struct fnp_profile *p, const char *expect_path,
                                const char *name)
{
    size_t len;
    char *text = read_file(expect_path, &len);
    text = realloc(text, len + 1);
    text[len] = '\0';
    size_t nf = 0, ne = 0;
    static char f1[4096], n1[4096], f2[4096], n2[4096];
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char hf1[8200], hn1[8200], hf2[8200], hn2[8200], tt[64], ct[64];
        uint32_t l1, l2;
        uint64_t a, b;
        if (line[0] == 'F') {
            ck_assert(sscanf(line, "F %8199s %" SCNu32 " %8199s %" SCNu64 " %" SCNu64 " %63s %63s",
                             hf1, &l1, hn1, &a, &b, tt, ct) == 7);
            unhex(hf1, f1, sizeof(f1));
            unhex(hn1, n1, sizeof(n1));
            /* The file's order is the model's: pstats sorts ties in it. */
            ck_assert_msg(nf < p->nfuncs, "%s: fewer functions than Python read", name);
            const struct fnp_key *k = &p->funcs[nf].key;
            ck_assert_msg(!strcmp(k->file, f1) && k->line == l1 && !strcmp(k->name, n1),
                          "%s: function %zu is %s:%u(%s), Python read %s:%u(%s)", name, nf, k->file,
                          k->line, k->name, f1, l1, n1);
            /* The file's tuple is (pcalls, ncalls, ...). */
            assert_stats(&p->funcs[nf].st, b, a, strtod(tt, NULL), strtod(ct, NULL), name);
            nf++;
        } else {
            ck_assert(sscanf(line,
                             "E %8199s %" SCNu32 " %8199s %8199s %" SCNu32 " %8199s %" SCNu64
                             " %" SCNu64 " %63s %63s",
                             hf1, &l1, hn1, hf2, &l2, hn2, &a, &b, tt, ct) == 10);
            unhex(hf1, f1, sizeof(f1));
            unhex(hn1, n1, sizeof(n1));
            unhex(hf2, f2, sizeof(f2));
            unhex(hn2, n2, sizeof(n2));
            int64_t callee = find_func(p, f1, l1, n1), caller = find_func(p, f2, l2, n2);
            ck_assert_msg(callee >= 0 && caller >= 0, "%s: edge %s -> %s missing", name, n2, n1);
            int64_t e = fnp_profile_find_edge(p, (uint32_t)caller, (uint32_t)callee);
            ck_assert_msg(e >= 0, "%s: edge %s -> %s missing", name, n2, n1);
            /* The edge's tuple is (ncalls, pcalls, ...). */
            assert_stats(&p->edges[e].st, a, b, strtod(tt, NULL), strtod(ct, NULL), name);
            ne++;
        }
    }
    ck_assert_msg(nf == p->nfuncs, "%s: %zu functions, Python read %zu", name, p->nfuncs, nf);
    ck_assert_msg(ne == p->nedges, "%s: %zu edges, Python read %zu", name, p->nedges, ne);
    free(text);
}

START_TEST(cpython_files_load_as_cpython_reads_them)
{
    struct cpython_file *files;
    size_t n = list_files(&files);
    /* pstats_gen.py writes 4 files plus one per marshal version (5): no vacuous pass. */
    ck_assert_uint_ge(n, 9);
    int cprofile = 0, v3 = 0, v4 = 0;
    for (size_t i = 0; i < n; i++) {
        cprofile += strstr(files[i].name, "-cprofile") != NULL;
        v3 += strstr(files[i].name, "-synthetic-v3") != NULL;
        v4 += strstr(files[i].name, "-synthetic-v4") != NULL;
        size_t len;
        char *data = read_file(files[i].prof, &len);
        struct fnp_profile p;
        char why[512] = "";
        fnp_profile_init(&p);
        int rc = fnp_pstats_read(&p, data, len, why, sizeof(why));
        ck_assert_msg(rc == 0, "%s: %d: %s", files[i].prof, rc, why);
        compare_with_expect(&p, files[i].expect, files[i].name);
        fnp_profile_free(&p);
        free(data);
    }
    ck_assert(cprofile && v3 && v4);
    free(files);
}
END_TEST

START_TEST(cpython_files_truncated_anywhere_fail_cleanly)
{
    struct cpython_file *files;
    size_t n = list_files(&files);
    for (size_t i = 0; i < n; i++) {
        size_t len;
        char *data = read_file(files[i].prof, &len);
        for (size_t cut = 0; cut < len; cut++) {
            /* A copy of exactly cut bytes: a read past it shows under ASan/valgrind. */
            char *part = malloc(cut ? cut : 1);
            memcpy(part, data, cut);
            struct fnp_profile p;
            char why[512] = "";
            sentinel(&p);
            int rc = fnp_pstats_read(&p, part, cut, why, sizeof(why));
            ck_assert_msg(rc == -EINVAL, "%s cut at %zu: rc %d", files[i].name, cut, rc);
            ck_assert_msg(!strncmp(why, "offset ", 7), "%s cut at %zu: %s", files[i].name, cut,
                          why);
            assert_sentinel(&p);
            fnp_profile_free(&p);
            free(part);
        }
        free(data);
    }
    free(files);
}
END_TEST

/* Not a proof (the fuzzer searches further), but every byte of real files changed in
 * three ways must give a profile or a reason, never a crash or an invalid profile. Two
 * kinds of file per interpreter: cProfile's own and the one of every type code. */
START_TEST(cpython_files_with_a_byte_changed_never_crash)
{
    struct cpython_file *files;
    size_t n = list_files(&files);
    static const unsigned char flips[] = {0x80, 0xff, 0x01};
    for (size_t i = 0; i < n; i++) {
        if (!strstr(files[i].name, "-cprofile") && !strstr(files[i].name, "-synthetic-v4"))
            continue;
        size_t len;
        char *data = read_file(files[i].prof, &len);
        for (size_t at = 0; at < len; at++) {
            for (size_t k = 0; k < sizeof(flips); k++) {
                data[at] ^= (char)flips[k];
                struct fnp_profile p;
                char why[512] = "";
                fnp_profile_init(&p);
                int rc = fnp_pstats_read(&p, data, len, why, sizeof(why));
                ck_assert_msg(rc == 0 || rc == -EINVAL, "rc %d", rc);
                ck_assert(rc == 0 || why[0]);
                for (size_t e = 0; e < p.nedges; e++)
                    ck_assert(p.edges[e].caller < p.nfuncs && p.edges[e].callee < p.nfuncs);
                for (size_t f = 0; f < p.nfuncs; f++)
                    ck_assert(isfinite(p.funcs[f].st.tottime) && p.funcs[f].st.tottime >= 0 &&
                              isfinite(p.funcs[f].st.cumtime) && p.funcs[f].st.cumtime >= 0);
                fnp_profile_free(&p);
                data[at] ^= (char)flips[k];
            }
        }
        free(data);
    }
    free(files);
}
END_TEST

/* ---- values a reader must take ---------------------------------------------------------- */

START_TEST(smallest_file_of_pstats_md_loads)
{
    static const unsigned char bytes[] = {
        0x7b, 0x29, 0x03, 0x7a, 0x03, 0x61, 0x2e, 0x63, 0x69, 0x03, 0x00, 0x00, 0x00,
        0x7a, 0x01, 0x66, 0x29, 0x05, 0x69, 0x01, 0x00, 0x00, 0x00, 0x69, 0x01, 0x00,
        0x00, 0x00, 0x67, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xe0, 0x3f, 0x67, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0xe0, 0x3f, 0x7b, 0x30, 0x30};
    struct fnp_profile p;
    char why[256];
    fnp_profile_init(&p);
    ck_assert_int_eq(fnp_pstats_read(&p, bytes, sizeof(bytes), why, sizeof(why)), 0);
    ck_assert_uint_eq(p.nfuncs, 1);
    ck_assert_uint_eq(p.nedges, 0);
    ck_assert_str_eq(p.funcs[0].key.file, "a.c");
    ck_assert_uint_eq(p.funcs[0].key.line, 3);
    ck_assert_str_eq(p.funcs[0].key.name, "f");
    assert_stats(&p.funcs[0].st, 1, 1, 0.5, 0.5, "a.c:3(f)");
    fnp_profile_free(&p);
}
END_TEST

START_TEST(worked_example_edges_keep_total_first)
{
    /* docs/pstats.md's fib: the function tuple is (pcalls, ncalls, ...), the edge's (ncalls,
     * pcalls, ...). */
    struct buf b = {0};
    struct fnp_profile p;
    emit(&b, "{ K V {0", "m.c", 1, "main", 1, 1, 100.0, 137.0);
    emit(&b, "K V { K E K E 0", "f.c", 2, "fib", 1, 15, 15.0, 15.0, "f.c", 2, "fib", 14, 2, 14.0,
         14.0, "m.c", 1, "main", 1, 1, 1.0, 15.0);
    emit(&b, "0");
    accept(&b, &p);
    ck_assert_uint_eq(p.nfuncs, 2);
    ck_assert_uint_eq(p.nedges, 2);
    assert_stats(&p.funcs[1].st, 15, 1, 15.0, 15.0, "fib");
    int64_t e = fnp_profile_find_edge(&p, 1, 1);
    ck_assert_int_ge(e, 0);
    assert_stats(&p.edges[e].st, 14, 2, 14.0, 14.0, "fib->fib");
    e = fnp_profile_find_edge(&p, 0, 1);
    ck_assert_int_ge(e, 0);
    assert_stats(&p.edges[e].st, 1, 1, 1.0, 15.0, "main->fib");
    fnp_profile_free(&p);
}
END_TEST

START_TEST(long_ints_up_to_uint64_max_load)
{
    /* 2^64 - 1 in 15-bit digits: four of 0x7fff, then 0xf. */
    struct buf b = {0};
    struct fnp_profile p;
    emit(&b, "{ K (", "a.c", 3, "f", 5);
    emit(&b, "b L b b b b b b b b b b", 'l', 5, 0xff, 0x7f, 0xff, 0x7f, 0xff, 0x7f, 0xff, 0x7f,
         0x0f, 0x00);
    emit(&b, "b L b b", 'l', 1, 0x01, 0x00); /* ncalls 1 as a long */
    emit(&b, "g g {0 0", 0.0, 0.0);
    accept(&b, &p);
    ck_assert_uint_eq(p.funcs[0].st.pcalls, UINT64_MAX);
    ck_assert_uint_eq(p.funcs[0].st.ncalls, 1);
    fnp_profile_free(&p);
}
END_TEST

START_TEST(old_type_codes_load)
{
    /* What marshal versions 0-3 and Python 2 wrote: '(' (tuple with an int32 count), 'u',
     * 'I' (int64), 't' (interned), 'f' (text float). */
    struct buf b = {0};
    struct fnp_profile p;
    /* Key ('a.c', 9, 'f'), value (0, 2, 0.25, 1.0, {}). */
    emit(&b, "{ b L", '(', 3);
    emit(&b, "b L b b b", 'u', 3, 'a', '.', 'c');
    emit(&b, "b L L", 'I', 9, 0);
    emit(&b, "b L b", 't', 1, 'f');
    emit(&b, "b L i i", '(', 5, 0, 2);
    emit(&b, "b b b b b b", 'f', 4, '0', '.', '2', '5');
    emit(&b, "b b b b b", 'f', 3, '1', 'e', '0');
    emit(&b, "{0 0");
    accept(&b, &p);
    ck_assert_str_eq(p.funcs[0].key.file, "a.c");
    ck_assert_uint_eq(p.funcs[0].key.line, 9);
    assert_stats(&p.funcs[0].st, 2, 0, 0.25, 1.0, "old codes");
    fnp_profile_free(&p);
}
END_TEST

START_TEST(latin1_strings_become_utf8)
{
    /* 'z' strings are Latin-1 to CPython: a byte 0xe9 is U+00E9. */
    struct buf b = {0};
    struct fnp_profile p;
    emit(&b, "{ (3 b b b b b b i b b b", 3, 'z', 4, 'c', 'a', 'f', 0xe9, 1, 'z', 1, 'g');
    emit(&b, "V {0 0", 1, 1, 0.0, 0.0);
    accept(&b, &p);
    ck_assert_str_eq(p.funcs[0].key.file, "caf\xc3\xa9");
    fnp_profile_free(&p);
}
END_TEST

START_TEST(surrogate_escapes_load_as_cpython_writes_them)
{
    /* A file name that was not UTF-8 reaches marshal as U+DCFF, written ED B3 BF. */
    struct buf b = {0};
    struct fnp_profile p;
    emit(&b, "{ (3 b L b b b i s V {0 0", 3, 'u', 3, 0xed, 0xb3, 0xbf, 1, "f", 1, 1, 0.0, 0.0);
    accept(&b, &p);
    ck_assert_str_eq(p.funcs[0].key.file, "\xed\xb3\xbf");
    fnp_profile_free(&p);
}
END_TEST

START_TEST(references_number_objects_in_preorder)
{
    /* ^K numbers the tuple 0, its file 1, line 2, name 3 (pre-order); the second key is
     * built from references, the caller key is a reference to the whole first key. */
    struct buf b = {0};
    struct fnp_profile p;
    emit(&b, "{ ^(3 ^s ^i ^s V {0", 3, "a.c", 5, "f", 1, 1, 0.0, 0.0);
    emit(&b, "(3 r i r V { r E 0", 3, 1, 6, 3, 2, 2, 0.0, 0.0, 0, 1, 1, 0.0, 0.0);
    emit(&b, "0");
    accept(&b, &p);
    ck_assert_uint_eq(p.nfuncs, 2);
    ck_assert_str_eq(p.funcs[1].key.file, "a.c");
    ck_assert_uint_eq(p.funcs[1].key.line, 6);
    ck_assert_str_eq(p.funcs[1].key.name, "f");
    ck_assert_int_ge(fnp_profile_find_edge(&p, 0, 1), 0);
    fnp_profile_free(&p);
}
END_TEST

START_TEST(singletons_and_references_take_no_number)
{
    /* CPython ignores the flag on None, True, False and on references: (^N, ^i 7, r 0)
     * has r 0 naming the int. */
    struct buf b = {0};
    struct fnp_marshal_doc d;
    char why[256];
    emit(&b, "(3 b ^i ^r", 3, 'N' | 0x80, 7, 0);
    ck_assert_int_eq(fnp_marshal_read(&d, b.b, b.n, why, sizeof(why)), 0);
    const struct fnp_mval *t = &d.vals[d.root];
    ck_assert_int_eq(t->kind, FNP_MVAL_TUPLE);
    ck_assert_uint_eq(d.nrefs, 1);
    const struct fnp_mval *last = &d.vals[d.items[t->v.first + 2]];
    ck_assert_int_eq(last->kind, FNP_MVAL_INT);
    ck_assert_uint_eq(last->v.u, 7);
    fnp_marshal_doc_free(&d);
}
END_TEST

START_TEST(shared_callers_dict_loads)
{
    /* Two functions holding one empty dict object: the second is a reference to it. */
    struct buf b = {0};
    struct fnp_profile p;
    emit(&b, "{ K V ^{0", "a.c", 1, "f", 1, 1, 0.0, 0.0);
    emit(&b, "K V r 0", "a.c", 2, "g", 1, 1, 0.0, 0.0, 0);
    accept(&b, &p);
    ck_assert_uint_eq(p.nfuncs, 2);
    fnp_profile_free(&p);
}
END_TEST

START_TEST(flagged_dict_end_ends_a_dict)
{
    struct buf b = {0};
    struct fnp_profile p;
    emit(&b, "{ K V { b b", "a.c", 1, "f", 1, 1, 0.0, 0.0, 0xb0, 0xb0);
    accept(&b, &p);
    ck_assert_uint_eq(p.nfuncs, 1);
    fnp_profile_free(&p);
}
END_TEST

START_TEST(int_times_load_as_floats)
{
    struct buf b = {0};
    struct fnp_profile p;
    emit(&b, "{ K (5 i i i i {0 0", "a.c", 1, "f", 5, 1, 1, 2, 3);
    accept(&b, &p);
    assert_stats(&p.funcs[0].st, 1, 1, 2.0, 3.0, "int times");
    fnp_profile_free(&p);
}
END_TEST

START_TEST(caller_missing_at_top_level_becomes_a_function)
{
    /* pstats tolerates it; the model needs an index, and the writer then lists it. */
    struct buf b = {0};
    struct fnp_profile p;
    emit(&b, "{ K V { K E 0 0", "a.c", 1, "f", 1, 1, 0.5, 0.5, "b.c", 2, "g", 1, 1, 0.5, 0.5);
    accept(&b, &p);
    ck_assert_uint_eq(p.nfuncs, 2);
    ck_assert_str_eq(p.funcs[1].key.name, "g");
    assert_stats(&p.funcs[1].st, 0, 0, 0.0, 0.0, "caller only");
    ck_assert_int_ge(fnp_profile_find_edge(&p, 1, 0), 0);
    fnp_profile_free(&p);
}
END_TEST

/* ---- malformed input: one test per class ------------------------------------------------ */

START_TEST(empty_input_fails)
{
    struct buf b = {0};
    reject(&b, "end of data");
}
END_TEST

START_TEST(oversized_input_fails_before_reading)
{
    static const char one = '{';
    struct fnp_profile p;
    char why[256];
    sentinel(&p);
    /* The length check comes before any byte is read, so the small buffer is safe. */
    ck_assert_int_eq(fnp_pstats_read(&p, &one, (size_t)FNP_MARSHAL_MAX_INPUT + 1, why, sizeof(why)),
                     -EFBIG);
    assert_sentinel(&p);
    fnp_profile_free(&p);
}
END_TEST

REJECT_TEST(top_level_not_a_dict_fails, "holds a tuple, not a dict", "(1 i", 1, 5)
REJECT_TEST(empty_dict_fails, "empty dict", "{0")
REJECT_TEST(bytes_after_the_dict_fail, "1 bytes follow the dict", "{ K V {0 0 b", "a.c", 3, "f", 1,
            1, 0.5, 0.5, 'N')
REJECT_TEST(missing_dict_end_fails, "no '0' ending it", "{ K V {0", "a.c", 3, "f", 1, 1, 0.5, 0.5)
REJECT_TEST(code_object_fails, "code object", "{ b", 'c')
REJECT_TEST(unknown_type_code_fails, "unknown type code '?'", "{ b", '?')
REJECT_TEST(unknown_binary_type_code_fails, "unknown type code 0x01", "{ b", 0x01)
REJECT_TEST(dict_end_between_key_and_value_fails, "between a key and its value", "{ K 0", "a.c", 3,
            "f")
REJECT_TEST(dict_end_inside_a_tuple_fails, "dict end '0' where an object", "{ (3 s 0", 3, "a.c")
REJECT_TEST(reference_to_unnumbered_object_fails, "reference 0 to an unnumbered object", "{ r", 0)
REJECT_TEST(negative_reference_fails, "reference -1", "{ ^K V { r", "a.c", 3, "f", 1, 1, 0.5, 0.5,
            -1)
REJECT_TEST(reference_past_the_numbered_fails, "reference 5 to an unnumbered object (1 ",
            "{ ^K V { r", "a.c", 3, "f", 1, 1, 0.5, 0.5, 5)
REJECT_TEST(reference_to_a_tuple_being_read_fails, "still being read", "{ ^(3 s i r", 3, "a.c", 1,
            0)
REJECT_TEST(reference_to_the_dict_being_read_fails, "still being read", "^{ K r", "a.c", 1, "f", 0)
REJECT_TEST(truncated_reference_fails, "end of data", "{ ^K V { b b", "a.c", 3, "f", 1, 1, 0.5, 0.5,
            'r', 0)
REJECT_TEST(huge_string_length_fails, "string length is 2147483647 but only", "{ b L", 'u',
            0x7fffffff)
REJECT_TEST(negative_string_length_fails, "string length is negative", "{ b L", 'u', -1)
REJECT_TEST(string_longer_than_the_file_fails, "string length is 9 but only 2", "{ b b b b", 'z', 9,
            'a', 'b')
REJECT_TEST(huge_tuple_count_fails, "item count is 2147483647", "{ b L", '(', 0x7fffffff)
REJECT_TEST(negative_tuple_count_fails, "item count is negative", "{ b L", '(', -5)
REJECT_TEST(small_tuple_longer_than_the_file_fails, "item count is 200", "{ (", 200)
/* The outer tuple still owes an item: the inner one may not count that byte too. */
REJECT_TEST(nested_counts_cannot_claim_the_same_bytes, "item count is 2 but only 1",
            "{ b L b L b b", '(', 2, '(', 2, 'N', 'N')
REJECT_TEST(huge_list_count_fails, "item count is 1000000", "{ b L", '[', 1000000)
REJECT_TEST(long_of_six_digits_fails, "beyond 64 bits", "{ b L L L L", 'l', 6, 1, 1, 1)
REJECT_TEST(long_of_huge_digit_count_fails, "beyond 64 bits", "{ b L", 'l', 0x7fffffff)
REJECT_TEST(long_past_uint64_fails, "beyond 64 bits", "{ b L L L b b", 'l', 5, 0x7fff7fff,
            0x7fff7fff, 0x10, 0x00)
REJECT_TEST(long_with_zero_top_digit_fails, "unnormalized", "{ b L L", 'l', 2, 1)
REJECT_TEST(long_digit_over_15_bits_fails, "digit 0x8000 out of range", "{ b L b b", 'l', 1, 0x00,
            0x80)
REJECT_TEST(truncated_long_fails, "end of data", "{ b L b b", 'l', 2, 0x01, 0x00)
REJECT_TEST(invalid_utf8_fails, "invalid UTF-8", "{ b L b b", 'u', 2, 0xc3, 0x28)
REJECT_TEST(overlong_utf8_fails, "invalid UTF-8", "{ b L b b", 'u', 2, 0xc0, 0xaf)
REJECT_TEST(text_float_that_is_not_a_number_fails, "not a number", "{ K (5 i i b b b b b", "a.c", 3,
            "f", 5, 1, 1, 'f', 3, 'a', 'b', 'c')
REJECT_TEST(hex_text_float_fails, "not a number", "{ K (5 i i b b b b b b", "a.c", 3, "f", 5, 1, 1,
            'f', 4, '0', 'x', '1', '0')
REJECT_TEST(truncated_float_fails, "float needs 8 bytes", "{ K (5 i i b b b", "a.c", 3, "f", 5, 1,
            1, 'g', 0, 0)

static void deep(struct buf *b, int levels)
{
    emit(b, "{ ");
    for (int i = 0; i < levels; i++)
        emit(b, "(", 1);
    emit(b, "N");
}

START_TEST(deep_nesting_fails)
{
    struct buf b = {0};
    deep(&b, 200);
    reject(&b, "nested deeper than 16");
}
END_TEST

/* Shape */
REJECT_TEST(key_not_a_tuple_fails, "key is a str, not a 3-tuple", "{ s V {0 0", "a.c", 1, 1, 0.0,
            0.0)
REJECT_TEST(key_of_two_items_fails, "key is a 2-tuple", "{ (2 s i V {0 0", 2, "a.c", 1, 1, 1, 0.0,
            0.0)
REJECT_TEST(key_file_not_a_str_fails, "key file name is an int", "{ (3 i i s V {0 0", 3, 1, 1, "f",
            1, 1, 0.0, 0.0)
REJECT_TEST(key_file_of_bytes_fails, "key file name is a bytes", "{ (3 b L b i s V {0 0", 3, 's', 1,
            'a', 1, "f", 1, 1, 0.0, 0.0)
REJECT_TEST(key_line_not_an_int_fails, "line number is a float", "{ (3 s g s V {0 0", 3, "a.c", 1.0,
            "f", 1, 1, 0.0, 0.0)
REJECT_TEST(key_line_negative_fails, "line number -1 is out of range", "{ K V {0 0", "a.c", -1, "f",
            1, 1, 0.0, 0.0)
REJECT_TEST(key_line_past_uint32_fails, "line number 4294967296 is out of range",
            "{ (3 s b L b b b b b b s V {0 0", 3, "a.c", 'l', 3, 0, 0, 0, 0, 4, 0, "f", 1, 1, 0.0,
            0.0)
REJECT_TEST(key_with_nul_fails, "NUL", "{ (3 b b b b b i s V {0 0", 3, 'z', 3, 'a', 0, 'c', 1, "f",
            1, 1, 0.0, 0.0)
REJECT_TEST(value_of_four_items_fails, "value is a 4-tuple, not a 5-tuple", "{ K (4 i i g g 0",
            "a.c", 1, "f", 4, 1, 1, 0.0, 0.0)
REJECT_TEST(value_a_list_fails, "value is a list", "{ K b L 0", "a.c", 1, "f", '[', 0)
REJECT_TEST(callers_not_a_dict_fails, "callers is None, not a dict", "{ K V b 0", "a.c", 1, "f", 1,
            1, 0.0, 0.0, 'N')
REJECT_TEST(edge_of_five_items_fails, "value is a 5-tuple, not a 4-tuple",
            "{ K V { K (5 i i g g i 0 0", "a.c", 1, "f", 1, 1, 0.0, 0.0, "a.c", 1, "f", 5, 1, 1,
            0.0, 0.0, 1)
REJECT_TEST(profile_module_edges_fail, "pure-Python profile", "{ K V { K i 0 0", "a.c", 1, "f", 1,
            1, 0.0, 0.0, "a.c", 1, "f", 3)
REJECT_TEST(caller_key_not_a_tuple_fails, "caller key is an int", "{ K V { i E 0 0", "a.c", 1, "f",
            1, 1, 0.0, 0.0, 4, 1, 1, 0.0, 0.0)
REJECT_TEST(duplicate_key_fails, "a.c:1(f): the key appears twice", "{ K V {0 K V {0 0", "a.c", 1,
            "f", 1, 1, 0.0, 0.0, "a.c", 1, "f", 1, 1, 0.0, 0.0)
/* 'z' "a.c" and 'u' "a.c" are one str to Python. */
REJECT_TEST(duplicate_key_in_another_encoding_fails, "appears twice",
            "{ K V {0 (3 b L b b b i s V {0 0", "a.c", 1, "f", 1, 1, 0.0, 0.0, 3, 'u', 3, 'a', '.',
            'c', 1, "f", 1, 1, 0.0, 0.0)
REJECT_TEST(duplicate_caller_fails, "caller appears twice", "{ K V { K E K E 0 0", "a.c", 1, "f", 1,
            1, 0.0, 0.0, "a.c", 1, "f", 1, 1, 0.0, 0.0, "a.c", 1, "f", 1, 1, 0.0, 0.0)

/* Numbers */
REJECT_TEST(negative_pcalls_fails, "pcalls is negative (-1)", "{ K V {0 0", "a.c", 1, "f", -1, 1,
            0.0, 0.0)
REJECT_TEST(negative_ncalls_fails, "ncalls is negative", "{ K V {0 0", "a.c", 1, "f", 1, -7, 0.0,
            0.0)
REJECT_TEST(negative_long_count_fails, "pcalls is negative (-1)", "{ K (5 b L b b i g g {0 0",
            "a.c", 1, "f", 5, 'l', -1, 1, 0, 1, 0.0, 0.0)
REJECT_TEST(negative_edge_count_fails, "ncalls is negative", "{ K V { K E 0 0", "a.c", 1, "f", 1, 1,
            0.0, 0.0, "a.c", 1, "f", -2, 1, 0.0, 0.0)
REJECT_TEST(count_as_float_fails, "ncalls is a float, not an int", "{ K (5 i g g g {0 0", "a.c", 1,
            "f", 5, 1, 1.0, 0.0, 0.0)
REJECT_TEST(count_as_bool_fails, "pcalls is a bool", "{ K (5 b i g g {0 0", "a.c", 1, "f", 5, 'T',
            1, 0.0, 0.0)
REJECT_TEST(negative_time_fails, "tottime is negative", "{ K V {0 0", "a.c", 1, "f", 1, 1, -1.0,
            0.0)
REJECT_TEST(nan_time_fails, "cumtime is not finite", "{ K V {0 0", "a.c", 1, "f", 1, 1, 0.0, NAN)
REJECT_TEST(infinite_time_fails, "tottime is not finite", "{ K V {0 0", "a.c", 1, "f", 1, 1,
            INFINITY, 0.0)
REJECT_TEST(time_as_str_fails, "cumtime is a str, not a float", "{ K (5 i i g s {0 0", "a.c", 1,
            "f", 5, 1, 1, 0.0, "x")
REJECT_TEST(negative_edge_time_fails, "tottime is negative", "{ K V { K E 0 0", "a.c", 1, "f", 1, 1,
            0.0, 0.0, "a.c", 1, "f", 1, 1, -0.5, 0.0)

/* ---- round trips with the model's writer ------------------------------------------------ */

static void build_model(struct fnp_profile *p)
{
    static const struct fnp_key keys[] = {
        {"main.c", 10, "main"},
        {"fib.c", 3, "fib"},
        {"/src/\xc3\xbcn\xc3\xaf.c", 7, "caf\xc3\xa9"},
        {"~", 0, "<built-in method builtins.len>"},
        {"big.c", UINT32_MAX, "big"},
    };
    fnp_profile_init(p);
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        ck_assert_int_eq(fnp_profile_func(p, &keys[i]), (int64_t)i);
    p->funcs[0].st = (struct fnp_stats){1, 1, 0.5, 10.0};
    p->funcs[1].st = (struct fnp_stats){15, 1, 1.5, 1.5};
    p->funcs[2].st = (struct fnp_stats){2, 2, 0.1, 0.2};
    p->funcs[3].st = (struct fnp_stats){3, 3, 1e-9, 1e-9};
    p->funcs[4].st = (struct fnp_stats){UINT64_MAX, (uint64_t)1 << 40, 123456.789, 1e300};
    static const uint32_t edges[][2] = {{1, 1}, {0, 1}, {0, 2}, {2, 3}, {0, 4}, {4, 4}};
    for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++) {
        int64_t e = fnp_profile_edge(p, edges[i][0], edges[i][1]);
        ck_assert_int_eq(e, (int64_t)i);
        p->edges[e].st = (struct fnp_stats){i + 1, i, 0.25 * (double)i, 0.5 * (double)i};
    }
    p->edges[5].st.ncalls = UINT64_MAX;
}

static void assert_same_profile(const struct fnp_profile *a, const struct fnp_profile *b)
{
    ck_assert_uint_eq(a->nfuncs, b->nfuncs);
    ck_assert_uint_eq(a->nedges, b->nedges);
    for (size_t i = 0; i < a->nfuncs; i++) {
        const struct fnp_func *x = &a->funcs[i], *y = &b->funcs[i];
        ck_assert_str_eq(x->key.file, y->key.file);
        ck_assert_uint_eq(x->key.line, y->key.line);
        ck_assert_str_eq(x->key.name, y->key.name);
        assert_stats(&y->st, x->st.ncalls, x->st.pcalls, x->st.tottime, x->st.cumtime, x->key.name);
    }
    for (size_t i = 0; i < a->nedges; i++) {
        const struct fnp_edge *x = &a->edges[i];
        int64_t e = fnp_profile_find_edge(b, x->caller, x->callee);
        ck_assert_int_ge(e, 0);
        assert_stats(&b->edges[e].st, x->st.ncalls, x->st.pcalls, x->st.tottime, x->st.cumtime,
                     "edge");
    }
}

START_TEST(written_profile_reads_back_the_same)
{
    struct fnp_profile a, b;
    struct fnp_sink s;
    char why[256];
    build_model(&a);
    fnp_sink_memory(&s);
    ck_assert_int_eq(fnp_pstats_write(&a, &s), 0);
    fnp_profile_init(&b);
    ck_assert_int_eq(fnp_pstats_read(&b, s.buf, s.len, why, sizeof(why)), 0);
    assert_same_profile(&a, &b);
    fnp_sink_free(&s);
    fnp_profile_free(&a);
    fnp_profile_free(&b);
}
END_TEST

START_TEST(reading_into_a_profile_adds_like_pstats_add)
{
    struct fnp_profile a, b;
    struct fnp_sink s;
    char why[256];
    build_model(&a);
    fnp_sink_memory(&s);
    ck_assert_int_eq(fnp_pstats_write(&a, &s), 0);
    fnp_profile_init(&b);
    ck_assert_int_eq(fnp_pstats_read(&b, s.buf, s.len, why, sizeof(why)), 0);
    ck_assert_int_eq(fnp_pstats_read(&b, s.buf, s.len, why, sizeof(why)), 0);
    ck_assert_uint_eq(b.nfuncs, a.nfuncs);
    assert_stats(&b.funcs[1].st, 30, 2, 3.0, 3.0, "fib twice");
    int64_t e = fnp_profile_find_edge(&b, 1, 1);
    assert_stats(&b.edges[e].st, 2, 0, 0.0, 0.0, "fib->fib twice");
    fnp_sink_free(&s);
    fnp_profile_free(&a);
    fnp_profile_free(&b);
}
END_TEST

START_TEST(written_profile_truncated_anywhere_fails_cleanly)
{
    struct fnp_profile a;
    struct fnp_sink s;
    build_model(&a);
    fnp_sink_memory(&s);
    ck_assert_int_eq(fnp_pstats_write(&a, &s), 0);
    for (size_t cut = 0; cut < s.len; cut++) {
        struct fnp_profile p;
        char why[256] = "";
        char *part = malloc(cut ? cut : 1);
        memcpy(part, s.buf, cut);
        sentinel(&p);
        ck_assert_int_eq(fnp_pstats_read(&p, part, cut, why, sizeof(why)), -EINVAL);
        assert_sentinel(&p);
        fnp_profile_free(&p);
        free(part);
    }
    fnp_sink_free(&s);
    fnp_profile_free(&a);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("pstats_read");
    TCase *tc = tcase_create("cpython");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, cpython_files_load_as_cpython_reads_them);
    tcase_add_test(tc, cpython_files_truncated_anywhere_fail_cleanly);
    tcase_add_test(tc, cpython_files_with_a_byte_changed_never_crash);
    suite_add_tcase(s, tc);

    tc = tcase_create("values");
    tcase_add_test(tc, smallest_file_of_pstats_md_loads);
    tcase_add_test(tc, worked_example_edges_keep_total_first);
    tcase_add_test(tc, long_ints_up_to_uint64_max_load);
    tcase_add_test(tc, old_type_codes_load);
    tcase_add_test(tc, latin1_strings_become_utf8);
    tcase_add_test(tc, surrogate_escapes_load_as_cpython_writes_them);
    tcase_add_test(tc, references_number_objects_in_preorder);
    tcase_add_test(tc, singletons_and_references_take_no_number);
    tcase_add_test(tc, shared_callers_dict_loads);
    tcase_add_test(tc, flagged_dict_end_ends_a_dict);
    tcase_add_test(tc, int_times_load_as_floats);
    tcase_add_test(tc, caller_missing_at_top_level_becomes_a_function);
    suite_add_tcase(s, tc);

    tc = tcase_create("malformed");
    tcase_add_test(tc, empty_input_fails);
    tcase_add_test(tc, oversized_input_fails_before_reading);
    tcase_add_test(tc, top_level_not_a_dict_fails);
    tcase_add_test(tc, empty_dict_fails);
    tcase_add_test(tc, bytes_after_the_dict_fail);
    tcase_add_test(tc, missing_dict_end_fails);
    tcase_add_test(tc, code_object_fails);
    tcase_add_test(tc, unknown_type_code_fails);
    tcase_add_test(tc, unknown_binary_type_code_fails);
    tcase_add_test(tc, dict_end_between_key_and_value_fails);
    tcase_add_test(tc, dict_end_inside_a_tuple_fails);
    tcase_add_test(tc, reference_to_unnumbered_object_fails);
    tcase_add_test(tc, negative_reference_fails);
    tcase_add_test(tc, reference_past_the_numbered_fails);
    tcase_add_test(tc, reference_to_a_tuple_being_read_fails);
    tcase_add_test(tc, reference_to_the_dict_being_read_fails);
    tcase_add_test(tc, truncated_reference_fails);
    tcase_add_test(tc, huge_string_length_fails);
    tcase_add_test(tc, negative_string_length_fails);
    tcase_add_test(tc, string_longer_than_the_file_fails);
    tcase_add_test(tc, huge_tuple_count_fails);
    tcase_add_test(tc, negative_tuple_count_fails);
    tcase_add_test(tc, small_tuple_longer_than_the_file_fails);
    tcase_add_test(tc, nested_counts_cannot_claim_the_same_bytes);
    tcase_add_test(tc, huge_list_count_fails);
    tcase_add_test(tc, long_of_six_digits_fails);
    tcase_add_test(tc, long_of_huge_digit_count_fails);
    tcase_add_test(tc, long_past_uint64_fails);
    tcase_add_test(tc, long_with_zero_top_digit_fails);
    tcase_add_test(tc, long_digit_over_15_bits_fails);
    tcase_add_test(tc, truncated_long_fails);
    tcase_add_test(tc, invalid_utf8_fails);
    tcase_add_test(tc, overlong_utf8_fails);
    tcase_add_test(tc, text_float_that_is_not_a_number_fails);
    tcase_add_test(tc, hex_text_float_fails);
    tcase_add_test(tc, truncated_float_fails);
    tcase_add_test(tc, deep_nesting_fails);
    suite_add_tcase(s, tc);

    tc = tcase_create("shape");
    tcase_add_test(tc, key_not_a_tuple_fails);
    tcase_add_test(tc, key_of_two_items_fails);
    tcase_add_test(tc, key_file_not_a_str_fails);
    tcase_add_test(tc, key_file_of_bytes_fails);
    tcase_add_test(tc, key_line_not_an_int_fails);
    tcase_add_test(tc, key_line_negative_fails);
    tcase_add_test(tc, key_line_past_uint32_fails);
    tcase_add_test(tc, key_with_nul_fails);
    tcase_add_test(tc, value_of_four_items_fails);
    tcase_add_test(tc, value_a_list_fails);
    tcase_add_test(tc, callers_not_a_dict_fails);
    tcase_add_test(tc, edge_of_five_items_fails);
    tcase_add_test(tc, profile_module_edges_fail);
    tcase_add_test(tc, caller_key_not_a_tuple_fails);
    tcase_add_test(tc, duplicate_key_fails);
    tcase_add_test(tc, duplicate_key_in_another_encoding_fails);
    tcase_add_test(tc, duplicate_caller_fails);
    tcase_add_test(tc, negative_pcalls_fails);
    tcase_add_test(tc, negative_ncalls_fails);
    tcase_add_test(tc, negative_long_count_fails);
    tcase_add_test(tc, negative_edge_count_fails);
    tcase_add_test(tc, count_as_float_fails);
    tcase_add_test(tc, count_as_bool_fails);
    tcase_add_test(tc, negative_time_fails);
    tcase_add_test(tc, nan_time_fails);
    tcase_add_test(tc, infinite_time_fails);
    tcase_add_test(tc, time_as_str_fails);
    tcase_add_test(tc, negative_edge_time_fails);
    suite_add_tcase(s, tc);

    tc = tcase_create("roundtrip");
    tcase_add_test(tc, written_profile_reads_back_the_same);
    tcase_add_test(tc, reading_into_a_profile_adds_like_pstats_add);
    tcase_add_test(tc, written_profile_truncated_anywhere_fails_cleanly);
    suite_add_tcase(s, tc);
    return s;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s DATA_DIR\n", argv[0]);
        return 2;
    }
    data_dir = argv[1];
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
/* SPDX-License-Identifier: MIT */
