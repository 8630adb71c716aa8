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
    const struct fnp_node *node;
    uint64_t t0, t1;
    uint64_t iid;
    int begin, end;
    int32_t first, last, sibling;
};

/* Writer thread only. */
static struct track *tracks;
static uint32_t next_seq = 1;
static struct fn_name *names;
static size_t names_mask;
static size_t nnames;
static struct item *items;
static size_t capitems;
static int32_t *stack;
static double tick_ns;
static uint64_t origin;
static int pid;
static uint64_t process_uuid;
static uint64_t dropped_seen;

static uint64_t ns_of(uint64_t ticks)
{
    return ticks > origin ? (uint64_t)((double)(ticks - origin) * tick_ns) : 0;
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

/* What iid names: kept to intern it again on each sequence that uses it. */
struct iid_name {
    char *name, *file;
    uint32_t line;
};
static struct iid_name *iids; /* iids[iid - 1] */
static size_t niids, capiids;

/* Names the functions of fns (new ones, distinct) as a dump would: a profile of one root
 * each. */
static void name_new(const uintptr_t *fns, size_t n)
{
    struct fnp_raw_node *roots = calloc(n, sizeof(*roots));
    uint32_t *func_of = malloc(n * sizeof(*func_of));
    struct fnp_profile prof;
    fnp_profile_init(&prof);
    int rc = roots && func_of ? 0 : -ENOMEM;
    for (size_t i = 0; i < n && !rc; i++)
        roots[i] = (struct fnp_raw_node){.fn = fns[i], .parent = FNP_NO_PARENT, .ncalls = 1};
    struct fnp_raw raw = {
        .nodes = roots, .n = n, .threads = 1, .tick_seconds = 1, .func_of = func_of};
    if (!rc)
        rc = fnp_dump_build(&prof, &raw);
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
    free(roots);
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

/* Every item's iid, naming the functions not seen before: one lookup per item (two for
 * a function new here), none for a call of the function of the item before it. */
static void name_items(size_t n)
{
    if (!names && grow_names() != 0)
        return;
    uintptr_t *fresh = malloc(n * sizeof(*fresh));
    size_t k = 0;
    uintptr_t prev = 0;
    uint64_t prev_iid = 0;
    for (size_t i = 0; i < n; i++) {
        uintptr_t fn = items[i].node->fn;
        if (fn != prev || !prev_iid) {
            prev = fn;
            prev_iid = iid_of(fn);
            if (!prev_iid && fresh && (!k || fresh[k - 1] != fn))
                fresh[k++] = fn;
        }
        items[i].iid = prev_iid;
    }
    if (k) {
        qsort(fresh, k, sizeof(*fresh), by_fn);
        size_t u = 0;
        for (size_t i = 0; i < k; i++)
            if (!u || fresh[u - 1] != fresh[i])
                fresh[u++] = fresh[i];
        name_new(fresh, u);
        for (size_t i = 0; i < n; i++)
            if (!items[i].iid)
                items[i].iid = iid_of(items[i].node->fn);
    }
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

/* One packet at ts (ns), kept in time order on its sequence. */
static inline void put(struct fnp_sink *s, struct track *t, uint64_t ts, uint64_t iid)
{
    if (!t->started) {
        fnp_pf_thread_start(s, t->seq, t->uuid, process_uuid, pid, t->tid, t->name, ts);
        t->started = 1;
        t->last_ns = ts;
    }
    if (ts < t->last_ns)
        ts = t->last_ns;
    if (iid) {
        if (iid > t->capsent) {
            size_t cap = iid * 2;
            uint8_t *m = realloc(t->sent, cap);
            if (m) {
                memset(m + t->capsent, 0, cap - t->capsent);
                t->sent = m;
                t->capsent = cap;
            }
        }
        if (iid <= t->capsent && !t->sent[iid - 1]) {
            const struct iid_name *e = &iids[iid - 1];
            fnp_pf_intern(s, t->seq, iid, e->name, e->file, e->line);
            t->sent[iid - 1] = 1;
        }
    }
    fnp_pf_slice(s, t->seq, ts - t->last_ns, iid);
    t->last_ns = ts;
}

static int grow_items(size_t n)
{
    if (n <= capitems)
        return 0;
    size_t cap = n + n / 2;
    struct item *m = realloc(items, cap * sizeof(*m));
    int32_t *st = realloc(stack, cap * sizeof(*st));
    if (m)
        items = m;
    if (st)
        stack = st;
    if (!m || !st)
        return -ENOMEM;
    capitems = cap;
    return 0;
}

/* Writes c: its calls, with the track's announced frames and c's open ones. */
static void write_chunk(struct fnp_sink *s, struct fnp_stream_chunk *c)
{
    dropped_seen += c->dropped;
    struct track *t = track_of(c->track, c->tid);
    size_t n_open = c->nopen;
    if (!t || grow_items(c->n + n_open + (t ? t->nopen : 0) + 1) != 0)
        return;
    /* The calls, in the order they ended. */
    size_t n = 0;
    uint64_t base = c->base, last = 0;
    for (size_t i = 0; i < c->n; i++) {
        const struct fnp_trace_ev *e = &c->recs[i];
        if (e->node != FNP_TRACE_LONG && e->node != FNP_TRACE_BASE) {
            /* the common record, as fnp_trace_unpack reads it */
            uint64_t t1 = base + e->end;
            items[n++] = (struct item){e->node, t1 - e->dur, t1, 0, 1, 1, -1, -1, -1};
            last = t1 > last ? t1 : last;
            continue;
        }
        size_t take = c->recs[i].node == FNP_TRACE_LONG && i + 1 < c->n ? 2 : 1;
        struct fnp_trace_rec r;
        if (!fnp_trace_unpack(&c->recs[i], take, &base, &r))
            continue;
        i += take - 1;
        items[n++] = (struct item){r.node, r.t0, r.t1, 0, 1, 1, -1, -1, -1};
        last = r.t1 > last ? r.t1 : last;
    }
    size_t ncalls = n;
    const struct fnp_trace_ev *op = c->open_deep ? c->open_deep : c->recs + FNP_STREAM_OPEN_AT;
    /* The frames open at the hand-off, innermost first (the order they will end in). A
     * frame whose call is among the calls above was closed meanwhile (a cut of several
     * frames in progress): it and the frames above it are not open. */
    size_t keep = n_open;
    for (size_t j = 0; j < n_open; j++) {
        uint64_t t0 = op[j].end | (uint64_t)op[j].dur << 32;
        int closed = 0;
        for (size_t i = ncalls; i-- > 0 && i + 64 > ncalls;)
            if (items[i].node == op[j].node && items[i].t0 == t0)
                closed = 1;
        if (closed) {
            keep = j;
            break;
        }
    }
    /* Announced frames end in LIFO order: a call matching the newest one left is it. */
    size_t top = t->nopen, prefix = 0;
    while (prefix < t->nopen && prefix < n_open && t->open[prefix].node == op[prefix].node &&
           t->open[prefix].t0 == (op[prefix].end | (uint64_t)op[prefix].dur << 32))
        prefix++;
    /* An announced frame that closed meanwhile (its call is above: a hook under way when
     * another thread closed the chunk, or a cut) ends with its call, not later. */
    if (prefix > keep)
        prefix = keep;
    for (size_t i = 0; i < ncalls; i++)
        if (top > prefix && items[i].node == t->open[top - 1].node &&
            items[i].t0 == t->open[top - 1].t0) {
            items[i].begin = 0;
            top--;
        }
    /* Announced frames that neither stayed open nor ended here (a longjmp past them, a
     * lost record): they end with the chunk's last call, innermost first. */
    while (top > prefix) {
        top--;
        items[n++] = (struct item){t->open[top].node, t->open[top].t0, last, 0, 0, 1, -1, -1, -1};
    }
    int final = (c->flags & FNP_STREAM_FINAL) != 0;
    for (size_t j = keep; j-- > 0;) {
        uint64_t t0 = op[j].end | (uint64_t)op[j].dur << 32;
        items[n++] = (struct item){
            op[j].node, t0, final ? c->close_at : UINT64_MAX, 0, j >= prefix, final, -1, -1, -1};
    }
    name_items(n);
    /* The nesting: in end order, a call's children are the calls before it that began
     * no earlier (a stack of calls not yet given a parent). */
    size_t depth = 0;
    for (size_t i = 0; i < n; i++) {
        int32_t first = -1;
        while (depth && items[stack[depth - 1]].t0 >= items[i].t0) {
            int32_t ch = stack[--depth];
            items[ch].sibling = first;
            first = ch;
        }
        items[i].first = first;
        stack[depth++] = (int32_t)i;
    }
    /* The roots, in order, then each tree depth first: begins and ends in time order. */
    for (size_t r = 0; r < depth; r++) {
        int32_t root = stack[r];
        /* iterative: last holds the parent on the way down, for the way back up */
        int32_t cur = root;
        while (cur >= 0) {
            struct item *it = &items[cur];
            if (it->begin)
                put(s, t, ns_of(it->t0), it->iid ? it->iid : 1);
            if (it->first >= 0) {
                /* descend: remember where to come back by the parent link in last */
                items[it->first].last = cur;
                cur = it->first;
                continue;
            }
            /* leaf: end it, then go to the next sibling, ending parents on the way up */
            for (;;) {
                it = &items[cur];
                if (it->end)
                    put(s, t, ns_of(it->t1), 0);
                if (it->sibling >= 0) {
                    items[it->sibling].last = it->last;
                    cur = it->sibling;
                    break;
                }
                cur = it->last;
                if (cur < 0 || cur == root) {
                    if (cur == root && items[root].end)
                        put(s, t, ns_of(items[root].t1), 0);
                    cur = -1;
                    break;
                }
            }
        }
    }
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
    for (size_t j = 0; j < keep; j++)
        t->open[j] = (struct open_call){op[j].node, op[j].end | (uint64_t)op[j].dur << 32};
    t->nopen = keep;
}

void fnp_stream_write_all(struct fnp_sink *s, struct fnp_stream_chunk *(*next)(void *),
                          void (*done)(void *, struct fnp_stream_chunk *), void *ctx)
{
    tick_ns = fnp_clock_tick_seconds() * 1e9;
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
