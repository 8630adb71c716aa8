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
 * well-formed protobuf ends the conversion with an error.
 */
#include "pftrace-chrome.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"

#define MAX_IID (1u << 24) /* interned ids past this are not fnprof's */

struct span {
    const uint8_t *p;
    size_t n;
};

struct loc {
    char *file;
    uint32_t line;
};

struct seq {
    uint32_t id;
    uint64_t clock, clock_val, track;
    int has_clock;
    char **names;
    struct loc *locs;
    size_t cap;
};

struct track {
    uint64_t uuid;
    int pid, tid;
};

struct conv {
    struct fnp_sink *s;
    struct seq *seqs;
    size_t nseqs;
    struct track *tracks;
    size_t ntracks, captracks;
    int first;
};

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
    for (size_t i = 0; i < cv->nseqs; i++)
        if (cv->seqs[i].id == id)
            return &cv->seqs[i];
    struct seq *n = realloc(cv->seqs, (cv->nseqs + 1) * sizeof(*n));
    if (!n)
        return NULL;
    cv->seqs = n;
    n = &cv->seqs[cv->nseqs++];
    memset(n, 0, sizeof(*n));
    n->id = id;
    return n;
}

static void seq_clear(struct seq *q)
{
    for (size_t i = 0; i < q->cap; i++) {
        free(q->names[i]);
        free(q->locs[i].file);
    }
    free(q->names);
    free(q->locs);
    uint32_t id = q->id;
    memset(q, 0, sizeof(*q));
    q->id = id;
}

static int seq_room(struct seq *q, uint64_t iid)
{
    if (iid >= MAX_IID)
        return -1;
    if (iid < q->cap)
        return 0;
    size_t cap = q->cap ? q->cap : 64;
    while (cap <= iid)
        cap *= 2;
    char **names = realloc(q->names, cap * sizeof(*names));
    if (names)
        q->names = names;
    struct loc *locs = names ? realloc(q->locs, cap * sizeof(*locs)) : NULL;
    if (!locs)
        return -1;
    q->locs = locs;
    memset(q->names + q->cap, 0, (cap - q->cap) * sizeof(*names));
    memset(q->locs + q->cap, 0, (cap - q->cap) * sizeof(*locs));
    q->cap = cap;
    return 0;
}

static struct track *track_of(struct conv *cv, uint64_t uuid)
{
    /* few tracks are looked up in a row: the newest first */
    for (size_t i = cv->ntracks; i-- > 0;)
        if (cv->tracks[i].uuid == uuid)
            return &cv->tracks[i];
    return NULL;
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
    struct span proc = get_bytes(td, 3), thr = get_bytes(td, 4);
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
        uint64_t iid = get(m, 1, 0);
        if (seq_room(q, iid))
            return -EINVAL;
        if (f == 2) {
            free(q->names[iid]);
            q->names[iid] = dup_span(get_bytes(m, 2));
        } else {
            free(q->locs[iid].file);
            q->locs[iid] = (struct loc){dup_span(get_bytes(m, 2)), (uint32_t)get(m, 4, 0)};
        }
    }
    return 0;
}

static int track_event(struct conv *cv, struct seq *q, struct span te, uint64_t ts)
{
    uint64_t type = get(te, 9, 0);
    struct track *t = track_of(cv, get(te, 11, q->track));
    int pid = t ? t->pid : 0, tid = t ? t->tid : 0;
    struct fnp_sink *s = cv->s;
    sep(cv);
    if (type == 2) {
        fnp_sink_printf(s, "{\"ph\":\"E\",\"pid\":%d,\"tid\":%d,\"ts\":", pid, tid);
        ts_us(s, ts);
        fnp_sink_puts(s, "}");
        return 0;
    }
    if (type == 1) {
        uint64_t iid = get(te, 10, 0), li = get(te, 34, UINT64_MAX);
        if (iid >= q->cap || !q->names[iid])
            return -EINVAL; /* a name never interned on this sequence */
        fnp_sink_printf(s, "{\"ph\":\"B\",\"pid\":%d,\"tid\":%d,\"ts\":", pid, tid);
        ts_us(s, ts);
        fnp_sink_puts(s, ",\"name\":");
        fnp_json_string(s, q->names[iid]);
        if (li < q->cap && q->locs[li].file) {
            fnp_sink_puts(s, ",\"args\":{\"file\":");
            fnp_json_string(s, q->locs[li].file);
            fnp_sink_printf(s, ",\"line\":%u}", q->locs[li].line);
        }
        fnp_sink_puts(s, "}");
        return 0;
    }
    if (type != 3)
        return -EINVAL;
    fnp_sink_printf(s, "{\"ph\":\"i\",\"s\":\"p\",\"pid\":%d,\"tid\":%d,\"ts\":", pid, tid);
    ts_us(s, ts);
    fnp_sink_puts(s, ",\"name\":");
    json_span(s, get_bytes(te, 23));
    fnp_sink_puts(s, ",\"args\":{");
    uint32_t f;
    uint64_t v;
    struct span a;
    int wt, n = 0;
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
    struct seq *q = seq_of(cv, (uint32_t)get(pkt, 10, 0));
    if (!q)
        return -ENOMEM;
    if (get(pkt, 13, 0) & 1)
        seq_clear(q);
    struct span d = get_bytes(pkt, 59);
    if (d.p) {
        q->clock = get(d, 58, 0);
        struct span ted = get_bytes(d, 11);
        q->track = ted.p ? get(ted, 11, 0) : 0;
    }
    struct span cs = get_bytes(pkt, 6);
    uint32_t f;
    uint64_t v;
    struct span c;
    int wt;
    while (cs.n && (wt = field(&cs, &f, &v, &c)) >= 0)
        if (f == 1 && wt == 2 && get(c, 3, 0) && get(c, 1, 0) == q->clock) {
            q->clock_val = get(c, 2, 0);
            q->has_clock = 1;
        }
    uint64_t ts = get(pkt, 8, UINT64_MAX);
    uint64_t clock = get(pkt, 58, q->clock);
    if (ts != UINT64_MAX && q->has_clock && clock == q->clock)
        ts = q->clock_val += ts;
    struct span idata = get_bytes(pkt, 12);
    if (idata.p && interned(q, idata))
        return -EINVAL;
    struct span td = get_bytes(pkt, 60);
    int rc = td.p ? track_descriptor(cv, td) : 0;
    struct span te = get_bytes(pkt, 11);
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
        if (len > cap) {
            uint8_t *n = realloc(buf, len);
            if (!n) {
                rc = -ENOMEM;
                break;
            }
            buf = n;
            cap = len;
        }
        if (fread(buf, 1, len, in) != len) {
            rc = ferror(in) ? -errno : -EINVAL;
            break;
        }
        if ((rc = packet(&cv, (struct span){buf, len})) != 0)
            break;
    }
    fnp_sink_puts(s, "\n]}\n");
    free(buf);
    for (size_t i = 0; i < cv.nseqs; i++)
        seq_clear(&cv.seqs[i]);
    free(cv.seqs);
    free(cv.tracks);
    return rc;
}
