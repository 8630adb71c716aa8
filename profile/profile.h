/*
 * profile/: the cProfile model and the writers.
 *
 * Shared by the runtime's exit path and the fnprof command, so it depends on neither: it
 * takes a calling-context forest whose nodes already name their function (an index into
 * the profile's function table) and derives cProfile's numbers from it; the writers turn a
 * profile into bytes through a sink (a file written whole, or memory).
 */
#ifndef FNPROF_PROFILE_H
#define FNPROF_PROFILE_H

#include <stddef.h>
#include <stdint.h>

/* ---- model.c: functions, edges and cProfile's recursion rules ----------------------- */

/* A function's pstats key. Strings are copied into the profile. */
struct fnp_key {
    const char *file;
    uint32_t line;
    const char *name;
};

/* cProfile's numbers for a function, or for one caller->callee edge. */
struct fnp_stats {
    uint64_t ncalls; /* every call */
    uint64_t pcalls; /* primitive calls: no other activation (of the function, or of the
                        edge) was open when it started */
    double tottime;  /* seconds spent in the function itself */
    double cumtime;  /* seconds including callees, over primitive calls only */
};

struct fnp_func {
    struct fnp_key key;
    struct fnp_stats st;
};

struct fnp_edge {
    uint32_t caller; /* function indices */
    uint32_t callee;
    struct fnp_stats st;
};

struct fnp_profile {
    struct fnp_func *funcs;
    size_t nfuncs;
    struct fnp_edge *edges;
    size_t nedges;
    /* private: key and edge hash tables, string storage */
    uint32_t *func_slots;
    size_t func_slot_mask;
    uint32_t *edge_slots;
    size_t edge_slot_mask;
    size_t funcs_cap, edges_cap;
};

#define FNP_NO_PARENT UINT32_MAX

/* One node of a calling-context forest: a distinct call path. Nodes come in pre-order
 * (every node after its parent, a subtree contiguous). */
struct fnp_tree_node {
    uint32_t func;   /* index into the profile's functions */
    uint32_t parent; /* node index, or FNP_NO_PARENT for a root */
    uint64_t ncalls; /* calls made along this path */
    uint64_t ticks;  /* inclusive ticks, summed over those calls */
};

/* Empty profile; every field zero is a valid empty profile too. */
void fnp_profile_init(struct fnp_profile *p);
/* Frees everything; accepts an empty profile. */
void fnp_profile_free(struct fnp_profile *p);

/* Index of the function with this key, added (with zero stats) if new: two addresses that
 * name the same key share one function. Returns the index, or -ENOMEM. */
int64_t fnp_profile_func(struct fnp_profile *p, const struct fnp_key *key);
/* Index of the edge caller->callee, added if new. Returns the index, or -ENOMEM. */
int64_t fnp_profile_edge(struct fnp_profile *p, uint32_t caller, uint32_t callee);
/* Index of the edge caller->callee, or -1. */
int64_t fnp_profile_find_edge(const struct fnp_profile *p, uint32_t caller, uint32_t callee);

/*
 * Adds the numbers of a calling-context forest with cProfile's rules: a node's calls are
 * primitive for its function when no ancestor runs the same function, and primitive for
 * its edge when no ancestor pair runs the same caller->callee edge; tottime is a node's
 * ticks less its children's. Roots count as calls with no caller.
 * tick_seconds converts ticks to seconds once, here. Returns 0 or -ENOMEM / -EINVAL (a
 * node before its parent, a bad function index).
 */
int fnp_profile_add_tree(struct fnp_profile *p, const struct fnp_tree_node *nodes, size_t n,
                         double tick_seconds);

/* Adds b's numbers to a's, function by function and edge by edge (pstats.Stats.add).
 * Returns 0 or -ENOMEM. */
int fnp_profile_merge(struct fnp_profile *a, const struct fnp_profile *b);

/* ---- sink.c: where writers put bytes ----------------------------------------------- */

struct fnp_sink {
    int fd;    /* file sink: buffered writes to fd; -1 for a memory sink */
    int err;   /* first error (negative errno); later writes are dropped */
    char *buf; /* caller frees with fnp_sink_free for memory sinks */
    size_t len;
    size_t cap;
    uint64_t total; /* bytes accepted so far */
};

/* A sink collecting into malloc'd memory (buf, len). */
void fnp_sink_memory(struct fnp_sink *s);
/* A sink writing to fd through a buffer of its own; fnp_sink_flush before closing fd. */
int fnp_sink_fd(struct fnp_sink *s, int fd);
void fnp_sink_write(struct fnp_sink *s, const void *data, size_t n);
/* Writes what is buffered; returns s->err. */
int fnp_sink_flush(struct fnp_sink *s);
void fnp_sink_free(struct fnp_sink *s);

/* Writes path whole or not at all: the writer fills a sink on a temporary file in path's
 * directory, which is renamed over path only if everything succeeded. The file gets mode
 * 0666 less the umask, as open(2) would give it. Returns 0 or -errno (path untouched). */
typedef int (*fnp_write_fn)(struct fnp_sink *s, void *ctx);
int fnp_write_file_atomic(const char *path, fnp_write_fn write, void *ctx);

/* ---- marshal.c: the subset of Python's marshal format pstats needs ---------------- */

void fnp_marshal_dict_begin(struct fnp_sink *s);
void fnp_marshal_dict_end(struct fnp_sink *s);
void fnp_marshal_tuple(struct fnp_sink *s, uint32_t nitems);
void fnp_marshal_int(struct fnp_sink *s, uint64_t v);
void fnp_marshal_float(struct fnp_sink *s, double v);
/* str from bytes: invalid UTF-8 sequences are replaced by U+FFFD. */
void fnp_marshal_str(struct fnp_sink *s, const char *str);

/* ---- pstats.c ----------------------------------------------------------------------- */

/* Writes p as the marshalled dict cProfile's dump_stats writes. Times are clamped to
 * finite, non-negative values. Returns s->err. */
int fnp_pstats_write(const struct fnp_profile *p, struct fnp_sink *s);

#endif
