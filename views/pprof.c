/* SPDX-License-Identifier: MIT */
/*
 * pprof: Google's profile.proto, gzipped, as go tool pprof (-top, -traces, -raw, -http) and
 * speedscope read it. One sample per calling context (a node of the tree) with calls or own
 * time: its call path as locations, innermost first as the format wants; its values, [calls
 * along the path, its own wall time in ns] (sample types calls/count and wall/nanoseconds,
 * "wall" shown first); and a "thread" label naming its thread. The samples are the tree's
 * exact numbers, not a sampling: pprof's flat column is then each function's tottime, and
 * flat under -sample_index=calls its exact call count.
 *
 * A count-only profile (PROF_TIMER=none) gets the single value [calls]: a path's own value
 * there is its calls, so a second column would only repeat it, and a "wall" column would
 * claim times the run never measured.
 *
 * One location per function, its one line pointing at the function (file, first line), all
 * in one mapping that says its functions, files and lines are known: pprof then shows them
 * as they are and looks for no binary to symbolize (without a mapping it makes one up, and
 * complains that it has no file).
 * A function's name is its short label (views/labels.c: "name [file:line]" where two keys
 * share a name), since pprof aggregates by name and would merge two static functions of
 * two files. Its system_name stays unset: pprof takes a function whose system_name equals
 * its name as not yet demangled and "simplifies" it, cutting every (...) and <...> out of
 * names that look like C++, which merges overloads and empties "<module>"; with no
 * system_name it shows the name as fnprof has it (already demangled).
 *
 * Encoding: libprotobuf-c packs the messages of views/pprof/profile.proto (the subset of
 * profile.proto fnprof writes), zlib gzips them at Go's runtime/pprof level (best speed).
 * The profile goes out in pieces, each a Profile message holding a few fields, which
 * protobuf reads back as one message (repeated fields of concatenated messages are joined,
 * and proto3 leaves zero scalars out of every piece): a header, then the functions and the
 * samples BATCH at a time, so that memory beyond the tree stays a few hundred KiB however
 * many paths there are.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "profile.pb-c.h"
#include "views.h"

typedef Perftools__Profiles__Profile pb_profile;
typedef Perftools__Profiles__ValueType pb_value_type;
typedef Perftools__Profiles__Sample pb_sample;
typedef Perftools__Profiles__Label pb_label;
typedef Perftools__Profiles__Mapping pb_mapping;
typedef Perftools__Profiles__Location pb_location;
typedef Perftools__Profiles__Line pb_line;
typedef Perftools__Profiles__Function pb_function;

/* ---- the string table: every string once, position 0 "" ------------------------------ */

struct strtab {
    char **strs; /* owned, valid UTF-8 */
    size_t n, cap;
    uint32_t *slots; /* position + 1, 0 empty; sized once for cap strings at half load */
    size_t mask;
};

static uint64_t hash_str(const char *s)
{
    uint64_t h = 14695981039346656037ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* A copy of str that is valid UTF-8, as proto3 requires of a string field: a byte that
 * starts no valid sequence becomes U+FFFD (names hold whatever bytes the binary had). */
static char *utf8_dup(const char *str)
{
    struct fnp_sink out;
    fnp_sink_memory(&out);
    for (const unsigned char *p = (const unsigned char *)str; *p;)
        p = fnp_utf8_copy(&out, p);
    fnp_sink_write(&out, "", 1);
    if (out.err) {
        fnp_sink_free(&out);
        return NULL;
    }
    return out.buf; /* the caller frees it, as the sink's malloc'd buffer */
}

static int strtab_init(struct strtab *t, size_t cap)
{
    size_t slots = 2;
    while (slots < 2 * cap)
        slots *= 2;
    t->strs = calloc(cap, sizeof(*t->strs));
    t->slots = calloc(slots, sizeof(*t->slots));
    t->n = 0;
    t->cap = cap;
    t->mask = slots - 1;
    return t->strs && t->slots ? 0 : -ENOMEM;
}

static void strtab_free(struct strtab *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->strs[i]);
    free(t->strs);
    free(t->slots);
}

