/* SPDX-License-Identifier: MIT */
/*
 * profile/: the cProfile model and the writers.
 *
 * Shared by the runtime's exit path and the fnprof command, so it depends on neither: it
 * takes a calling-context forest whose nodes already name their function (an index into
 * the profile's function table) and derives cProfile's numbers from it; the writers turn a
 * profile into bytes through a sink (a file written whole, or memory); the readers
 * (marshal_read.c, pstats_read.c, only in the fnprof command) load pstats files back,
 * treating them as hostile: every length, count and depth is bounded.
 */
#ifndef FNPROF_PROFILE_H
#define FNPROF_PROFILE_H

#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

struct fnp_sink;
struct fnp_sym_func;

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
    /* The calling-context tree (tree.c) the functions and edges were derived from, kept so
     * that every view can draw exact call paths: nodes in pre-order, func indexing funcs,
     * one root per outermost call of a thread, ticks and back in the run's clock ticks
     * of tick_seconds each (FNP_TREE_TIME), or in calls (FNP_TREE_CALLS: a count-only
     * run, tick_seconds 1 as in its pstats). Integer ticks, converted once by whoever
     * shows them, keep the tree's sums exactly the dict's. FNP_TREE_NONE: no tree (a file
     * CPython wrote, or an input without one was merged in). */
    struct fnp_tree_node *tree;
    size_t ntree, tree_cap;
    char **threads; /* names of the threads the roots' thread fields index */
    size_t nthreads;
    uint32_t tree_kind;
    double tick_seconds;
    /* Metadata of the run, in the order it was added (fnp_profile_set_meta): program,
     * pid, start time, host, fnprof version and the program's own pairs
     * (fnprof_add_metadata). Kept in the tree's trailer (docs/tree-format.md). */
    struct fnp_meta *meta;
    size_t nmeta;
    /* A memory profile's columns (PROF_MEMORY, docs/memory.md): NULL, or one entry per
     * tree node, p->mem[i] for p->tree[i]. The tree's ticks are then bytes (tick_seconds
     * 1): a node's own ticks are the bytes allocated in that context. */
    struct fnp_mem_node *mem;
};

struct fnp_meta {
    char *key;
    char *value;
};

enum fnp_tree_kind {
    FNP_TREE_NONE,
    FNP_TREE_TIME,
    FNP_TREE_CALLS,
};

#define FNP_NO_PARENT UINT32_MAX

/* One node of a calling-context forest: a distinct call path. Nodes come in pre-order
 * (every node after its parent, a subtree contiguous). */
struct fnp_tree_node {
    uint32_t func;   /* index into the profile's functions */
    uint32_t parent; /* node index, or FNP_NO_PARENT for a root */
    uint64_t ncalls; /* calls made along this path */
    uint64_t ticks;  /* inclusive ticks, summed over those calls */
    int64_t back;    /* see struct fnp_raw_node */
    uint32_t flags;  /* FNP_OPEN_*: see struct fnp_raw_node */
    uint32_t thread; /* the thread it ran on (fnp_profile.threads); the model ignores it */
};

/* The memory columns of one calling context, beside its bytes (the node's own ticks).
 * Blocks live at the end are allocs - frees, and their bytes own ticks - freed. */
struct fnp_mem_node {
    uint64_t allocs; /* blocks allocated in this context (realloc counts one) */
    uint64_t frees;  /* of those, the blocks freed (by any thread; realloc frees the old) */
    uint64_t freed;  /* their bytes */
    uint64_t peak;   /* the most bytes of this context's blocks live at one time */
};

/* A node whose calls were made on other paths than its own (merged beyond the node cap)
 * says itself whether its function and its edge were open above those calls. */
#define FNP_OPEN_GIVEN 1u
#define FNP_OPEN_FUNC 2u
#define FNP_OPEN_EDGE 4u

/* Why calls were merged (struct fnp_raw's merge_causes): the node cap was full, or a
 * tree path was at the most levels it holds (PROF_MAX_NODES / 64, at least 64). */
#define FNP_MERGED_BY_NODES 1u
#define FNP_MERGED_BY_DEPTH 2u

/* Empty profile; every field zero is a valid empty profile too. */
void fnp_profile_init(struct fnp_profile *p);
/* Frees everything; accepts an empty profile. */
void fnp_profile_free(struct fnp_profile *p);

/* Index of the function with this key, added (with zero stats) if new: two addresses that
 * name the same key share one function. Returns the index, or -ENOMEM. */
int64_t fnp_profile_func(struct fnp_profile *p, const struct fnp_key *key);
/* Python's order of (file, line, name) tuples, as sorted() gives: str compares by code
 * point, which is the byte order of UTF-8. */
int fnp_key_cmp(const struct fnp_key *x, const struct fnp_key *y);
/* Index of the edge caller->callee, added if new. Returns the index, or -ENOMEM. */
int64_t fnp_profile_edge(struct fnp_profile *p, uint32_t caller, uint32_t callee);
/* Index of the edge caller->callee, or -1. */
int64_t fnp_profile_find_edge(const struct fnp_profile *p, uint32_t caller, uint32_t callee);

/*
 * Adds the numbers of a calling-context forest with cProfile's rules: a node's calls are
 * primitive for its function when no ancestor runs the same function, and primitive for
 * its edge when no ancestor pair runs the same caller->callee edge; tottime is a node's
 * ticks less its children's and its back ticks. Roots count as calls with no caller.
 * tick_seconds converts ticks to seconds once, here. Returns 0 or -ENOMEM / -EINVAL (a
 * node before its parent, a bad function index).
 */
int fnp_profile_add_tree(struct fnp_profile *p, const struct fnp_tree_node *nodes, size_t n,
                         double tick_seconds);

/* Adds b's numbers to a's, function by function and edge by edge (pstats.Stats.add), and
 * b's tree to a's (fnp_tree_merge); an empty a takes b's tree kind, and a tree merged with
 * a profile that has none, or of another unit, is dropped (FNP_TREE_NONE).
 * Returns 0 or -ENOMEM. */
int fnp_profile_merge(struct fnp_profile *a, const struct fnp_profile *b);

/* Grows *arr (realloc) to hold at least need elements of size bytes, doubling. 0 or
 * -ENOMEM (*arr untouched). Readers bound need by their input's length first, so a
 * hostile count cannot ask for more than a small multiple of the input. */
int fnp_array_grow(void **arr, size_t *cap, size_t need, size_t size);

/* ---- tree.c: the calling-context tree a profile keeps -------------------------------- */

