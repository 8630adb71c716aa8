/* SPDX-License-Identifier: MIT */
/*
 * The streamed trace's writer thread (stream.c hands it the chunks): per chunk, it names
 * the functions it has not seen (the symbolizer, as a dump does; once per function for the
 * run), rebuilds the calls' nesting, and writes begins and ends in time order as Perfetto
 * packets (profile/perfetto.c), one packet sequence per thread track.
 *
 * A chunk holds calls in the order they ended (a post-order of each thread's calls), then
 * the frames open when it was handed over. Calls that began before the chunk had their
 * begin written with an earlier chunk (they were open then): the writer keeps them per
 * track (announced) and writes only their end. So each chunk's packets are in time order
 * and every packet's time delta is >= 0, the sequence's incremental clock.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime.h"

struct open_call {
    const struct fnp_node *node;
    uint64_t t0;
};

struct track {
    struct track *next;
    uint64_t id, uuid;
    uint32_t seq;
    int tid, started;
    uint64_t last_ns;
    struct open_call *open; /* begins written, ends not yet: outermost first */
    size_t nopen, capopen;
    uint8_t *sent; /* iids interned on this sequence */
    size_t capsent;
    char name[16];
};

struct fn_name {
    uintptr_t fn; /* 0: a free slot */
    uint64_t iid;
};

struct item {
    uint64_t t0, t1; /* ticks */
    const struct fnp_node *node;
    uint32_t iid;
    int32_t next_begin; /* the next of the begins written just before the same end */
    uint8_t begin, end; /* written here (else before this chunk, or after it) */
};

/* The nesting's stack: a call not yet given its parent, and the first call of its subtree. */
struct pending {
    int32_t item, first;
};

/* The file's blocks allocated this far ahead of the writes (fnp_sink_reserve). */
#define RESERVE_STEP (16u << 20)

/* The events of a chunk, batched for fnp_pf_slices. */
#define BATCH 512

/* Writer thread only. */
static struct track *tracks;
static uint32_t next_seq = 1;
static struct fn_name *names;
static size_t names_mask;
static size_t nnames;
static struct item *items;
static int32_t *begins_at; /* per item: the first of the begins written just before its end */
static struct pending *stack;
static size_t capitems;
static struct fnp_pf_slice_ev batch[BATCH];
/* ns = ticks since origin * ns_mult >> ns_shift: fixed point, as precise as a double
 * (ns_mult keeps 52 bits or more of the tick's length), and a multiply where a conversion
 * to double and back took a fifth of the writer's time. */
static unsigned ns_shift;
static uint64_t ns_mult;
static uint64_t origin;
static int pid;
static uint64_t process_uuid;
static uint64_t dropped_seen;

static uint64_t ns_of(uint64_t ticks)
{
    return ticks > origin ? (uint64_t)((unsigned __int128)(ticks - origin) * ns_mult >> ns_shift)
                          : 0;
}

static struct fn_name *name_slot(uintptr_t fn)
{
    size_t h = (size_t)((fn * 0x9e3779b97f4a7c15ull) >> 20) & names_mask;
    while (names[h].fn && names[h].fn != fn)
        h = (h + 1) & names_mask;
    return &names[h];
}

static int grow_names(void)
{
    size_t cap = names ? (names_mask + 1) * 2 : 1024;
    struct fn_name *old = names;
    size_t oldcap = old ? names_mask + 1 : 0;
    if (!(names = calloc(cap, sizeof(*names)))) {
        names = old;
        return -ENOMEM;
    }
    names_mask = cap - 1;
    for (size_t i = 0; i < oldcap; i++)
        if (old[i].fn)
            *name_slot(old[i].fn) = old[i];
    free(old);
    return 0;
}

/* The writer's symbolizer, for the run: each new function is named by it without reading
 * the module's debug information again. */
static struct fnp_symbolizer *symbolizer;

/* What iid names: kept to intern it again on each sequence that uses it. */
struct iid_name {
    char *name, *file;
    uint32_t line;
};
static struct iid_name *iids; /* iids[iid - 1] */
static size_t niids, capiids;

/* Names the functions of fns (new ones, distinct) as a dump would: a profile of one root
 * each. */
static int build_kept(struct fnp_profile *p, struct fnp_raw *r, void *ctx)
{
    (void)ctx;
    return fnp_dump_build_kept(p, r, &symbolizer);
}

