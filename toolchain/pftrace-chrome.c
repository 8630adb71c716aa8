/* SPDX-License-Identifier: MIT */
/*
 * fnprof convert FILE.pftrace --to chrome-trace: a streamed Perfetto trace (runtime/stream.c,
 * profile/perfetto_subset.proto) as Chrome's JSON trace, one packet at a time. Memory is a
 * packet, the names each sequence interned (one per function) and one entry per track: it
 * does not grow with the calls. Slices become "B"/"E" event pairs on their thread, in the
 * file's order (each track's events are in time order there); the run's metadata instants
 * become instant events with their annotations as args.
 *
 * Only the fields fnprof writes are read; others are skipped, and a packet that is not
 * well-formed protobuf (it, or any message of it that is read) ends the conversion with an
 * error. The file is untrusted (tests/fuzz_pftrace.c): nothing is allocated from a length
 * or an id it holds beyond what the bytes read so far hold.
 */
#include "pftrace-chrome.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"

#define PACKET_STEP (64 * 1024) /* a packet's buffer grows by what was read, from this */

struct span {
    const uint8_t *p;
    size_t n;
};

/* What an iid names on a sequence: its EventName, its SourceLocation (either may be
 * missing). */
struct interned {
    uint64_t iid;
    char *name, *file;
    uint32_t line;
    int used;
};

/* Interned ids are the writer's, global ones (runtime/stream_write.c), so a sequence may
 * use a few far apart: they are kept in an open-addressing table, sized by how many were
 * interned, not by the largest. A table indexed by iid let one 12-byte packet naming
 * iid 2^24 - 1 allocate 400 MB (tests/data/pftrace_seeds/sparse_iid.pftrace). */
struct seq {
    uint32_t id;
    uint64_t clock, clock_val, track;
    int has_clock;
    struct interned *ids;
    size_t nids, capids; /* capids: 0 or a power of two, at most half full */
};

struct track {
    uint64_t uuid;
    int pid, tid;
};

/* Where a key (a sequence id, a track uuid) is in its array: open addressing, at most half
 * full. A file may hold as many sequences and tracks as it has packets, and a search of the
 * array made a 6 MB file of one new sequence per packet take minutes (quadratic). */
struct index_ent {
    uint64_t key;
    size_t at; /* the array's index + 1; 0: an empty slot */
};

struct index {
    struct index_ent *ents;
    size_t cap; /* 0 or a power of two */
};

struct conv {
    struct fnp_sink *s;
    struct seq *seqs;
    size_t nseqs, capseqs;
    struct index seq_ix;
    struct track *tracks;
    size_t ntracks, captracks;
    struct index track_ix;
    int first;
};

static size_t hash(uint64_t key, size_t cap)
{
    return (size_t)((key * 0x9e3779b97f4a7c15u) >> 32) & (cap - 1);
}

static struct index_ent *index_slot(struct index_ent *ents, size_t cap, uint64_t key)
{
    size_t i = hash(key, cap);
    while (ents[i].at && ents[i].key != key)
        i = (i + 1) & (cap - 1);
    return &ents[i];
}

/* The array index + 1 of key, or 0. */
static size_t index_find(const struct index *x, uint64_t key)
{
    return x->cap ? index_slot(x->ents, x->cap, key)->at : 0;
}

/* Key at array index at - 1, the array now holding n: -ENOMEM or 0. */
static int index_add(struct index *x, uint64_t key, size_t at, size_t n)
{
    if (2 * n > x->cap) {
        size_t cap = x->cap ? x->cap * 2 : 64;
        struct index_ent *ents = calloc(cap, sizeof(*ents));
        if (!ents)
            return -ENOMEM;
        for (size_t i = 0; i < x->cap; i++)
            if (x->ents[i].at)
                *index_slot(ents, cap, x->ents[i].key) = x->ents[i];
        free(x->ents);
        x->ents = ents;
        x->cap = cap;
    }
    *index_slot(x->ents, x->cap, key) = (struct index_ent){key, at};
    return 0;
}

static int varint(struct span *b, uint64_t *v)
{
    uint64_t r = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (!b->n)
            return -1;
        uint8_t c = *b->p++;
        b->n--;
        r |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *v = r;
            return 0;
        }
    }
    return -1;
}

/* The next field of b: its number, wire type, and value (varint) or bytes (wt 2). */
static int field(struct span *b, uint32_t *num, uint64_t *v, struct span *bytes)
{
    uint64_t key;
    if (varint(b, &key))
        return -1;
    *num = (uint32_t)(key >> 3);
    switch (key & 7) {
    case 0:
        return varint(b, v);
    case 1:
    case 5: {
        size_t k = (key & 7) == 1 ? 8 : 4;
        if (b->n < k)
            return -1;
        b->p += k;
        b->n -= k;
        return 1;
    }
    case 2:
        if (varint(b, v) || *v > b->n)
            return -1;
        *bytes = (struct span){b->p, (size_t)*v};
        b->p += *v;
        b->n -= (size_t)*v;
        return 2;
    default:
        return -1;
    }
}