/*
 * Replaces p's tree by the forest nodes[0, n) (every parent before its children; ticks
 * and back of tick_seconds each), put in canonical pre-order: a subtree contiguous,
 * siblings by function index, and siblings of the same function, thread (for roots) and
 * flags merged into one. Thread names are copied; a root's thread must be below nthreads.
 * Returns 0, -EINVAL (a malformed forest) or -ENOMEM (p's tree then FNP_TREE_NONE).
 */
int fnp_tree_set(struct fnp_profile *p, const struct fnp_tree_node *nodes, size_t n, uint32_t kind,
                 double tick_seconds, const char *const *threads, size_t nthreads);
/* fnp_tree_set with memory columns: mem[i] belongs to nodes[i] (mem NULL: none, as
 * fnp_tree_set). Merged siblings add their columns, but for peak, the larger of the two
 * (a bound from below: the two need not have peaked at once). */
int fnp_tree_set_mem(struct fnp_profile *p, const struct fnp_tree_node *nodes,
                     const struct fnp_mem_node *mem, size_t n, uint32_t kind, double tick_seconds,
                     const char *const *threads, size_t nthreads);

/* Adds b's tree to a's, path by path (a path is the sequence of function keys from a
 * root, and the root's thread index): the tree of the profile pstats.Stats.add makes.
 * Memory columns add up when both trees have them (or one of them is empty); a memory
 * tree and a timing tree do not add: the sum has no tree.
 * b's ticks are rescaled to a's tick_seconds when they differ (two runs' clocks), to the
 * nearest tick. map[i] is a's index of b's function i. b's metadata pairs whose keys a
 * lacks are added after a's (a's values win), up to FNP_TREE_MAX_META pairs, tree or
 * not. Returns 0 or -ENOMEM. */
int fnp_tree_merge(struct fnp_profile *a, const struct fnp_profile *b, const uint32_t *map);

/* ticks * scale to the nearest integer, saturating. */
uint64_t fnp_ticks_scale(uint64_t ticks, double scale);
/* a + b, or 2^64 - 1 where the sum would wrap: counts and ticks summed by a merge never
 * come out smaller than their parts. */
static inline uint64_t fnp_sat_add(uint64_t a, uint64_t b)
{
    return a + b < a ? UINT64_MAX : a + b;
}

/* Frees p's tree; p->tree_kind becomes FNP_TREE_NONE. */
void fnp_tree_clear(struct fnp_profile *p);

/* Each node's own value (ticks less its children's and its back ticks; clock noise that
 * makes it negative counts as 0) into self[0, p->ntree), and into incl (may be NULL) the
 * node's own value plus its children's incl: the width a flame graph gives it, so that
 * children always fit inside their parent. */
void fnp_tree_values(const struct fnp_profile *p, uint64_t *self, uint64_t *incl);

/*
 * For a profile without a tree (CPython's, an older fnprof's): a tree rebuilt from the
 * caller edges, the way snakeviz and gprof2dot draw one. Every function no call reaches
 * from another is a root; a node's callees get the share of its time that the edges give
 * them (a node of f standing for a fraction of f's cumtime gives callee g that fraction
 * of the edge's cumtime), paths stop where a function would repeat, and nodes below
 * min_share of the total are left out. At most max_nodes nodes. The numbers are
 * estimates: a callee's calls are spread over its callers' paths in proportion, which
 * is exactly what the kept tree does not need to do. Returns 0 or -ENOMEM.
 */
int fnp_tree_from_edges(struct fnp_profile *p, double min_share, size_t max_nodes);

/* ---- tree_write.c, tree_read.c: the tree's file format -------------------------------- */

/*
 * The tree travels in the pstats file, after the marshal dict: every pstats reader
 * (pstats.Stats, snakeviz, gprof2dot, pyprof2calltree) reads one marshal object and stops,
 * so the file stays what cProfile writes. docs/tree-format.md describes the layout:
 *   "FNPTREE\n", u32 version, u32 kind, u32 nfuncs, u32 dict_crc, u64 body_len,
 *   u32 body_crc, f64 tick_seconds, then body_len bytes of LEB128 numbers: metadata
 *   (version 2: key/value pairs), threads (names), nodes, memory rows (from version 3);
 *   from version 4 body_crc covers the header's fields too.
 * Functions are named by their position in the dict, so the tree adds O(nodes) bytes.
 * A profile with metadata but no tree writes a trailer of kind FNP_TREE_NONE: the
 * metadata, no thread, no node.
 */
#define FNP_TREE_MAGIC "FNPTREE\n"
/* Readers take 1 (no metadata), 2, 3 (memory columns) and 4, which writers write: version
 * 3's body under a checksum that covers the header too (tick_seconds, kind, nfuncs). */
#define FNP_TREE_VERSION 4
#define FNP_TREE_HEADER 44
/* Bounds a reader enforces beyond the input's own length. */
#define FNP_TREE_MAX_THREADS (1u << 20)
#define FNP_TREE_MAX_NAME 4096
#define FNP_TREE_MAX_NODES (1u << 26)
/* Metadata: pairs, bytes of a key (at least 1), bytes of a value. The writer leaves out
 * pairs beyond these and cuts longer values (at a character's start), so that it never
 * writes what a reader refuses. */
#define FNP_TREE_MAX_META 4096
#define FNP_TREE_MAX_META_KEY 256
#define FNP_TREE_MAX_META_VALUE 4096

/* CRC-32 (the zlib/PNG polynomial) of data, continuing crc (0 to start). */
uint32_t fnp_crc32(uint32_t crc, const void *data, size_t n);

/* The checksum at offset 32 of a trailer: in version 4, the CRC-32 of the header's bytes
 * but the magic and this field (8-31, 36-43: version to body_len, tick_seconds), then of
 * the body; in versions 1-3, of the body alone. header: the trailer's FNP_TREE_HEADER
 * bytes. */
uint32_t fnp_tree_crc(const unsigned char *header, const void *body, size_t n);

/* Writes p as a pstats file: the dict (fnp_pstats_write), then p's tree, if it has one,
 * as the trailer above. s must be empty when called (the trailer checksums the dict).
 * Returns s->err. */
int fnp_profile_write(const struct fnp_profile *p, struct fnp_sink *s);
/* fnp_profile_write as an fnp_write_fn, profile the struct fnp_profile to write: the
 * writer the exit dump, fnprof merge and fnprof symbolize hand fnp_write_file_atomic. */
int fnp_profile_write_fn(struct fnp_sink *s, void *profile);

