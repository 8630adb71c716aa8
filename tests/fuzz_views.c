/*
 * libFuzzer target for the views (fnprof convert): whatever tree a file holds that the
 * reader accepts, every writer turns it into output without a memory error or undefined
 * behaviour (ASan, UBSan) and without failing. The input is a tree body after a fixed dict
 * whose names hold what formats reserve (quotes, <, &, ;, newlines, invalid UTF-8, one
 * name in two files), given a correct header as in fuzz_tree_read.c. The same profile is
 * then drawn again with a tree rebuilt from its edges, as for a file CPython wrote.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "fuzz_tree.h"
#include "profile.h"
#include "views.h"

#define NFUNCS 7

static struct fnp_sink dict;

static void make_dict(void)
{
    struct fnp_profile p;
    fnp_profile_init(&p);
    static const struct fnp_key keys[NFUNCS] = {
        {"/src/a.c", 1, "main"},
        {"/src/a.c", 2, "op<\"&'>;x\ty\nz"},
        {"/src/b.c", 3, "init"},
        {"/src/c/b.c", 3, "init"},
        {"~", 0, "<built-in ]]> \xff\xfe \xf8\x80\x80 \xef\xbf\xbf>"},
        {"/src/\xc3\xa9t\xc3\xa9.c", 9, "\xe4\xb8\xad\xe6\x96\x87"},
        {"", 0, ""},
    };
    for (int i = 0; i < NFUNCS; i++)
        CHECK(fnp_profile_func(&p, &keys[i]) == i);
    /* edges for the rebuild from edges: main -> every other, and a cycle */
    for (uint32_t i = 1; i < NFUNCS; i++) {
        int64_t e = fnp_profile_edge(&p, 0, i);
        CHECK(e >= 0);
        p.edges[e].st = (struct fnp_stats){i, i, 0.001 * i, 0.002 * i};
        p.funcs[i].st = (struct fnp_stats){i + 1, i, 0.001 * i, 0.002 * i};
    }
    int64_t e = fnp_profile_edge(&p, 2, 3);
    p.edges[e].st = (struct fnp_stats){1, 1, 0.0005, 0.0005};
    e = fnp_profile_edge(&p, 3, 2);
    p.edges[e].st = (struct fnp_stats){1, 0, 0.0005, 0.0005};
    p.funcs[0].st = (struct fnp_stats){1, 1, 0.01, 0.1};
    fnp_sink_memory(&dict);
    CHECK(fnp_pstats_write(&p, &dict) == 0);
    fnp_profile_free(&p);
}

static void draw_all(const struct fnp_profile *p, int rebuilt, int tree_only_views)
{
    struct fnp_view_opts o = {.title = "fuzz <&\">.prof",
                              .node_threshold = rebuilt ? 0 : 0.5,
                              .edge_threshold = rebuilt ? 0 : 0.1,
                              .rebuilt = rebuilt,
                              .short_names = 1}; /* fnprof convert's default */
    for (const struct fnp_view *v = fnp_views; v->name; v++) {
        if (tree_only_views && !v->needs_tree)
            continue;
        struct fnp_sink s;
        fnp_sink_memory(&s);
        int rc = v->write(p, &o, &s);
        if (rc)
            fprintf(stderr, "%s: %d\n", v->name, rc);
        CHECK(rc == 0);
        fnp_sink_free(&s);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!dict.buf)
        make_dict();
    if (!size)
        return 0;
    uint32_t kind = data[0] & 1 ? FNP_TREE_CALLS : FNP_TREE_TIME;
    double tick = data[0] & 2 ? 1.0 : data[0] & 4 ? 3.7e-10 : 1e-9;
    data++;
    size--;
    size_t len;
    unsigned char *file = fuzz_tree_file(dict.buf, dict.len, NFUNCS, kind, tick, data, size, &len);
    struct fnp_profile p;
    char why[512];
    fnp_profile_init(&p);
    /* The dict, then the trailer by fnp_tree_read: a fuzzed tree is drawn without being held
     * to this fixed dict's times (fnp_tree_check_dict refuses nearly all; fuzz_tree_read
     * meets that check). */
    if (fnp_pstats_read(&p, dict.buf, dict.len, why, sizeof(why)) == 0 &&
        fnp_tree_read(&p, NFUNCS, file, dict.len, file + dict.len, len - dict.len, why,
                      sizeof(why)) == 0 &&
        p.tree_kind != FNP_TREE_NONE) {
        draw_all(&p, 0, 0);
        fnp_tree_clear(&p);
        CHECK(fnp_tree_from_edges(&p, 1e-5, 10000) == 0);
        draw_all(&p, 1, 1);
    }
    fnp_profile_free(&p);
    free(file);
    return 0;
}
/* SPDX-License-Identifier: MIT */