static void name_new(const uintptr_t *fns, size_t n)
{
    uint32_t *func_of = malloc(n * sizeof(*func_of));
    struct fnp_profile prof;
    fnp_profile_init(&prof);
    const struct fnp_raw tmpl = {.tick_seconds = 1};
    int rc =
        func_of ? fnp_profile_name_keys(&prof, &tmpl, fns, n, func_of, build_kept, NULL) : -ENOMEM;
    if (niids + n > capiids) {
        size_t cap = (niids + n) * 2;
        struct iid_name *m = realloc(iids, cap * sizeof(*m));
        if (m) {
            iids = m;
            capiids = cap;
        }
    }
    for (size_t i = 0; i < n; i++) {
        if ((nnames + 1) * 2 > names_mask + 1 && grow_names() != 0)
            break;
        if (niids >= capiids)
            break;
        char hex[32];
        const struct fnp_key *k =
            !rc && func_of[i] < prof.nfuncs ? &prof.funcs[func_of[i]].key : NULL;
        snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long)(fns[i] & FNP_ADDR_MASK));
        struct iid_name *e = &iids[niids];
        e->name = strdup(k && k->name ? k->name : hex);
        e->file = strdup(k && k->file ? k->file : "");
        e->line = k ? k->line : 0;
        if (!e->name || !e->file) {
            free(e->name);
            free(e->file);
            break;
        }
        struct fn_name *slot = name_slot(fns[i]);
        slot->fn = fns[i];
        slot->iid = ++niids;
        nnames++;
    }
    fnp_profile_free(&prof);
    free(func_of);
}

static uint64_t iid_of(uintptr_t fn)
{
    if (!names)
        return 0;
    struct fn_name *slot = name_slot(fn);
    return slot->fn ? slot->iid : 0;
}

static int by_fn(const void *a, const void *b)
{
    uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
    return x < y ? -1 : x > y;
}

/* The chunk being read: the nesting's depth, and the last names looked up (calls of one
 * node or function come in runs). */
static size_t depth;
static const struct fnp_node *prev_node;
static uintptr_t prev_fn;
static uint32_t prev_iid;
static size_t unnamed; /* items of functions not named yet */
/* The iids of nodes seen lately, by the node's address (a node is 64 bytes): a call's node
 * looked up here costs one load where its function's lookup cost two misses, the node's
 * and the hash's (a program of many functions, SQLite's: a fifth of the writer). */
#define NODE_IIDS 8192
struct node_iid {
    const struct fnp_node *node;
    uint64_t iid;
};
static struct node_iid node_iids[NODE_IIDS];

/* items[i] from its call: named (one lookup, none for the node or function of the item
 * before), and nested. In end order, a call's subtree is the calls before it that began no
 * earlier (a stack of calls not yet given a parent), and its begin is written just before
 * the end of its subtree's first call, a leaf: so each item keeps the begins due before its
 * end (begins_at), outermost (latest in end order) first. */
static inline void add_item(size_t i, uint64_t t0, uint64_t t1, const struct fnp_node *node,
                            int begin, int end)
{
    if (node != prev_node) {
        prev_node = node;
        struct node_iid *hit = &node_iids[((uintptr_t)node >> 6) & (NODE_IIDS - 1)];
        if (hit->node == node) {
            prev_iid = hit->iid;
        } else {
            uintptr_t fn = node->fn;
            if (fn != prev_fn || !prev_iid) {
                prev_fn = fn;
                prev_iid = (uint32_t)iid_of(fn);
            }
            if (prev_iid)
                *hit = (struct node_iid){node, prev_iid};
        }
    }
    unnamed += !prev_iid;
    int32_t first = (int32_t)i;
    begins_at[i] = -1;
    while (depth && items[stack[depth - 1].item].t0 >= t0)
        first = stack[--depth].first;
    items[i] = (struct item){t0, t1, node, prev_iid, -1, (uint8_t)begin, (uint8_t)end};
    if (begin) { /* a call whose begin was written before is in no list */
        items[i].next_begin = begins_at[first];
        begins_at[first] = (int32_t)i;
    }
    stack[depth++] = (struct pending){(int32_t)i, first};
}