/*
 * Reads the trailer in data[0, len), which follows dict[0, dict_len) in the file, into
 * p's tree and p's metadata (replacing what p had); p->funcs[0, nkeys) are the dict's keys
 * in the dict's order. Returns 0, or -EINVAL with "offset N: calling-context tree: ..." in
 * why (N counted from the file's start), or -ENOMEM. On failure p's tree is FNP_TREE_NONE
 * and its metadata is unchanged.
 */
int fnp_tree_read(struct fnp_profile *p, size_t nkeys, const unsigned char *dict, size_t dict_len,
                  const unsigned char *data, size_t len, char *why, size_t whylen);

/*
 * The sums behind fnp_tree_check_dict (tree_check.c): 1 when p's tree and p->funcs[0,
 * nkeys) part by more than rounding, with the tree's own times and the dict's tottimes in
 * seconds in *tree_s and *dict_s; 0 when they agree, or when the tree cannot hold the
 * dict's times (saturated, or past 2^61 ticks in all); -ENOMEM.
 */
int fnp_tree_dict_gap(const struct fnp_profile *p, size_t nkeys, double *tree_s, double *dict_s);

/*
 * Checks p's tree against p's dict (p->funcs[0, nkeys), read from the same file): the
 * tree's own times, in ticks of p->tick_seconds, must add up to the dict's tottimes within
 * rounding (docs/tree-format.md, "The tick against the dict"). A tick damaged or edited
 * would otherwise multiply every view's times. Returns 0, or -EINVAL with "offset off:
 * calling-context tree: ..." in why. A tree whose ticks saturated (a merge past 2^64 - 1)
 * cannot hold the dict's times and is not checked.
 */
int fnp_tree_check_dict(const struct fnp_profile *p, size_t nkeys, size_t off, char *why,
                        size_t whylen);

/* Sets key to value in p's metadata (copies both): a key already there gets the new value
 * in its old place. Returns 0 or -ENOMEM. */
int fnp_profile_set_meta(struct fnp_profile *p, const char *key, const char *value);
/* Removes key from p's metadata, if there; the other pairs keep their order. */
void fnp_profile_del_meta(struct fnp_profile *p, const char *key);
/* The value of key in p's metadata, or NULL. */
const char *fnp_profile_meta(const struct fnp_profile *p, const char *key);

/* ---- compensate.c: the hooks' own cost taken out of the times (docs/compensation.md) --- */

/* Metadata keys. The calibration of the run's hook pair, in ns with three decimals (in:
 * inside the measured interval of the call it brackets; out: outside it, in the caller's
 * time), written by the runtime into every timed profile; and, once the times are
 * compensated, what was taken off and how many calling contexts were clamped at 0. */
#define FNP_META_HOOK_IN "fnprof.hook_in_ns"
#define FNP_META_HOOK_OUT "fnprof.hook_out_ns"
#define FNP_META_COMPENSATED "fnprof.compensated"
#define FNP_META_CLAMPED "fnprof.clamped"
/* A calibration above this is no calibration (a hook pair costs tens of ns). */
#define FNP_HOOK_MAX_NS 100000.0

struct fnp_hook_cost {
    double in, out; /* ns */
};

struct fnp_compensated {
    uint64_t contexts;  /* tree nodes */
    uint64_t clamped;   /* of those, whose own time would have gone below 0 */
    uint64_t not_taken; /* ticks of hook cost the clamps left in */
};

/* Puts the calibration into p's metadata (as text, "%.3f"). 0, -EINVAL (a cost outside 0
 * to FNP_HOOK_MAX_NS, NaN) or -ENOMEM. */
int fnp_calibration_put(struct fnp_profile *p, double in_ns, double out_ns);
/* Reads it back: 0, -ENOENT (none) or -EINVAL (not two numbers in that range, as
 * fnp_calibration_put writes them: metadata is untrusted input). */
int fnp_calibration_get(const struct fnp_profile *p, struct fnp_hook_cost *ns);
/* The arithmetic on a forest t[0, n) (parents before children): each node's own time
 * less ncalls * in and its children's calls * out (both in ticks), clamped at 0; ticks
 * rebuilt from the new own times (back kept). 0, -EINVAL (a child before its parent, a
 * cost negative or not finite) or -ENOMEM (t unchanged). */
int fnp_tree_compensate(struct fnp_tree_node *t, size_t n, double in, double out,
                        struct fnp_compensated *r);
/* Compensates p's tree and, by the same amounts, its dict (functions and edges), with the
 * calibration in its metadata, and says so there (FNP_META_COMPENSATED, FNP_META_CLAMPED).
 * The runtime's dump (PROF_COMPENSATE=1) and `fnprof report/convert --compensate` call
 * this. 0 (r, may be NULL, filled), or p unchanged and -EALREADY (compensated already),
 * -ENOTSUP (no time tree: count-only, memory, none), -ENOENT (no calibration), -EINVAL (a
 * malformed one), -ERANGE (ticks past 2^62, which no run holds, or a tick so short that
 * the cost is no number of ticks), -EDOM (a dict that follows the tree only within the
 * reader's slack, which the compensated tree would not: a crafted file), -ENOMEM. */
int fnp_profile_compensate(struct fnp_profile *p, struct fnp_compensated *r);
/* Words for fnp_profile_compensate's refusals. */
const char *fnp_compensate_strerror(int rc);
/* k is the synthetic function ('~', 0, '<process>') a dump hangs a run's outermost calls
 * from (build.c), which its kept tree leaves out. */
int fnp_key_is_process(const struct fnp_key *k);
/* fnp_profile_add_tree of the forest t[0, n), its roots hung from one node of function proc
 * (ncalls calls, the roots' ticks) when proc >= 0: the numbers the dump's own were made
 * from. Compensation and waits.c rebuild a dict from a kept tree with it. */
int fnp_profile_add_rooted(struct fnp_profile *q, const struct fnp_tree_node *t, size_t n,
                           double tick_seconds, int64_t proc, uint64_t ncalls);

/* ---- build.c: a profile from recorded addresses ------------------------------------ */

/*
 * What a run recorded, before anything is named: used by the runtime's dump and by
 * `fnprof symbolize` on a raw snapshot (runtime/raw.c). Nodes come parent first.
 */
struct fnp_raw_node {
    uint64_t fn;     /* entry address in the low FNP_ADDR_BITS; the module generation above */
    uint32_t parent; /* index, or FNP_NO_PARENT for a thread's outermost calls */
    uint32_t thread; /* index of the thread it was recorded on */
    uint64_t ncalls;
    uint64_t ticks; /* inclusive ticks of the calls that returned or were closed */
    int64_t back;   /* ticks in its ticks that are not its own time, beyond its children's:
                       callees counted on another node (a folded recursion) add, calls of
                       other contexts merged into a child subtract */
    uint32_t flags; /* FNP_OPEN_*: 0, or what was open above its calls when its tree path
                       does not say */
};

