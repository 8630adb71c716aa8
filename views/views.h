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
    int short_names;       /* label functions by fnp_short_name (--short-names), not by key */
};

struct fnp_view {
    const char *name;    /* the --to value */
    const char *summary; /* one line for --help */
    int needs_tree;      /* draws call paths (rebuilt from edges when the file has no tree) */
    int binary;          /* not text: never written to a terminal */
    int paths;           /* writes each context's whole path: output grows with the sum of the
                            paths' depths, so the command cuts them (fnp_view_cut) */
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

/* ---- depth_cut.c: paths of at most max_depth frames ----------------------------------- */

/* The default of fnprof convert --max-depth (docs/convert.md): perf keeps 127 frames of a
 * stack and Go's pprof 128; twice that leaves deep recursion room and bounds a path view
 * to 257 frames a context. */
#define FNP_VIEW_MAX_DEPTH 256

struct fnp_view_cut {
    /* The profile to draw: p itself (a shallow copy) when nothing was cut, else p with a
     * tree of its own and the label functions after p's. Borrows p's other arrays: valid
     * while p is, and until fnp_view_cut_free. */
    struct fnp_profile view;
    uint32_t max_depth;
    uint32_t deepest;  /* frames of p's deepest path */
    int cut;           /* view has a tree of its own */
    size_t folds;      /* fold frames made: the cut's parents */
    uint64_t contexts; /* calling contexts folded into them */
    int own_funcs;
    size_t first_label; /* view.funcs[first_label, nfuncs): the labels, names owned */
};

/*
 * p's tree with every calling context deeper than max_depth frames folded, with its
 * subtree, into one frame per parent at the cut: ('~', 0, '[... N frames cut]'), N the
 * frames of the deepest path folded there, its own value the folded subtrees' inclusive
 * value and its calls theirs. Totals, and everything above the cut, stay exact; a view's
 * paths are then at most max_depth + 1 frames. max_depth 0: no cut. O(nodes). Returns 0 or
 * -ENOMEM; c->view is what to draw; free with fnp_view_cut_free (also after an error).
 */
int fnp_view_cut(const struct fnp_profile *p, uint32_t max_depth, struct fnp_view_cut *c);
void fnp_view_cut_free(struct fnp_view_cut *c);

/* ---- labels.c: what views call functions and values --------------------------------- */

/*
 * Labels for p's functions, for views whose frames carry only a name (collapsed
 * stacks): the function's name (with short_names, fnp_short_name's), or where two keys share
 * it (static functions of two files, overloads named alike, two names shortened alike),
 * "name [file:line]" with the file's last component, or its whole path where that is not
 * enough; where even that is shared (two names shortened alike at one place), the full name's
 * label, so that no two functions merge. Characters the format reserves are the caller's to
 * replace. Returns an array of p->nfuncs strings (caller frees with fnp_labels_free), or NULL
 * when out of memory.
 */
char **fnp_labels_new(const struct fnp_profile *p, int short_names);
void fnp_labels_free(char **labels, size_t n);
/* For views that show each function's file and line beside its name (dot): fnp_short_name's
 * names, or the key's where two functions at one place shorten alike. Free with
 * fnp_labels_free; NULL when out of memory. */
char **fnp_names_new(const struct fnp_profile *p);

/* The file name without its directories ("~" stays "~"). Borrowed from path. */
const char *fnp_base_name(const char *path);

/* Nanoseconds in ticks of the tree (kind FNP_TREE_TIME), rounded; for FNP_TREE_CALLS the
 * ticks themselves (calls). */
uint64_t fnp_tree_ns(const struct fnp_profile *p, uint64_t ticks);
/* "ns" or "calls": the unit of fnp_tree_ns's results. */
const char *fnp_tree_unit(const struct fnp_profile *p);

/* ---- short_names.c: C++ names as debuggers show them -------------------------------- */

/*
 * name as a reader wants it (docs/convert.md, --short-names): std::string for
 * std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >, the
 * standard containers' default template arguments dropped, gcc's static initialisers named
 * after file (the key's). Names it does not parse come back whole. Two names may shorten
 * alike: fnp_labels_new keeps them apart. Caller frees; NULL when out of memory. O(length),
 * at most 4 * length + 128 bytes.
 */
char *fnp_short_name(const char *name, const char *file);

/* ---- text.c: escaping for the text formats -------------------------------------------- */

/* Text for XML and HTML content or attribute values: & < > " ' escaped, control
 * characters and invalid UTF-8 replaced by U+FFFD. */
void fnp_xml_text(struct fnp_sink *s, const char *str);

#endif