/* Names the functions of the items add_item could not name (first seen). */
static void name_rest(size_t n)
{
    uintptr_t *fresh = malloc(unnamed * sizeof(*fresh));
    size_t k = 0;
    for (size_t i = 0; i < n && fresh; i++)
        if (!items[i].iid && (!k || fresh[k - 1] != items[i].node->fn))
            fresh[k++] = items[i].node->fn;
    if (k) {
        qsort(fresh, k, sizeof(*fresh), by_fn);
        size_t u = 0;
        for (size_t i = 0; i < k; i++)
            if (!u || fresh[u - 1] != fresh[i])
                fresh[u++] = fresh[i];
        if (names || grow_names() == 0)
            name_new(fresh, u);
    }
    for (size_t i = 0; i < n; i++)
        if (!items[i].iid)
            items[i].iid = (uint32_t)iid_of(items[i].node->fn);
    free(fresh);
}

static struct track *track_of(uint64_t id, int tid)
{
    for (struct track *t = tracks; t; t = t->next)
        if (t->id == id)
            return t;
    struct track *t = calloc(1, sizeof(*t));
    if (!t)
        return NULL;
    t->id = id;
    t->tid = tid;
    t->seq = ++next_seq;
    t->uuid = process_uuid | t->seq;
    fnp_trace_thread_name(tid, t->name);
    t->next = tracks;
    tracks = t;
    return t;
}

static void drop_track(struct track *t)
{
    for (struct track **p = &tracks; *p; p = &(*p)->next)
        if (*p == t) {
            *p = t->next;
            break;
        }
    free(t->open);
    free(t->sent);
    free(t);
}

/* Interns iid on t's sequence unless it was. */
static void intern_once(struct fnp_sink *s, struct track *t, uint32_t iid)
{
    if (iid > t->capsent) {
        size_t cap = (size_t)iid * 2;
        uint8_t *m = realloc(t->sent, cap);
        if (!m)
            return;
        memset(m + t->capsent, 0, cap - t->capsent);
        t->sent = m;
        t->capsent = cap;
    }
    if (!t->sent[iid - 1]) {
        /* iid 1 stands for a function left unnamed (no memory to name it), even when no
         * function could be named at all */
        static const struct iid_name unnamed_fn = {"<fnprof: unnamed>", "", 0};
        const struct iid_name *e = iid <= niids ? &iids[iid - 1] : &unnamed_fn;
        fnp_pf_intern(s, t->seq, iid, e->name, e->file, e->line);
        t->sent[iid - 1] = 1;
    }
}

/* The track's first packet, at ts: the time its slices count from. */
static uint64_t start_track(struct fnp_sink *s, struct track *t, uint64_t ts)
{
    fnp_pf_thread_start(s, t->seq, t->uuid, process_uuid, pid, t->tid, t->name, ts);
    t->started = 1;
    return ts;
}

/* One packet at ts (ns) into the batch for t: a begin of iid, or an end (iid 0). Kept in
 * time order on t's sequence as a delta from *last_ns; the track's start and a name not
 * yet sent go first. */
static inline void put(struct fnp_sink *s, struct track *t, uint64_t ts, uint32_t iid,
                       uint64_t *last_ns, size_t *nb)
{
    if (FNP_UNLIKELY(!t->started))
        *last_ns = start_track(s, t, ts);
    if (iid && FNP_UNLIKELY(iid > t->capsent || !t->sent[iid - 1])) {
        /* its name goes before its first slice on the sequence */
        fnp_pf_slices(s, t->seq, batch, *nb);
        *nb = 0;
        intern_once(s, t, iid);
    }
    ts = ts < *last_ns ? *last_ns : ts;
    batch[(*nb)++] = (struct fnp_pf_slice_ev){ts - *last_ns, iid};
    *last_ns = ts;
    if (FNP_UNLIKELY(*nb == BATCH)) {
        fnp_pf_slices(s, t->seq, batch, *nb);
        *nb = 0;
    }
}

static int grow_items(size_t n)
{
    if (n <= capitems)
        return 0;
    size_t cap = n + n / 2;
    struct item *m = realloc(items, cap * sizeof(*m));
    if (m)
        items = m;
    int32_t *at = realloc(begins_at, cap * sizeof(*at));
    if (at)
        begins_at = at;
    struct pending *st = realloc(stack, cap * sizeof(*st));
    if (st)
        stack = st;
    if (!m || !at || !st)
        return -ENOMEM;
    capitems = cap;
    return 0;
}

/* An open frame's start, as send() packs it (stream.c). */
static inline uint64_t open_t0(const struct fnp_trace_ev *e)
{
    return e->end | (uint64_t)e->dur << 32;
}

/* Whether the call of node from t0 is the newest of t's announced frames left above
 * prefix (*top of them): then it is taken. */