/* Code addresses fit in 48 bits on x86_64 and arm64 user space; the bits above carry the
 * generation of the module map the address was recorded under (a dlclose begins a new
 * one), so an address reused by a later library still names the function it meant. */
#define FNP_ADDR_BITS 48
#define FNP_ADDR_MASK ((UINT64_C(1) << FNP_ADDR_BITS) - 1)
/* Keys with this bit are no code address (user space ends below it): named regions. */
#define FNP_REGION_TAG (UINT64_C(1) << 47)

/* A loaded object, live or unloaded: it holds the addresses [lo, hi) recorded under
 * generations below gen_end (UINT32_MAX for one still loaded). */
struct fnp_raw_module {
    const char *path;
    uint64_t bias; /* runtime address - ELF virtual address */
    uint64_t lo, hi;
    uint32_t gen_end;
};

/* A named region (include/fnprof.h): its key is FNP_REGION_TAG | (index + 1). */
struct fnp_raw_region {
    const char *file;
    uint32_t line;
    const char *name;
};

struct fnp_raw {
    const struct fnp_raw_node *nodes;
    size_t n;
    const struct fnp_raw_region *regions;
    size_t nregions;
    uint32_t *func_of; /* NULL, or filled by fnp_profile_build: the function of each node */
    size_t threads;    /* threads with at least one call */
    const struct fnp_raw_module *mods;
    size_t nmods;
    double tick_seconds;
    int count_only;        /* no timestamps were taken: ticks are rebuilt from call counts */
    uint64_t merged;       /* calls merged beyond the node cap ... */
    uint64_t max_nodes;    /* ... PROF_MAX_NODES: both in a label function when merged */
    unsigned merge_causes; /* FNP_MERGED_*: why; 0 when not known (a raw snapshot) */
    const struct fnp_mem_node *mem; /* NULL, or a memory profile's columns, mem[i] for
                                       nodes[i] (ticks are then bytes, tick_seconds 1) */
};

/*
 * Adds the calls and ticks of a link (runtime.h: recursion folding, the node cap) to its
 * target node, as the runtime's snapshot and the raw snapshot's reader both do. flags
 * with FNP_OPEN_GIVEN: a link of the node cap, whose flags the target takes and whose
 * time stays with the target's tree parent; else the target's tree parent gives the
 * ticks back and parent (FNP_NO_PARENT: none known) takes them off its own time.
 */
void fnp_raw_add_link(struct fnp_raw_node *nodes, uint32_t target, uint32_t parent, uint64_t ncalls,
                      uint64_t ticks, uint32_t flags);

/* The one-line reports of a written profile, without the "fnprof: " prefix, the same for
 * the runtime's exit and fnprof symbolize: "wrote PATH (N functions, M calls, T threads)"
 * into buf; and, returning 0 when nothing was merged, the note on calls merged beyond
 * the node cap. */
void fnp_raw_wrote_line(char *buf, size_t len, const struct fnp_raw *r, const char *path,
                        size_t nfuncs, uint64_t threads);
int fnp_raw_merged_line(char *buf, size_t len, const struct fnp_raw *r);

struct fnp_symbolizer;
struct fnp_symbol;

/* The symbolizer's three calls (symbolizer/symbolizer.h), linked in or dlopen'd. */
struct fnp_symbolizer_api {
    struct fnp_symbolizer *(*create)(void (*warn)(void *, const char *), void *ctx);
    int (*resolve)(struct fnp_symbolizer *s, const char *module, const uint64_t *addrs, size_t n,
                   struct fnp_symbol *out);
    void (*destroy)(struct fnp_symbolizer *s);
    void (*warn)(void *ctx, const char *msg); /* handed to create */
    /* where separate debug files are looked for (NULL: the symbolizer's default), and the
     * call that sets it */
    const char *debug_dirs;
    int (*set_debug_dirs)(struct fnp_symbolizer *s, const char *dirs);
    /* fnp_symbolizer_functions (symbolizer.h), for PROF_FILTER */
    int (*functions)(struct fnp_symbolizer *s, const char *module, const struct fnp_sym_func **out,
                     size_t *n, int *calls_hooks);
    /* A symbolizer its caller keeps across builds (the streamed trace's writer names a
     * few functions at a time): used as it is, not created nor destroyed. */
    struct fnp_symbolizer *kept;
};

/*
 * Names every address of r (api NULL: by module and offset) and adds the forest to p with
 * cProfile's rules. With more than one thread or outermost function, every outermost call
 * hangs from the synthetic function ('~', 0, '<process>'). In count-only mode each call
 * weighs one tick. Calls merged beyond the node cap are labelled by a function of one
 * call and no time, ('~', 0, '<fnprof: N calls merged beyond PROF_MAX_NODES=M ...>'),
 * which every report lists. Returns 0, -ENOMEM or -EINVAL (a malformed forest).
 */
int fnp_profile_build(struct fnp_profile *p, const struct fnp_raw *r,
                      const struct fnp_symbolizer_api *api);

/* Names the functions of n calls (a trace's) by their keys: one root per distinct key,
 * built by build(p, raw, ctx) from tmpl (its modules, regions, tick) with those roots as
 * the forest; func[i] gets key[i]'s function. Returns 0, -ENOMEM or build's error. */
typedef int (*fnp_build_fn)(struct fnp_profile *p, struct fnp_raw *r, void *ctx);
int fnp_profile_name_keys(struct fnp_profile *p, const struct fnp_raw *tmpl, const uint64_t *key,
                          size_t n, uint32_t *func, fnp_build_fn build, void *ctx);

/* ---- waits.c: library calls that wait (docs/libcalls.md) ---------------------------- */

/* k is a library call's key as PROF_LIBCALLS makes them: (library file name, 0, name). */
int fnp_key_is_libcall(const struct fnp_key *k);
/* k is a library call that waits (pthread_cond_wait, poll, read, usleep, ...). */
int fnp_key_is_wait(const struct fnp_key *k);
/* The names of the waits; *out borrowed (static). Returns how many. */
size_t fnp_wait_names(const char *const **out);

/* What fnp_profile_without_waits took out: the outermost waits' ticks and calls, and how
 * many functions they were. */
struct fnp_waits {
    uint64_t ticks, calls;
    size_t funcs;
};