/* The first varint field num of m, or def. */
static uint64_t get(struct span m, uint32_t num, uint64_t def)
{
    uint32_t f;
    uint64_t v;
    struct span by;
    int wt;
    while (m.n && (wt = field(&m, &f, &v, &by)) >= 0)
        if (f == num && wt == 0)
            def = v;
    return def;
}

/* The last bytes field num of m (empty when none). */
static struct span get_bytes(struct span m, uint32_t num)
{
    uint32_t f;
    uint64_t v;
    struct span by, out = {NULL, 0};
    int wt;
    while (m.n && (wt = field(&m, &f, &v, &by)) >= 0)
        if (f == num && wt == 2)
            out = by;
    return out;
}

/* Whether m is whole fields to its end. */
static int well_formed(struct span m)
{
    uint32_t f;
    uint64_t v;
    struct span by;
    while (m.n)
        if (field(&m, &f, &v, &by) < 0)
            return 0;
    return 1;
}

/* The last field num of m (a message read whole before) as a message, in *out (empty when
 * none): -1 when that one is not well-formed. */
static int get_msg(struct span m, uint32_t num, struct span *out)
{
    *out = get_bytes(m, num);
    return well_formed(*out) ? 0 : -1;
}

static char *dup_span(struct span s)
{
    char *c = malloc(s.n + 1);
    if (c) {
        if (s.n)
            memcpy(c, s.p, s.n);
        c[s.n] = 0;
    }
    return c;
}

static void json_span(struct fnp_sink *s, struct span sp)
{
    char *c = dup_span(sp);
    fnp_json_string(s, c ? c : "");
    free(c);
}

static struct seq *seq_of(struct conv *cv, uint32_t id)
{
    size_t at = index_find(&cv->seq_ix, id);
    if (at)
        return &cv->seqs[at - 1];
    if (cv->nseqs == cv->capseqs) {
        size_t cap = cv->capseqs ? cv->capseqs * 2 : 8;
        struct seq *n = realloc(cv->seqs, cap * sizeof(*n));
        if (!n)
            return NULL;
        cv->seqs = n;
        cv->capseqs = cap;
    }
    if (index_add(&cv->seq_ix, id, cv->nseqs + 1, cv->nseqs + 1))
        return NULL;
    struct seq *n = &cv->seqs[cv->nseqs++];
    memset(n, 0, sizeof(*n));
    n->id = id;
    return n;
}

static void seq_clear(struct seq *q)
{
    for (size_t i = 0; i < q->capids; i++) {
        free(q->ids[i].name);
        free(q->ids[i].file);
    }
    free(q->ids);
    uint32_t id = q->id;
    memset(q, 0, sizeof(*q));
    q->id = id;
}

/* The slot of iid in a table of cap (a power of two): its own, or the empty one it goes in. */
static struct interned *slot(struct interned *ids, size_t cap, uint64_t iid)
{
    size_t i = hash(iid, cap);
    while (ids[i].used && ids[i].iid != iid)
        i = (i + 1) & (cap - 1);
    return &ids[i];
}

static struct interned *seq_find(struct seq *q, uint64_t iid)
{
    struct interned *e = q->capids ? slot(q->ids, q->capids, iid) : NULL;
    return e && e->used ? e : NULL;
}

/* iid's entry on q, made empty when new; NULL when out of memory. */
static struct interned *seq_add(struct seq *q, uint64_t iid)
{
    struct interned *e = seq_find(q, iid);
    if (e)
        return e;
    if (2 * (q->nids + 1) > q->capids) {
        size_t cap = q->capids ? q->capids * 2 : 64;
        struct interned *ids = calloc(cap, sizeof(*ids));
        if (!ids)
            return NULL;
        for (size_t i = 0; i < q->capids; i++)
            if (q->ids[i].used)
                *slot(ids, cap, q->ids[i].iid) = q->ids[i];
        free(q->ids);
        q->ids = ids;
        q->capids = cap;
    }
    e = slot(q->ids, q->capids, iid);
    *e = (struct interned){.iid = iid, .used = 1};
    q->nids++;
    return e;
}

static struct track *track_of(struct conv *cv, uint64_t uuid)
{
    size_t at = index_find(&cv->track_ix, uuid);
    return at ? &cv->tracks[at - 1] : NULL;
}

static void sep(struct conv *cv)
{
    fnp_sink_puts(cv->s, cv->first ? "\n" : ",\n");
    cv->first = 0;
}