static inline int ends_announced(const struct track *t, size_t *top, size_t prefix,
                                 const struct fnp_node *node, uint64_t t0)
{
    if (*top > prefix && node == t->open[*top - 1].node && t0 == t->open[*top - 1].t0) {
        --*top;
        return 1;
    }
    return 0;
}

/* A frame closed while its chunk was handed over is one of the chunk's last calls. */
#define CLOSED_WINDOW 64

/* Writes c: its calls, with the track's announced frames and c's open ones. */
static void write_chunk(struct fnp_sink *s, struct fnp_stream_chunk *c)
{
    dropped_seen += c->dropped;
    struct track *t = track_of(c->track, c->tid);
    size_t n_open = c->nopen;
    if (!t || grow_items(c->n + n_open + (t ? t->nopen : 0) + 1) != 0)
        return;
    depth = unnamed = 0;
    prev_node = NULL;
    prev_iid = 0;
    const struct fnp_trace_ev *op = c->open_deep ? c->open_deep : c->recs + FNP_STREAM_OPEN_AT;
    /* Announced frames end in LIFO order: a call matching the newest one left is it, and
     * its begin was written before. The frames the hand-off still lists open (prefix) do
     * not end here. Matched as the calls are read, so that such a call is not among the
     * begins to write. */
    size_t top = t->nopen, prefix = 0, matched = 0;
    while (prefix < t->nopen && prefix < n_open && t->open[prefix].node == op[prefix].node &&
           t->open[prefix].t0 == open_t0(&op[prefix]))
        prefix++;
    /* The calls, in the order they ended. */
    size_t n = 0;
    uint64_t base = c->base, last = 0;
    for (size_t i = 0; i < c->n; i++) {
        const struct fnp_trace_ev *e = &c->recs[i];
        struct fnp_trace_rec r;
        if (e->node != FNP_TRACE_LONG && e->node != FNP_TRACE_BASE) {
            /* the common record, as fnp_trace_unpack reads it */
            r.t1 = base + e->end;
            r.t0 = r.t1 - e->dur;
            r.node = e->node;
        } else {
            size_t take = e->node == FNP_TRACE_LONG && i + 1 < c->n ? 2 : 1;
            if (!fnp_trace_unpack(e, take, &base, &r))
                continue;
            i += take - 1;
        }
        int begin = !ends_announced(t, &top, prefix, r.node, r.t0);
        matched = begin ? matched : n + 1;
        add_item(n++, r.t0, r.t1, r.node, begin, 1);
        last = r.t1 > last ? r.t1 : last;
    }
    size_t ncalls = n;
    /* The frames open at the hand-off, innermost first (the order they will end in). A
     * frame whose call is among the calls above was closed meanwhile (a cut of several
     * frames in progress): it and the frames above it are not open. */
    size_t keep = n_open, window = ncalls < CLOSED_WINDOW ? ncalls : CLOSED_WINDOW;
    /* Only frames that began no earlier than those calls can be one of them: the
     * innermost, found from the top (a stack deeper than the chunk's calls, a deep
     * recursion, is not compared whole for every chunk). */
    uint64_t earliest = UINT64_MAX;
    for (size_t i = ncalls - window; i < ncalls; i++)
        earliest = items[i].t0 < earliest ? items[i].t0 : earliest;
    size_t from = n_open;
    while (from > 0 && open_t0(&op[from - 1]) >= earliest)
        from--;
    for (size_t j = from; j < n_open && keep == n_open; j++)
        for (size_t i = ncalls - window; i < ncalls; i++)
            if (items[i].node == op[j].node && items[i].t0 == open_t0(&op[j]))
                keep = j;
    /* An announced frame that closed meanwhile (its call is above: a hook under way when
     * another thread closed the chunk, or a cut) ends with its call, not later: the
     * matching goes on below the frames kept, from the call after its last match. */
    if (prefix > keep) {
        prefix = keep;
        for (size_t i = matched; i < ncalls; i++)
            if (ends_announced(t, &top, prefix, items[i].node, items[i].t0))
                items[i].begin = 0;
    }
    /* Announced frames that neither stayed open nor ended here (a longjmp past them, a
     * lost record): they end with the chunk's last call, innermost first. */
    while (top > prefix) {
        top--;
        add_item(n++, t->open[top].t0, last, t->open[top].node, 0, 1);
    }
    /* The frames open at the hand-off; those announced before and still open have
     * nothing written now (unless the run ends), so they need no item. */
    int final = (c->flags & FNP_STREAM_FINAL) != 0;
    for (size_t j = keep; j-- > (final ? 0 : prefix);)
        add_item(n++, open_t0(&op[j]), final ? c->close_at : UINT64_MAX, op[j].node, j >= prefix,
                 final);
    if (unnamed)
        name_rest(n);
    /* Begins and ends in time order, each a delta from the packet before (never
     * negative), batched for fnp_pf_slices. */
    uint64_t last_ns = t->last_ns;
    size_t nb = 0;
    for (size_t i = 0; i < n; i++) {
        for (int32_t j = begins_at[i]; j >= 0; j = items[j].next_begin) {
            const struct item *it = &items[j];
            if (!it->begin)
                continue;
            put(s, t, ns_of(it->t0), it->iid ? it->iid : 1, &last_ns, &nb);
        }
        if (items[i].end)
            put(s, t, ns_of(items[i].t1), 0, &last_ns, &nb);
    }
    fnp_pf_slices(s, t->seq, batch, nb);
    t->last_ns = last_ns;
    fnp_stream_count(ncalls);
    /* The announced frames from now on: those open at the hand-off. */
    if (final || (c->flags & FNP_STREAM_ENDED)) {
        if (t->started && (c->flags & FNP_STREAM_ENDED) && c->name[0] &&
            strcmp(c->name, t->name) != 0)
            fnp_pf_thread_name(s, t->seq, t->uuid, process_uuid, pid, t->tid, c->name);
        drop_track(t);
        return;
    }
    if (keep > t->capopen) {
        struct open_call *m = realloc(t->open, keep * 2 * sizeof(*m));
        if (!m) {
            t->nopen = 0;
            return;
        }
        t->open = m;
        t->capopen = keep * 2;
    }
    for (size_t j = prefix; j < keep; j++) /* [0, prefix) are there already */
        t->open[j] = (struct open_call){op[j].node, open_t0(&op[j])};
    t->nopen = keep;
}