/* The position of str (copied as valid UTF-8), added if new; -ENOMEM, or -ENOSPC past
 * the capacity strtab_init was given (a bug in the count below). */
static int64_t strtab_add(struct strtab *t, const char *str)
{
    char *s = utf8_dup(str);
    if (!s)
        return -ENOMEM;
    size_t i = hash_str(s) & t->mask;
    for (; t->slots[i]; i = (i + 1) & t->mask)
        if (!strcmp(t->strs[t->slots[i] - 1], s)) {
            free(s);
            return t->slots[i] - 1;
        }
    if (t->n == t->cap) {
        free(s);
        return -ENOSPC;
    }
    t->strs[t->n] = s;
    t->slots[i] = (uint32_t)++t->n;
    return (int64_t)t->n - 1;
}

/* ---- the gzip stream: each piece packed whole, then deflated into the sink ------------- */

#define GZ_OUT 65536
/* Samples (and functions) per piece: big enough that protobuf-c's per-message work is
 * spread thin, small enough that a piece's buffer stays a few hundred KiB. */
#define BATCH 4096

struct gz {
    struct fnp_sink *s;
    z_stream z;
    int live;           /* deflateInit2 succeeded: deflateEnd owed */
    unsigned char *buf; /* one packed piece */
    size_t cap;
    unsigned char out[GZ_OUT];
};