static void ts_us(struct fnp_sink *s, uint64_t ns)
{
    fnp_sink_printf(s, "%" PRIu64 ".%03u", ns / 1000, (unsigned)(ns % 1000));
}

static int track_descriptor(struct conv *cv, struct span td)
{
    uint64_t uuid = get(td, 1, 0);
    struct span proc, thr;
    if (get_msg(td, 3, &proc) || get_msg(td, 4, &thr))
        return -EINVAL;
    struct track *t = track_of(cv, uuid);
    if (!t) {
        if (cv->ntracks == cv->captracks) {
            size_t cap = cv->captracks ? cv->captracks * 2 : 64;
            struct track *n = realloc(cv->tracks, cap * sizeof(*n));
            if (!n)
                return -ENOMEM;
            cv->tracks = n;
            cv->captracks = cap;
        }
        if (index_add(&cv->track_ix, uuid, cv->ntracks + 1, cv->ntracks + 1))
            return -ENOMEM;
        t = &cv->tracks[cv->ntracks++];
        *t = (struct track){uuid, 0, 0};
    }
    if (proc.p) {
        t->pid = (int)get(proc, 1, 0);
        t->tid = t->pid;
        sep(cv);
        fnp_sink_printf(cv->s,
                        "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"tid\":%d,"
                        "\"args\":{\"name\":",
                        t->pid, t->tid);
        json_span(cv->s, get_bytes(proc, 6));
        fnp_sink_puts(cv->s, "}}");
    }
    if (thr.p) {
        t->pid = (int)get(thr, 1, 0);
        t->tid = (int)get(thr, 2, 0);
        sep(cv);
        fnp_sink_printf(cv->s,
                        "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,\"tid\":%d,"
                        "\"args\":{\"name\":",
                        t->pid, t->tid);
        json_span(cv->s, get_bytes(thr, 5));
        fnp_sink_puts(cv->s, "}}");
    }
    return 0;
}

static int interned(struct seq *q, struct span idata)
{
    uint32_t f;
    uint64_t v;
    struct span m;
    int wt;
    while (idata.n && (wt = field(&idata, &f, &v, &m)) >= 0) {
        if (wt != 2 || (f != 2 && f != 4))
            continue;
        if (!well_formed(m))
            return -EINVAL;
        struct interned *e = seq_add(q, get(m, 1, 0));
        if (!e)
            return -ENOMEM;
        char **to = f == 2 ? &e->name : &e->file;
        free(*to);
        if (!(*to = dup_span(get_bytes(m, 2))))
            return -ENOMEM;
        if (f == 4)
            e->line = (uint32_t)get(m, 4, 0);
    }
    return 0;
}

static int track_event(struct conv *cv, struct seq *q, struct span te, uint64_t ts)
{
    uint64_t type = get(te, 9, 0);
    struct track *t = track_of(cv, get(te, 11, q->track));
    int pid = t ? t->pid : 0, tid = t ? t->tid : 0;
    struct fnp_sink *s = cv->s;
    if (type == 2) {
        sep(cv);
        fnp_sink_printf(s, "{\"ph\":\"E\",\"pid\":%d,\"tid\":%d,\"ts\":", pid, tid);
        ts_us(s, ts);
        fnp_sink_puts(s, "}");
        return 0;
    }
    if (type == 1) {
        uint64_t li = get(te, 34, UINT64_MAX);
        struct interned *name = seq_find(q, get(te, 10, 0));
        struct interned *loc = li == UINT64_MAX ? NULL : seq_find(q, li);
        if (!name || !name->name)
            return -EINVAL; /* a name never interned on this sequence */
        sep(cv);
        fnp_sink_printf(s, "{\"ph\":\"B\",\"pid\":%d,\"tid\":%d,\"ts\":", pid, tid);
        ts_us(s, ts);
        fnp_sink_puts(s, ",\"name\":");
        fnp_json_string(s, name->name);
        if (loc && loc->file) {
            fnp_sink_puts(s, ",\"args\":{\"file\":");
            fnp_json_string(s, loc->file);
            fnp_sink_printf(s, ",\"line\":%u}", loc->line);
        }
        fnp_sink_puts(s, "}");
        return 0;
    }
    uint32_t f;
    uint64_t v;
    struct span a, all = te;
    int wt, n = 0;
    while (type == 3 && all.n && (wt = field(&all, &f, &v, &a)) >= 0)
        if (f == 4 && wt == 2 && !well_formed(a))
            type = 0; /* checked before any of the event is written */
    if (type != 3)
        return -EINVAL;
    sep(cv);
    fnp_sink_printf(s, "{\"ph\":\"i\",\"s\":\"p\",\"pid\":%d,\"tid\":%d,\"ts\":", pid, tid);
    ts_us(s, ts);
    fnp_sink_puts(s, ",\"name\":");
    json_span(s, get_bytes(te, 23));
    fnp_sink_puts(s, ",\"args\":{");
    while (te.n && (wt = field(&te, &f, &v, &a)) >= 0) {
        if (f != 4 || wt != 2)
            continue;
        fnp_sink_puts(s, n++ ? "," : "");
        json_span(s, get_bytes(a, 10));
        fnp_sink_puts(s, ":");
        json_span(s, get_bytes(a, 6));
    }
    fnp_sink_puts(s, "}}");
    return 0;
}