/*
 * out: in with the time of every wait taken out, on the tree: a wait's calls keep their
 * count and lose their time (with whatever ran under them), and every node above one loses
 * that time from its inclusive ticks, so each function's tottime and cumtime are what they
 * would be had the waits returned at once. out has in's functions in in's order (the same
 * indices), its tree and metadata, and a "waits" pair saying what was taken out. Returns
 * 0, -EINVAL (in has no timed tree: a CPython profile, a count-only run) or -ENOMEM; out is
 * empty on failure and freed by the caller (fnp_profile_free) on success.
 */
int fnp_profile_without_waits(const struct fnp_profile *in, struct fnp_profile *out,
                              struct fnp_waits *w);

/* ---- sink.c: where writers put bytes ----------------------------------------------- */

struct fnp_sink {
    int fd;    /* file sink: buffered writes to fd; -1 for a memory sink */
    int err;   /* first error (negative errno); later writes are dropped */
    char *buf; /* caller frees with fnp_sink_free for memory sinks */
    size_t len;
    size_t cap;
    uint64_t total;      /* bytes accepted so far */
    int checksum;        /* set: crc is kept (fnp_profile_write, for the tree's trailer) */
    uint32_t crc;        /* fnp_crc32 of the bytes accepted while checksum was set */
    int fresh;           /* fd is a new regular file this sink fills from its start */
    size_t reserve_step; /* fnp_sink_reserve's */
    uint64_t reserved;   /* the file's blocks are allocated up to here */
};