/* Deflates in[0, len) (and with Z_FINISH, ends the stream) into the sink. */
static void gz_deflate(struct gz *g, const unsigned char *in, size_t len, int flush)
{
    g->z.next_in = (unsigned char *)in;
    g->z.avail_in = (uInt)len;
    int rc;
    do {
        g->z.next_out = g->out;
        g->z.avail_out = GZ_OUT;
        rc = deflate(&g->z, flush);
        if (rc == Z_STREAM_ERROR) {
            if (!g->s->err)
                g->s->err = -EIO;
            return;
        }
        fnp_sink_write(g->s, g->out, GZ_OUT - g->z.avail_out);
    } while (g->z.avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
}

/* One piece of the profile: a Profile message with some of its fields, packed into one
 * buffer (protobuf-c's fast path; its pack_to_buffer appends a few bytes at a time). */
static void emit(struct gz *g, const pb_profile *piece)
{
    if (g->s->err)
        return;
    size_t size = protobuf_c_message_get_packed_size(&piece->base);
    if (size > UINT32_MAX) { /* deflate takes a uInt; a batch is far below */
        g->s->err = -EFBIG;
        return;
    }
    if (size > g->cap) {
        size_t cap = size > 2 * g->cap ? size : 2 * g->cap;
        unsigned char *buf = realloc(g->buf, cap);
        if (!buf) {
            g->s->err = -ENOMEM;
            return;
        }
        g->buf = buf;
        g->cap = cap;
    }
    protobuf_c_message_pack(&piece->base, g->buf);
    gz_deflate(g, g->buf, size, Z_NO_FLUSH);
}

/* ---- the writer ------------------------------------------------------------------------ */

static int64_t clamp64(uint64_t v)
{
    return v > INT64_MAX ? INT64_MAX : (int64_t)v;
}

/* The strings and ids the pieces refer to, set up before the first piece. */
struct plan {
    struct strtab st;
    uint32_t *loc;  /* per function: its location (= function) id, 0 when no node runs it */
    size_t nlocs;   /* ids are 1..nlocs, in function order */
    char **labels;  /* fnp_labels_new */
    int64_t *names; /* per function, string positions: label and file */
    int64_t *files;
    pb_label *threads; /* the "thread" label of each thread */
    pb_label **thread_ptrs;
    int64_t comments[4];
    size_t ncomments;
    int64_t s_calls, s_count, s_wall, s_ns;
};

static void plan_free(struct plan *pl, const struct fnp_profile *p)
{
    strtab_free(&pl->st);
    free(pl->loc);
    fnp_labels_free(pl->labels, p->nfuncs);
    free(pl->names);
    free(pl->files);
    free(pl->threads);
    free(pl->thread_ptrs);
}

/* Fills pl; 0, -ENOMEM or -ENOSPC. duration is the longest thread's total in ns. */
static int plan_make(struct plan *pl, const struct fnp_profile *p, const struct fnp_view_opts *o,
                     uint64_t duration)
{
    size_t nf = p->nfuncs ? p->nfuncs : 1, nt = p->nthreads ? p->nthreads : 1;
    pl->loc = calloc(nf, sizeof(*pl->loc));
    pl->labels = fnp_labels_new(p, o->short_names);
    pl->names = malloc(nf * sizeof(*pl->names));
    pl->files = malloc(nf * sizeof(*pl->files));
    pl->threads = malloc(nt * sizeof(*pl->threads));
    pl->thread_ptrs = malloc(nt * sizeof(*pl->thread_ptrs));
    /* "", 4 type and unit names, "thread", the comments, the threads, 2 per function. */
    if (!pl->loc || !pl->labels || !pl->names || !pl->files || !pl->threads || !pl->thread_ptrs ||
        strtab_init(&pl->st, 6 + 4 + p->nthreads + 2 * p->nfuncs))
        return -ENOMEM;
    int64_t r[6];
    const char *fixed[] = {"", "calls", "count", "wall", "nanoseconds", "thread"};
    for (size_t i = 0; i < 6; i++)
        if ((r[i] = strtab_add(&pl->st, fixed[i])) < 0)
            return (int)r[i];
    pl->s_calls = r[1], pl->s_count = r[2], pl->s_wall = r[3], pl->s_ns = r[4];

    char text[256];
    const char *lines[4];
    size_t nl = 0;
    lines[nl++] = "fnprof: one sample per path of the exact calling-context tree (not sampled)";
    if (p->tree_kind == FNP_TREE_CALLS) {
        lines[nl++] = "count-only profile (PROF_TIMER=none): calls along each path, no times";
    } else {
        snprintf(text, sizeof(text),
                 "calls: calls along the path; wall: its own time, callees excluded; "
                 "duration: the longest thread's total (%.6f s)",
                 (double)duration / 1e9);
        lines[nl++] = text;
    }
    if (o->rebuilt)
        lines[nl++] = "paths rebuilt from caller edges (the input has no calling-context tree): "
                      "estimates";
    if (o->title)
        lines[nl++] = o->title;
    for (size_t i = 0; i < nl; i++)
        if ((pl->comments[i] = strtab_add(&pl->st, lines[i])) < 0)
            return (int)pl->comments[i];
    pl->ncomments = nl;

    for (size_t i = 0; i < p->nthreads; i++) {
        int64_t name = strtab_add(&pl->st, p->threads[i]);
        if (name < 0)
            return (int)name;
        perftools__profiles__label__init(&pl->threads[i]);
        pl->threads[i].key = r[5];
        pl->threads[i].str = name;
        pl->thread_ptrs[i] = &pl->threads[i];
    }

    for (size_t i = 0; i < p->ntree; i++)
        pl->loc[p->tree[i].func] = 1;
    for (size_t f = 0; f < p->nfuncs; f++) {
        if (!pl->loc[f])
            continue;
        pl->loc[f] = (uint32_t)++pl->nlocs;
        const struct fnp_key *k = &p->funcs[f].key;
        if ((pl->names[f] = strtab_add(&pl->st, pl->labels[f])) < 0)
            return (int)pl->names[f];
        if ((pl->files[f] = strtab_add(&pl->st, k->file)) < 0)
            return (int)pl->files[f];
    }
    return 0;
}

/* The header piece: value types, the mapping, period, duration, comments, strings. */
static void emit_header(struct gz *g, const struct fnp_profile *p, const struct plan *pl,
                        uint64_t duration)
{
    int count_only = p->tree_kind == FNP_TREE_CALLS;
    pb_value_type calls = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
    pb_value_type wall = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
    calls.type = pl->s_calls;
    calls.unit = pl->s_count;
    wall.type = pl->s_wall;
    wall.unit = pl->s_ns;
    pb_value_type *types[] = {&calls, &wall};
    pb_mapping map = PERFTOOLS__PROFILES__MAPPING__INIT;
    pb_mapping *maps[] = {&map};
    map.id = 1;
    map.has_functions = map.has_filenames = map.has_line_numbers = 1;
    pb_profile h = PERFTOOLS__PROFILES__PROFILE__INIT;
    h.n_mapping = 1;
    h.mapping = maps;
    h.n_sample_type = count_only ? 1 : 2;
    h.sample_type = types;
    h.period_type = count_only ? &calls : &wall;
    h.period = 1;
    h.duration_nanos = count_only ? 0 : clamp64(duration);
    h.default_sample_type = count_only ? pl->s_calls : pl->s_wall;
    h.n_comment = pl->ncomments;
    h.comment = (int64_t *)pl->comments;
    h.n_string_table = pl->st.n;
    h.string_table = pl->st.strs;
    emit(g, &h);
}

/* The functions and their locations (both of id pl->loc[f]), BATCH a piece. */
static int emit_functions(struct gz *g, const struct fnp_profile *p, const struct plan *pl)
{
    pb_function *fn = malloc(BATCH * sizeof(*fn));
    pb_function **fns = malloc(BATCH * sizeof(*fns));
    pb_line *line = malloc(BATCH * sizeof(*line));
    pb_line **lines = malloc(BATCH * sizeof(*lines));
    pb_location *loc = malloc(BATCH * sizeof(*loc));
    pb_location **locs = malloc(BATCH * sizeof(*locs));
    int rc = fn && fns && line && lines && loc && locs ? 0 : -ENOMEM;
    pb_profile piece = PERFTOOLS__PROFILES__PROFILE__INIT;
    piece.function = fns;
    piece.location = locs;
    size_t k = 0;
    for (size_t f = 0; f < p->nfuncs && !rc; f++) {
        if (pl->loc[f]) {
            perftools__profiles__function__init(&fn[k]);
            perftools__profiles__line__init(&line[k]);
            perftools__profiles__location__init(&loc[k]);
            fn[k].id = loc[k].id = line[k].function_id = pl->loc[f];
            fn[k].name = pl->names[f];
            fn[k].filename = pl->files[f];
            fn[k].start_line = line[k].line = p->funcs[f].key.line;
            lines[k] = &line[k];
            loc[k].mapping_id = 1;
            loc[k].n_line = 1;
            loc[k].line = &lines[k];
            fns[k] = &fn[k];
            locs[k] = &loc[k];
            k++;
        }
        if (k == BATCH || (k && f + 1 == p->nfuncs)) {
            piece.n_function = piece.n_location = k;
            emit(g, &piece);
            k = 0;
        }
    }
    free(fn);
    free(fns);
    free(line);
    free(lines);
    free(loc);
    free(locs);
    return rc;
}

/* Samples waiting for their piece; their paths are copied into ids, which grows only
 * between pieces (the samples point into it). */
struct batch {
    pb_sample sm[BATCH];
    pb_sample *ptr[BATCH];
    int64_t values[BATCH][2];
    size_t n;
    uint64_t *ids;
    size_t nids, cap;
};

static void batch_flush(struct gz *g, struct batch *b)
{
    pb_profile piece = PERFTOOLS__PROFILES__PROFILE__INIT;
    piece.n_sample = b->n;
    piece.sample = b->ptr;
    if (b->n)
        emit(g, &piece);
    b->n = b->nids = 0;
}

/* One sample per node with calls or own time, in pre-order. self: fnp_tree_values. */
static int emit_samples(struct gz *g, const struct fnp_profile *p, const struct plan *pl,
                        const uint64_t *self)
{
    size_t n = p->ntree;
    uint32_t *stack = malloc((n ? n : 1) * sizeof(*stack));
    /* The path leaf first is a window of rev: the root at the end, each level one before. */
    uint64_t *rev = malloc((n ? n : 1) * sizeof(*rev));
    struct batch *b = calloc(1, sizeof(*b));
    int rc = 0;
    if (!stack || !rev || !b) {
        rc = -ENOMEM;
        goto out;
    }
    int count_only = p->tree_kind == FNP_TREE_CALLS;
    size_t depth = 0;
    for (size_t i = 0; i < n && !g->s->err; i++) {
        const struct fnp_tree_node *nd = &p->tree[i];
        while (depth && stack[depth - 1] != nd->parent)
            depth--;
        stack[depth] = (uint32_t)i;
        rev[n - 1 - depth] = pl->loc[nd->func];
        depth++;
        uint64_t own = count_only ? nd->ncalls : fnp_tree_ns(p, self[i]);
        if (!nd->ncalls && !own)
            continue; /* adds nothing to any total */
        if (b->n == BATCH || b->nids + depth > b->cap)
            batch_flush(g, b);
        if (depth > b->cap) {
            size_t cap = depth > 2 * b->cap ? depth : 2 * b->cap;
            uint64_t *ids = realloc(b->ids, (cap > 65536 ? cap : 65536) * sizeof(*ids));
            if (!ids) {
                rc = -ENOMEM;
                goto out;
            }
            b->ids = ids;
            b->cap = cap > 65536 ? cap : 65536;
        }
        pb_sample *sm = &b->sm[b->n];
        perftools__profiles__sample__init(sm);
        sm->n_location_id = depth;
        sm->location_id = b->ids + b->nids;
        memcpy(sm->location_id, rev + n - depth, depth * sizeof(*rev));
        b->nids += depth;
        sm->n_value = count_only ? 1 : 2;
        sm->value = b->values[b->n];
        sm->value[0] = clamp64(nd->ncalls);
        if (!count_only)
            sm->value[1] = clamp64(own);
        uint32_t t = p->tree[stack[0]].thread;
        sm->n_label = t < p->nthreads;
        sm->label = sm->n_label ? &pl->thread_ptrs[t] : NULL;
        b->ptr[b->n++] = sm;
    }
    batch_flush(g, b);
out:
    if (b)
        free(b->ids);
    free(b);
    free(stack);
    free(rev);
    return rc;
}

/* The longest thread's total in ns: the run lasted at least that long. */
static uint64_t longest_thread(const struct fnp_profile *p, const uint64_t *self)
{
    if (p->tree_kind != FNP_TREE_TIME || !p->nthreads)
        return 0;
    uint64_t *sum = calloc(p->nthreads, sizeof(*sum));
    if (!sum)
        return 0; /* only a comment and an informational field go without */
    uint32_t t = 0;
    for (size_t i = 0; i < p->ntree; i++) {
        if (p->tree[i].parent == FNP_NO_PARENT)
            t = p->tree[i].thread; /* a subtree is contiguous: its nodes follow */
        if (t < p->nthreads)
            sum[t] += self[i];
    }
    uint64_t best = 0;
    for (size_t i = 0; i < p->nthreads; i++)
        best = sum[i] > best ? sum[i] : best;
    free(sum);
    return fnp_tree_ns(p, best);
}

int fnp_view_pprof(const struct fnp_profile *p, const struct fnp_view_opts *o, struct fnp_sink *s)
{
    struct plan pl = {0};
    uint64_t *self = malloc((p->ntree ? p->ntree : 1) * sizeof(*self));
    struct gz *g = calloc(1, sizeof(*g));
    int rc = -ENOMEM;
    if (!self || !g)
        goto out;
    fnp_tree_values(p, self, NULL);
    uint64_t duration = longest_thread(p, self);
    if ((rc = plan_make(&pl, p, o, duration)))
        goto out;
    g->s = s;
    /* windowBits 15 + 16: a gzip wrapper, the form profile.proto files take on disk. */
    rc = deflateInit2(&g->z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
    if (rc != Z_OK) {
        rc = rc == Z_MEM_ERROR ? -ENOMEM : -EINVAL;
        goto out;
    }
    g->live = 1;
    emit_header(g, p, &pl, duration);
    rc = emit_functions(g, p, &pl);
    if (!rc)
        rc = emit_samples(g, p, &pl, self);
    if (!rc && !s->err)
        gz_deflate(g, NULL, 0, Z_FINISH);
out:
    if (rc && !s->err)
        s->err = rc;
    if (g && g->live)
        deflateEnd(&g->z);
    if (g)
        free(g->buf);
    free(g);
    free(self);
    plan_free(&pl, p);
    return s->err;
}