static int packet(struct conv *cv, struct span pkt)
{
    /* A field cut short was the end of every read of the packet, not an error: a file
     * whose packets end inside a field converted to 0
     * (tests/data/pftrace_seeds/truncated_field.pftrace). */
    struct span d, ted = {NULL, 0}, cs, idata, td, te;
    if (!well_formed(pkt) || get_msg(pkt, 59, &d) || get_msg(d, 11, &ted) || get_msg(pkt, 6, &cs) ||
        get_msg(pkt, 12, &idata) || get_msg(pkt, 60, &td) || get_msg(pkt, 11, &te))
        return -EINVAL;
    struct seq *q = seq_of(cv, (uint32_t)get(pkt, 10, 0));
    if (!q)
        return -ENOMEM;
    if (get(pkt, 13, 0) & 1)
        seq_clear(q);
    if (d.p) {
        q->clock = get(d, 58, 0);
        q->track = ted.p ? get(ted, 11, 0) : 0;
    }
    uint32_t f;
    uint64_t v;
    struct span c;
    int wt;
    while (cs.n && (wt = field(&cs, &f, &v, &c)) >= 0) {
        if (f != 1 || wt != 2)
            continue;
        if (!well_formed(c))
            return -EINVAL;
        if (get(c, 3, 0) && get(c, 1, 0) == q->clock) {
            q->clock_val = get(c, 2, 0);
            q->has_clock = 1;
        }
    }
    uint64_t ts = get(pkt, 8, UINT64_MAX);
    uint64_t clock = get(pkt, 58, q->clock);
    if (ts != UINT64_MAX && q->has_clock && clock == q->clock)
        ts = q->clock_val += ts;
    int rc = idata.p ? interned(q, idata) : 0;
    if (!rc && td.p)
        rc = track_descriptor(cv, td);
    if (!rc && te.p)
        rc = track_event(cv, q, te, ts == UINT64_MAX ? 0 : ts);
    return rc;
}

static int read_varint(FILE *f, uint64_t *v)
{
    uint64_t r = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        int c = getc(f);
        if (c == EOF)
            return shift ? -1 : 1;
        r |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *v = r;
            return 0;
        }
    }
    return -1;
}

/* The len bytes of a packet into *buf (of *cap bytes). The buffer grows by what was read,
 * never to a length the file only claims: a length field of 1 GiB followed by nothing
 * allocated 1 GiB (tests/data/pftrace_seeds/huge_length.pftrace). */
static int read_packet(FILE *in, uint8_t **buf, size_t *cap, size_t len)
{
    size_t got = 0;
    while (got < len) {
        if (got == *cap) {
            size_t want = *cap ? *cap * 2 : PACKET_STEP;
            uint8_t *n = realloc(*buf, want < len ? want : len);
            if (!n)
                return -ENOMEM;
            *buf = n;
            *cap = want < len ? want : len;
        }
        size_t step = (*cap < len ? *cap : len) - got;
        size_t r = fread(*buf + got, 1, step, in);
        got += r;
        if (r < step)
            return ferror(in) && errno ? -errno : -EINVAL;
    }
    return 0;
}

int fnp_pftrace_to_chrome(FILE *in, struct fnp_sink *s)
{
    struct conv cv = {.s = s, .first = 1};
    uint8_t *buf = NULL;
    size_t cap = 0;
    int rc = 0;
    fnp_sink_puts(s, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[");
    for (;;) {
        uint64_t key, len;
        int r = read_varint(in, &key);
        if (r == 1)
            break;
        if (r || key != (1 << 3 | 2) || read_varint(in, &len) || len > (1u << 30)) {
            rc = -EINVAL;
            break;
        }
        if ((rc = read_packet(in, &buf, &cap, (size_t)len)) != 0 ||
            (rc = packet(&cv, (struct span){buf, (size_t)len})) != 0)
            break;
    }
    fnp_sink_puts(s, "\n]}\n");
    free(buf);
    for (size_t i = 0; i < cv.nseqs; i++)
        seq_clear(&cv.seqs[i]);
    free(cv.seqs);
    free(cv.seq_ix.ents);
    free(cv.tracks);
    free(cv.track_ix.ents);
    return rc;
}