/* A sink collecting into malloc'd memory (buf, len). */
void fnp_sink_memory(struct fnp_sink *s);
/* A sink writing to fd through a buffer of its own; fnp_sink_flush before closing fd. */
int fnp_sink_fd(struct fnp_sink *s, int fd);
void fnp_sink_write(struct fnp_sink *s, const void *data, size_t n);
/* fnp_sink_write of a string, and of printf's output. */
void fnp_sink_puts(struct fnp_sink *s, const char *str);
void fnp_sink_printf(struct fnp_sink *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* A long stream into a new file (fnp_write_file_atomic's, where s->fresh): its blocks
 * allocated step bytes ahead of the writes, the size unchanged (fallocate's KEEP_SIZE), so
 * that a write does not allocate; on ext4 this halves the kernel's time per byte. The
 * blocks past the end are given back when the file is done. Nothing where the file
 * system cannot. */
void fnp_sink_reserve(struct fnp_sink *s, size_t step);
/* Writes what is buffered; returns s->err. */
int fnp_sink_flush(struct fnp_sink *s);
/* Room for n bytes written in place, in the buffer (flushed first where needed), then
 * fnp_sink_wrote with how many were; NULL where the bytes must go through fnp_sink_write
 * (an error, a checksum kept, a memory sink without room). For writers of many small
 * records (perfetto.c's slices), which then make no copy and no call per record. */
static inline char *fnp_sink_room(struct fnp_sink *s, size_t n)
{
    if (s->err || s->checksum)
        return NULL;
    if (s->len + n > s->cap && (s->fd < 0 || n > s->cap || fnp_sink_flush(s)))
        return NULL;
    return s->buf + s->len;
}
static inline void fnp_sink_wrote(struct fnp_sink *s, size_t n)
{
    s->len += n;
    s->total += n;
}
void fnp_sink_free(struct fnp_sink *s);

/*
 * Writes what write puts in its sink to path, the one way every file fnprof writes is
 * written (docs/output-files.md):
 * - nothing at path, or a regular file: whole or not at all. A new file beside it (a name
 *   nobody can guess, O_EXCL) is renamed over path only if everything succeeded; it gets
 *   mode 0666 less the umask, as open(2) would give it.
 * - a FIFO or a character device (a terminal, /dev/null): written in place, never
 *   truncated nor renamed over; a FIFO with no reader is refused at once (-ENXIO).
 * - a symlink: followed as open(2) follows it (the kernel's protections apply), then the
 *   rule above for what it leads to. A regular file there is replaced in its own folder
 *   (the symlink stays), unless it is the file open on fd 1 or 2 (/dev/stdout with stdout
 *   a file): then the bytes go through that fd, after what is already there.
 * - anything else (a directory, a block device, a dangling symlink): refused.
 * SIGXFSZ and SIGPIPE caused by the writes are blocked in the calling thread and taken
 * back: a write past RLIMIT_FSIZE or to a FIFO whose reader left fails, nothing dies.
 * Returns 0 or -errno (fnp_write_file_strerror says it; a regular path left untouched).
 */
typedef int (*fnp_write_fn)(struct fnp_sink *s, void *ctx);
int fnp_write_file_atomic(const char *path, fnp_write_fn write, void *ctx);
/*
 * Around writes to a file: SIGXFSZ (past RLIMIT_FSIZE) and SIGPIPE (a FIFO whose reader
 * left) would end the process in the middle of one. Blocked in this thread meanwhile,
 * write(2) fails with EFBIG or EPIPE instead, and at the end the one such signal the
 * writes raised is taken back before the mask is restored; one that was pending before
 * stays, and one another process sent meanwhile is sent again. The process-wide
 * disposition is never touched. Async-signal-safe (the signal path's raw snapshot).
 * fnp_write_file_atomic does this itself.
 */
struct fnp_write_guard {
    sigset_t old, pending_before;
    int on;
};
void fnp_write_guard_begin(struct fnp_write_guard *g);
void fnp_write_guard_end(struct fnp_write_guard *g);
/* strerror for fnp_write_file_atomic's result, with words for the cases it adds. */
const char *fnp_write_file_strerror(int rc);
/* Async-signal-safe: removes the temporary file fnp_write_file_atomic is filling, if any;
 * for a handler of a signal that ends the process (the command's, toolchain/main.c). */
void fnp_write_file_abandon(void);
/* Async-signal-safe: creates name in dirfd (or AT_FDCWD) with O_CREAT|O_EXCL|O_NOFOLLOW,
 * mode 0666 less the umask, after replacing its last six characters by letters nobody can
 * guess (drawn again while the name is taken). Returns the fd (O_WRONLY, O_CLOEXEC) or
 * -errno. name is changed in place: it then names the file. */
int fnp_file_create_temp(int dirfd, char *name);

/* ---- marshal.c: the subset of Python's marshal format pstats needs ---------------- */

void fnp_marshal_dict_begin(struct fnp_sink *s);
void fnp_marshal_dict_end(struct fnp_sink *s);
void fnp_marshal_tuple(struct fnp_sink *s, uint32_t nitems);
void fnp_marshal_int(struct fnp_sink *s, uint64_t v);
void fnp_marshal_float(struct fnp_sink *s, double v);
/* The length of the valid UTF-8 sequence at p (1-4), or 0 when the bytes there are not
 * one: overlong forms, surrogates, values past U+10FFFF, a sequence cut short (by the
 * string's NUL). The one check of UTF-8 that every writer shares. */
size_t fnp_utf8_len(const unsigned char *p);

/* str from bytes: invalid UTF-8 sequences are replaced by U+FFFD. */
void fnp_marshal_str(struct fnp_sink *s, const char *str);

/* ---- json.c ---------------------------------------------------------------------- */

/* Writes the UTF-8 sequence at p, or U+FFFD for a byte that starts none
 * (fnp_utf8_len); returns where the next character starts. */
const unsigned char *fnp_utf8_copy(struct fnp_sink *s, const unsigned char *p);
/* A JSON string, quotes included: control characters, '"' and '\\' escaped, and '<', '>'
 * and '&' as \\u escapes so that the text can sit inside an HTML <script>; invalid UTF-8
 * bytes become U+FFFD. */
void fnp_json_string(struct fnp_sink *s, const char *str);
/* A double as JSON: %.17g, which reads back as the same double; null if not finite. */
void fnp_json_double(struct fnp_sink *s, double v);
/* v in decimal at p (at most 20 characters, no NUL); returns the end. By hand: printf's
 * machinery costs more than the rest of an event when millions are written. */
char *fnp_put_u64(char *p, uint64_t v);

/* ---- pstats.c ----------------------------------------------------------------------- */

/* Writes p as the marshalled dict cProfile's dump_stats writes. Times are clamped to
 * finite, non-negative values. Returns s->err. */
int fnp_pstats_write(const struct fnp_profile *p, struct fnp_sink *s);

/* ---- trace_write.c: the timeline as a Chrome trace (PROF_TRACE) -------------------- */

/* One call: [start, end) in clock ticks since the trace's origin, on track (an index of
 * the trace's tracks), of func (an index of the profile's functions). An end before the
 * start is written as a call of no length. */
struct fnp_trace_event {
    uint64_t start, end;
    uint32_t func;
    uint32_t track;
};

/* A thread: its own timeline in the viewer. */
struct fnp_trace_track {
    int tid;
    const char *name; /* the thread's name; NULL: none known */
};

struct fnp_trace {
    const struct fnp_profile *prof; /* function names, metadata (prof->meta) */
    /* The tracks' calls may interleave, but each track's come in the order they ended
     * (calls still open at the end: innermost first): of two calls with the same start
     * and end, the later is then taken for the caller. Not modified: the writer sorts
     * indices (4 bytes per event). */
    struct fnp_trace_event *events;
    size_t nevents;
    const struct fnp_trace_track *tracks; /* shown in this order, but the main thread's
                                             (tid == pid) first */
    size_t ntracks;
    /* is_region[func]: 1 a named region, 2 an interpreter's frame (a Python function,
     * fnprof_frame_*); NULL: none is */
    const uint8_t *is_region;
    int pid;
    const char *process; /* the process's name */
    double tick_seconds;
    uint64_t dropped; /* calls left out: the event limit was reached */
    uint64_t limit;   /* PROF_TRACE_EVENTS */
    /* PROF_TRACE_LAST's flight recording (0: not one): its N, and the older calls it
     * no longer holds (said in otherData). */
    uint64_t last, overwritten;
};

/* Writes t as Chrome trace event JSON (docs/trace.md): per track, calls by start, a
 * caller before its callees. Returns s->err: -EINVAL (and nothing written) for an event
 * naming no function or track of t, or a tick_seconds not positive; -ENOMEM. */
int fnp_trace_write(struct fnp_sink *s, const struct fnp_trace *t);
/* fnp_trace_write as an fnp_write_fn for fnp_write_file_atomic; trace the struct fnp_trace. */
int fnp_trace_write_fn(struct fnp_sink *s, void *trace);
/* trace_pftrace.c: t as a Perfetto protobuf trace (perfetto.c's packets, one sequence per
 * track, slices nested by time; the metadata and the flight recording's numbers in the
 * instant "fnprof: run"). Returns s->err: -EINVAL as fnp_trace_write, -ENOMEM. */
int fnp_trace_write_pftrace(struct fnp_sink *s, const struct fnp_trace *t);
int fnp_trace_write_pftrace_fn(struct fnp_sink *s, void *trace);
/* Whether path names a Perfetto file (.pftrace, .perfetto-trace). */
int fnp_trace_path_is_perfetto(const char *path);
/* The keys of what a flight recording holds (t->last), in both writers' metadata; a run's
 * pair of one of these names gives way to the recording's value. */
#define FNP_TRACE_KEY_FLIGHT "fnprof_flight_recording"
#define FNP_TRACE_KEY_LAST "fnprof_trace_last"
#define FNP_TRACE_KEY_CALLS "fnprof_flight_calls"
#define FNP_TRACE_KEY_OVERWRITTEN "fnprof_flight_overwritten"
int fnp_trace_is_flight_key(const char *key);

/* ---- marshal_read.c: Python's marshal format, any version CPython 3 writes ----------- */

/* Offsets and indices are 32-bit; the largest real pstats files are tens of MiB. */
#define FNP_MARSHAL_MAX_INPUT (1u << 30)
/* A pstats dict nests 5 deep (dict, tuple, dict, tuple, scalar): more is not pstats. */
#define FNP_MARSHAL_MAX_DEPTH 16

enum fnp_mval_kind {
    FNP_MVAL_NONE,
    FNP_MVAL_BOOL,
    FNP_MVAL_ELLIPSIS,
    FNP_MVAL_STOPITER,
    FNP_MVAL_INT,
    FNP_MVAL_FLOAT,
    FNP_MVAL_COMPLEX,
    FNP_MVAL_BYTES,
    FNP_MVAL_STR,
    FNP_MVAL_TUPLE,
    FNP_MVAL_LIST,
    FNP_MVAL_SET,
    FNP_MVAL_FROZENSET,
    FNP_MVAL_DICT,
};

#define FNP_MVAL_NEGATIVE 0x01 /* int: the value is -v.u */
#define FNP_MVAL_LATIN1 0x02   /* str: bytes are Latin-1 (a, A, z, Z), else UTF-8 (u, t) */
#define FNP_MVAL_COMPLETE 0x04 /* every item read; references may only name complete values */

struct fnp_mval {
    uint8_t kind;  /* enum fnp_mval_kind */
    uint8_t flags; /* FNP_MVAL_* */
    uint32_t n;    /* str/bytes: length; tuple, list, set: items; dict: pairs */
    uint32_t off;  /* offset of the type byte, for messages */
    union {
        uint64_t u;     /* int: magnitude; bool: 0 or 1; str, bytes: offset of the bytes */
        double d;       /* float */
        uint32_t first; /* tuple, list, set: first index in items; dict: first pair */
    } v;
};

struct fnp_mpair {
    uint32_t key, val; /* value indices */
    uint32_t next;     /* next pair of the same dict, or UINT32_MAX */
};

/* A decoded marshal object. Strings point into the input, which stays borrowed until
 * fnp_marshal_doc_free. */
struct fnp_marshal_doc {
    const unsigned char *data;
    size_t len;
    size_t end; /* offset just past the top-level object */
    uint32_t root;
    struct fnp_mval *vals;
    size_t nvals, vals_cap;
    uint32_t *items; /* tuple, list and set members, each container's contiguous */
    size_t nitems, items_cap;
    struct fnp_mpair *pairs;
    size_t npairs, pairs_cap;
    uint32_t *refs; /* value index of each object flagged 0x80, numbered in pre-order */
    size_t nrefs, refs_cap;
};

/*
 * Decodes the one object at the start of data[0, len). Bytes after it are left for the
 * caller to judge (d->end). Returns 0, -EINVAL (malformed: why says where and what),
 * -EFBIG (over FNP_MARSHAL_MAX_INPUT) or -ENOMEM. why (may be NULL) gets one line,
 * "offset N: what was wrong". On failure d holds nothing to free.
 */
int fnp_marshal_read(struct fnp_marshal_doc *d, const void *data, size_t len, char *why,
                     size_t whylen);
/* Frees d's arrays; accepts a zeroed doc. */
void fnp_marshal_doc_free(struct fnp_marshal_doc *d);
/* The readers' error: "offset OFF: " (and what, if not NULL, then ": "), the message, in
 * why (may be NULL), made one line (fnp_marshal_one_line). Returns -EINVAL. */
int fnp_read_fail(char *why, size_t whylen, size_t off, const char *what, const char *fmt,
                  va_list ap);
/* Makes a message one line of printable text: control characters from the file (a name
 * may hold a newline) become '?'. */
void fnp_marshal_one_line(char *s);
/* Python's name for a kind ("tuple", "str"), for messages. */
const char *fnp_marshal_kind_name(unsigned kind);

/* ---- raw_read.c: the raw snapshot a signal handler writes (runtime/raw.c) ---------- */

/*
 * Format, all integers u64 little-endian:
 *   "FNPRAW1\n", tick_seconds (an IEEE double's bits), count_only (0 or 1), then records,
 *   each a type byte and its fields:
 *   'M' bias lo hi gen_end path_len path[path_len]   a module (struct fnp_raw_module)
 *   'R' line file_len file[file_len] name_len name[name_len]
 *                                                     a named region or interpreted frame
 *                                                     (struct fnp_raw_region): the k-th 'R'
 *                                                     of the file (from 1) names the key
 *                                                     FNP_REGION_TAG | k; before 'E'
 *   'T'                                               the nodes after it are a new thread's
 *   'N' id parent_id fn ncalls ticks                  a node; ids are unique, 0 is no parent,
 *                                                     a parent comes before its children
 *   'L' id target_id parent_id ncalls ticks flags     a link (runtime.h): its calls and ticks
 *                                                     go to the node target_id, its ticks
 *                                                     off parent_id's own time (if a node);
 *                                                     flags: FNP_OPEN_* for target_id
 *   'O' id ticks                                      an open call of node or link id
 *   'F' tid fn t0 t1                                  PROF_TRACE_LAST: a call of the flight
 *                                                     recording (fn: its key, t0 and t1 in
 *                                                     ticks), a thread's in the order they
 *                                                     ended, calls still open last
 *   'K' tid name_len name[name_len]                   the name of a thread of 'F' records (the
 *                                                     last 'K' of a tid wins)
 *   'W' last overwritten not_kept origin pid          the flight recording's numbers: N, the
 *                                                     older calls it lost, the calls no chunk
 *                                                     held, the ticks of time 0, the process
 *   'E' dropped unmatched threads merged max_nodes    the end: a file without it is cut short
 * A reader refuses a record type it does not know, with its offset: a record added later
 * (as 'R' was) keeps the magic, since no older reader can misread the file.
 */
#define FNP_RAW_MAGIC "FNPRAW1\n"

struct fnp_raw_file {
    struct fnp_raw raw; /* nodes, mods and regions point into the arrays below */
    struct fnp_raw_node *nodes;
    struct fnp_raw_module *mods;
    struct fnp_raw_region *regions;
    char *paths; /* the modules' paths, the regions' files and names */
    uint64_t dropped, unmatched, threads_seen;
    /* PROF_TRACE_LAST's flight recording, when the file has a 'W' record (flight_seen). */
    struct fnp_raw_flight_call {
        int64_t tid;
        uint64_t fn, t0, t1;
    } * flight;
    size_t nflight;
    struct fnp_raw_flight_track {
        int64_t tid;
        const char *name; /* in paths */
    } * flight_tracks;
    size_t nflight_tracks;
    int flight_seen;
    uint64_t flight_last, flight_overwritten, flight_not_kept, flight_origin, flight_pid;
};

/* Reads a raw snapshot. Returns 0, or -EINVAL (malformed or cut short: why says where and
 * what) / -ENOMEM. Caller frees with fnp_raw_file_free, also after an error. */
int fnp_raw_read(struct fnp_raw_file *f, const void *data, size_t len, char *why, size_t whylen);
void fnp_raw_file_free(struct fnp_raw_file *f);

/* ---- pstats_read.c ------------------------------------------------------------------- */

/*
 * Reads a pstats file (the bytes of one, borrowed for the call) and adds its numbers to p,
 * as pstats.Stats.add does: into an empty profile (fnp_profile_init) that is the file's
 * profile. Accepts whatever CPython 3.8-3.13's cProfile and pstats write (marshal version
 * 0-4, references included) and rejects anything else shaped unlike cProfile's dict:
 * negative counts, negative or non-finite times, a line outside 0..UINT32_MAX, a key twice,
 * an empty dict (pstats.Stats refuses one), bytes after the dict other than fnprof's
 * calling-context tree (read too, into p's tree: fnp_tree_read). A caller key that is not
 * also a top-level key (pstats tolerates it) becomes a function with zero numbers.
 * Returns 0, or -EINVAL / -EFBIG / -ENOMEM with a one-line reason in why ("offset N: ...",
 * why may be NULL). On failure p is unchanged, except after -ENOMEM while adding to a
 * non-empty p, which may then hold part of the file.
 */
int fnp_pstats_read(struct fnp_profile *p, const void *data, size_t len, char *why, size_t whylen);

/* ---- outname.c: a profile's file name from its template ------------------------------ */

/* The MPI rank and world size a launcher gave this process; -1 each when unknown. source:
 * which launcher's variables gave them (an index of outname.c's table), -1 for none. */
struct fnp_launch {
    long rank, size;
    int source;
};

/* s as a whole decimal number below 2^31; -1 for anything else, NULL and "" included. */
long fnp_decimal31(const char *s);

/* Reads the launcher variables (mpirun, PMIx, Hydra, srun) through get (secure_getenv in
 * the runtime, getenv in the CLI). */
void fnp_launch_detect(struct fnp_launch *l, const char *(*get)(const char *name));

struct fnp_outname_vars {
    long pid;
    uint64_t cycle; /* 0: none */
    struct fnp_launch launch;
    const char *host; /* NULL: %h is empty */
};

/* The template with %p %n %r %h %% replaced, and ".rank<r>" and ".cycle<n>" appended where
 * the template has no %r and %n for them (outname.c has the rule). Malloc'd; NULL when out
 * of memory. */
char *fnp_outname(const char *in, const struct fnp_outname_vars *v);
/* Whether the template uses the code (%p: 'p'), "%%" being no code. */
int fnp_outname_has(const char *in, char code);

/* ---- signame.c: the signals of PROF_DUMP_SIGNAL and PROF_TOGGLE_SIGNAL ------------------ */

/* The signal s names: USR2, SIGUSR2, RTMIN+3, RTMAX-1 or a number; 0 for NULL, for no
 * signal, and for one that cannot serve (KILL, STOP, or a fault the program must see). */
int fnp_signal_parse(const char *s);

/*
 * fnprof record's requests to a running process (docs/controls.md, "fnprof record"): the
 * value sigqueue(3) sends with PROF_TOGGLE_SIGNAL or PROF_DUMP_SIGNAL. A signal without it
 * (kill(1), or another value) is an ordinary toggle or dump. The top byte is
 * FNP_LIVE_MAGIC, the next four bits the operation, the low 20 bits a token the runtime
 * shows, once the request is done, in the name of its signal thread: FNP_LIVE_THREAD,
 * then the state (FNP_LIVE_RECORDING, ...), then the token in 5 hexadecimal digits
 * ("fnprof-P0a3f1"), which /proc/PID/task/TID/comm shows to the requester. No fd, no file:
 * a daemon that closes every fd cannot break it.
 */
#define FNP_LIVE_MAGIC 0x66000000u
#define FNP_LIVE_MAGIC_MASK 0xff000000u
#define FNP_LIVE_OP_SHIFT 20
#define FNP_LIVE_TOKEN_MASK 0xfffffu
enum fnp_live_op {
    FNP_LIVE_TOGGLE = 1, /* on PROF_TOGGLE_SIGNAL: flip the user pause */
    FNP_LIVE_MARK = 2,   /* on PROF_DUMP_SIGNAL: a window starts now (no file) */
    FNP_LIVE_WINDOW = 3, /* on PROF_DUMP_SIGNAL: what came since the mark, to the output
                            path (as the dump signal names it) with FNP_LIVE_SUFFIX */
};
#define FNP_LIVE_SUFFIX ".window"
#define FNP_LIVE_THREAD "fnprof-"
#define FNP_LIVE_RECORDING 'R' /* recording */
#define FNP_LIVE_PAUSED 'P'    /* paused by the user: fnprof_pause, PROF_START, the toggle */
#define FNP_LIVE_SCHEDULED 'N' /* not paused by the user, but in a NONE step of PROF_SCHEDULE */
#define FNP_LIVE_ENDED 'E'     /* the exit dump has run: nothing is recorded any more */

/* ---- perfetto.c: Perfetto's protobuf trace, the subset in perfetto_subset.proto ------ */

/* The sequence-scoped clock each thread's packets count their deltas on (ids 64-127 are
 * a sequence's own), in nanoseconds. */
#define FNP_PF_CLOCK 64
/* Strings longer are cut (a name or path, not a message); a packet never exceeds the
 * other bound (the metadata: a packet past it is left out). */
#define FNP_PF_STRING_MAX 4096
#define FNP_PF_PACKET_MAX 65536

/* The process's track (uuid), on sequence seq. */
void fnp_pf_process(struct fnp_sink *s, uint32_t seq, uint64_t uuid, int pid, const char *name);
/* An instant on track at ts_ns (absolute: seq keeps the default clock), its debug
 * annotations the pairs meta. */
void fnp_pf_instant(struct fnp_sink *s, uint32_t seq, uint64_t track, uint64_t ts_ns,
                    const char *title, const struct fnp_meta *meta, size_t nmeta);
/* The pairs meta as the trace's metadata (a ChromeEventBundle's ChromeMetadata entries,
 * which trace processors list among the trace's metadata), on sequence seq. */
void fnp_pf_metadata(struct fnp_sink *s, uint32_t seq, const struct fnp_meta *meta, size_t nmeta);
/* Starts a thread's sequence: state cleared, its clock at ts_ns, its track described. */
void fnp_pf_thread_start(struct fnp_sink *s, uint32_t seq, uint64_t uuid, uint64_t parent, int pid,
                         int tid, const char *name, uint64_t ts_ns);
/* The thread's track again, with its name (known when it ends). */
void fnp_pf_thread_name(struct fnp_sink *s, uint32_t seq, uint64_t uuid, uint64_t parent, int pid,
                        int tid, const char *name);
/* Interns name (an EventName) and (file, line, name) (a SourceLocation), both as iid, on
 * seq. */
void fnp_pf_intern(struct fnp_sink *s, uint32_t seq, uint64_t iid, const char *name,
                   const char *file, uint32_t line);
/* A slice's begin (iid: its name and location) or end (iid 0), delta_ns after the
 * sequence's previous packet. */
void fnp_pf_slice(struct fnp_sink *s, uint32_t seq, uint64_t delta_ns, uint64_t iid);
/* fnp_pf_slice of each of ev[0, n) in order, in one loop (the streamed trace's writer). */
struct fnp_pf_slice_ev {
    uint64_t delta_ns, iid;
};
void fnp_pf_slices(struct fnp_sink *s, uint32_t seq, const struct fnp_pf_slice_ev *ev, size_t n);

#endif
