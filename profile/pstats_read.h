/*
 * profile/: reading pstats files back (for the fnprof command: report, merge).
 *
 * Two layers: marshal_read.c turns marshal bytes into a flat tree of values, resolving
 * references; pstats_read.c checks that the tree is shaped like cProfile's dict and loads it
 * into a struct fnp_profile. Both treat their input as hostile: every length, count and
 * depth is bounded, and nothing is read past the buffer.
 */
#ifndef FNPROF_PSTATS_READ_H
#define FNPROF_PSTATS_READ_H

#include <stddef.h>
#include <stdint.h>

#include "profile.h"

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
/* Makes a message one line of printable text: control characters from the file (a name
 * may hold a newline) become '?'. */
void fnp_marshal_one_line(char *s);
/* Python's name for a kind ("tuple", "str"), for messages. */
const char *fnp_marshal_kind_name(unsigned kind);

/* ---- pstats_read.c ------------------------------------------------------------------- */

/*
 * Reads a pstats file (the bytes of one, borrowed for the call) and adds its numbers to p,
 * as pstats.Stats.add does: into an empty profile (fnp_profile_init) that is the file's
 * profile. Accepts whatever CPython 3.8-3.13's cProfile and pstats write (marshal version
 * 0-4, references included) and rejects anything else shaped unlike cProfile's dict:
 * negative counts, negative or non-finite times, a line outside 0..UINT32_MAX, a key twice,
 * an empty dict (pstats.Stats refuses one), bytes after the dict. A caller key that is not
 * also a top-level key (pstats tolerates it) becomes a function with zero numbers.
 * Returns 0, or -EINVAL / -EFBIG / -ENOMEM with a one-line reason in why ("offset N: ...",
 * why may be NULL). On failure p is unchanged, except after -ENOMEM while adding to a
 * non-empty p, which may then hold part of the file.
 */
int fnp_pstats_read(struct fnp_profile *p, const void *data, size_t len, char *why, size_t whylen);

#endif
