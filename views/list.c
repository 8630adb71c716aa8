/* SPDX-License-Identifier: MIT */
/*
 * The views `fnprof convert --to` knows, by name. Those that write a path per calling
 * context (paths 1) grow with the sum of the paths' depths and are cut at --max-depth; the
 * flame graph and the HTML report write a frame per context (O(nodes)) and keep them all.
 */
#include <string.h>

#include "views.h"

const struct fnp_view fnp_views[] = {
    {"collapsed", "folded stacks for flamegraph.pl, inferno, speedscope", 1, 0, 1,
     fnp_view_collapsed},
    {"callgrind", "callgrind format for KCachegrind, QCachegrind, callgrind_annotate", 0, 0, 0,
     fnp_view_callgrind},
    {"speedscope", "speedscope's JSON file format, one profile per thread", 1, 0, 1,
     fnp_view_speedscope},
    {"flamegraph", "a self-contained, interactive flame graph (SVG)", 1, 0, 0, fnp_view_flamegraph},
    {"dot", "a graphviz call graph, like gprof2dot's", 0, 0, 0, fnp_view_dot},
    {"pprof", "Google's profile.proto, gzipped (go tool pprof)", 1, 1, 1, fnp_view_pprof},
    {"html", "a self-contained HTML report: table, flame chart, callers/callees", 1, 0, 0,
     fnp_view_html},
    {NULL, NULL, 0, 0, 0, NULL},
};

const struct fnp_view *fnp_view_find(const char *name)
{
    for (const struct fnp_view *v = fnp_views; v->name; v++)
        if (!strcmp(v->name, name))
            return v;
    return NULL;
}