void fnp_stream_write_after_fork(void)
{
    /* The parent's symbolizer reads its files through descriptors whose offsets the two
     * processes share: the child's writer makes its own (the copy is left, unused). */
    symbolizer = NULL;
}

void fnp_stream_write_all(struct fnp_sink *s, struct fnp_stream_chunk *(*next)(void *),
                          void (*done)(void *, struct fnp_stream_chunk *), void *ctx)
{
    fnp_sink_reserve(s, RESERVE_STEP);
    double tick_ns = fnp_clock_tick_seconds() * 1e9;
    for (ns_shift = 63; ns_shift > 0 && tick_ns * (double)(1ull << ns_shift) >= 0x1p63; ns_shift--)
        ;
    ns_mult = (uint64_t)(tick_ns * (double)(1ull << ns_shift) + 0.5);
    origin = fnp_clock_origin();
    pid = (int)getpid();
    process_uuid = (uint64_t)(uint32_t)pid << 32;
    char exe[256];
    fnp_pf_process(s, 1, process_uuid, pid, fnp_trace_process(exe, sizeof(exe)));
    struct fnp_stream_chunk *c;
    while ((c = next(ctx)) != NULL) {
        write_chunk(s, c);
        done(ctx, c);
    }
    /* The run's metadata at the end, when the program has added its pairs
     * (fnprof_add_metadata): as the trace's metadata, and as an instant at time 0 on the
     * process's track, where the timeline shows it. */
    struct fnp_profile meta;
    fnp_profile_init(&meta);
    if (fnp_meta_fill(&meta) == 0) {
        fnp_pf_metadata(s, 1, meta.meta, meta.nmeta);
        fnp_pf_instant(s, 1, process_uuid, 0, "fnprof: run", meta.meta, meta.nmeta);
    }
    fnp_profile_free(&meta);
    fnp_dump_build_end(symbolizer);
    symbolizer = NULL;
    /* Tracks whose thread neither ended nor was open at the end (none expected). */
    while (tracks)
        drop_track(tracks);
    if (dropped_seen) {
        char num[32];
        snprintf(num, sizeof(num), "%llu", (unsigned long long)dropped_seen);
        struct fnp_meta m = {"calls_not_traced", num};
        fnp_pf_instant(s, 1, process_uuid, ns_of(fnp_clock_now()), "fnprof: calls not traced", &m,
                       1);
    }
}
