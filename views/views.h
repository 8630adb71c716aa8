/* SPDX-License-Identifier: MIT */
/*
 * views/: a profile drawn for the tools people already use. Each file writes one format
 * from the profile model (profile.h): the calling-context tree for the views that show
 * call paths, the functions and caller edges for those that show one level of callers.
 * A writer takes the profile and a sink, knows nothing of the runtime or the command, and
 * returns the sink's first error; the command (toolchain/cmd-convert.c) picks one by name.
 * Only the fnprof command links this folder: none of it runs inside a profiled program.
 */
#ifndef FNPROF_VIEWS_H
#define FNPROF_VIEWS_H

#include <stddef.h>
#include <stdint.h>

#include "profile.h"

struct fnp_view_opts {
    const char *title;     /* the input's name, for views that show one; may be NULL */
    double node_threshold; /* dot: nodes under this percent of the total time are left out */
    double edge_threshold; /* dot: edges under this percent likewise */
    int rebuilt;           /* the tree was rebuilt from edges: views that can say so do */
};

struct fnp_view {
    const char *name;    /* the --to value */
    const char *summary; /* one line for --help */
    int needs_tree;      /* draws call paths (rebuilt from edges when the file has no tree) */
    int binary;          /* not text: never written to a terminal */
    int (*write)(const struct fnp_profile *p, const struct fnp_view_opts *o, struct fnp_sink *s);
};

/* The views, in the order --help lists them; NULL-named entry last. */
extern const struct fnp_view fnp_views[];
/* The view called name, or NULL. */
const struct fnp_view *fnp_view_find(const char *name);

/* One writer per file. */
int fnp_view_collapsed(const struct fnp_profile *p, const struct fnp_view_opts *o,
                       struct fnp_sink *s);
int fnp_view_callgrind(const struct fnp_profile *p, const struct fnp_view_opts *o,
                       struct fnp_sink *s);
int fnp_view_speedscope(const struct fnp_profile *p, const struct fnp_view_opts *o,
                        struct fnp_sink *s);
int fnp_view_flamegraph(const struct fnp_profile *p, const struct fnp_view_opts *o,
                        struct fnp_sink *s);
int fnp_view_dot(const struct fnp_profile *p, const struct fnp_view_opts *o, struct fnp_sink *s);
int fnp_view_pprof(const struct fnp_profile *p, const struct fnp_view_opts *o, struct fnp_sink *s);
int fnp_view_html(const struct fnp_profile *p, const struct fnp_view_opts *o, struct fnp_sink *s);

/* ---- labels.c: what views call functions and values --------------------------------- */

/*
 * Short names for p's functions, for views whose frames carry only a name (collapsed
 * stacks): the function's name, or where two keys share a name (static functions of two
 * files, overloads named alike), "name [file:line]" with the file's last component, or
 * its whole path where that is not enough, so that no two functions merge. Characters the format
 * reserves are the caller's to replace. Returns an array of p->nfuncs strings (caller frees with
 * fnp_labels_free), or NULL when out of memory.
 */
char **fnp_labels_new(const struct fnp_profile *p);
void fnp_labels_free(char **labels, size_t n);

/* The file name without its directories ("~" stays "~"). Borrowed from path. */
const char *fnp_base_name(const char *path);

/* Nanoseconds in ticks of the tree (kind FNP_TREE_TIME), rounded; for FNP_TREE_CALLS the
 * ticks themselves (calls). */
uint64_t fnp_tree_ns(const struct fnp_profile *p, uint64_t ticks);
/* "ns" or "calls": the unit of fnp_tree_ns's results. */
const char *fnp_tree_unit(const struct fnp_profile *p);

/* ---- text.c: escaping for the text formats -------------------------------------------- */

/* Text for XML and HTML content or attribute values: & < > " ' escaped, control
 * characters and invalid UTF-8 replaced by U+FFFD. */
void fnp_xml_text(struct fnp_sink *s, const char *str);

#endif
