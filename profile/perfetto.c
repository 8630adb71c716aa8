/* SPDX-License-Identifier: MIT */
/*
 * Perfetto's protobuf trace format, the subset fnprof writes (profile/perfetto_subset.proto
 * names every field used): a Trace is a run of TracePacket fields, so the file is written
 * one packet at a time and is a valid trace after each one. Each thread is a track on a
 * packet sequence of its own, whose timestamps are deltas (an incremental clock of that
 * sequence) and whose function names are interned once per sequence.
 */
#include <string.h>

#include "profile.h"

/* A packet under construction: fields appended, nested messages by a length prefix
 * patched afterwards (lengths under 2^21 take a fixed three-byte varint). */
struct pb {
    unsigned char b[FNP_PF_PACKET_MAX];
    size_t n;
    int overflow;
};

static void put_byte(struct pb *p, unsigned v)
{
    if (p->n < sizeof(p->b))
        p->b[p->n++] = (unsigned char)v;
    else
        p->overflow = 1;
}

static void put_varint(struct pb *p, uint64_t v)
{
    while (v >= 0x80) {
        put_byte(p, (unsigned)(v & 0x7f) | 0x80);
        v >>= 7;
    }
    put_byte(p, (unsigned)v);
}

static void field_varint(struct pb *p, unsigned field, uint64_t v)
{
    put_varint(p, (uint64_t)field << 3);
    put_varint(p, v);
}

static void field_bytes(struct pb *p, unsigned field, const char *s, size_t len)
{
    put_varint(p, (uint64_t)field << 3 | 2);
    put_varint(p, len);
    for (size_t i = 0; i < len; i++)
        put_byte(p, (unsigned char)s[i]);
}

static void field_string(struct pb *p, unsigned field, const char *s)
{
    size_t len = strlen(s);
    field_bytes(p, field, s, len > FNP_PF_STRING_MAX ? FNP_PF_STRING_MAX : len);
}

/* Opens a nested message: returns where its length goes. */
static size_t open_msg(struct pb *p, unsigned field)
{
    put_varint(p, (uint64_t)field << 3 | 2);
    size_t at = p->n;
    put_byte(p, 0x80);
    put_byte(p, 0x80);
    put_byte(p, 0);
    return at;
}

static void close_msg(struct pb *p, size_t at)
{
    if (p->overflow)
        return;
    size_t len = p->n - at - 3;
    p->b[at] = (unsigned char)(0x80 | (len & 0x7f));
    p->b[at + 1] = (unsigned char)(0x80 | ((len >> 7) & 0x7f));
    p->b[at + 2] = (unsigned char)((len >> 14) & 0x7f);
}

/* A varint at p; the byte after it. */
static inline unsigned char *varint_at(unsigned char *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    *p++ = (unsigned char)v;
    return p;
}

/* The packet as one Trace.packet field (1). */
static void emit(struct fnp_sink *s, const struct pb *p)
{
    if (p->overflow)
        return;
    unsigned char head[11];
    head[0] = 1 << 3 | 2;
    fnp_sink_write(s, head, (size_t)(varint_at(head + 1, p->n) - head));
    fnp_sink_write(s, p->b, p->n);
}

void fnp_pf_process(struct fnp_sink *s, uint32_t seq, uint64_t uuid, int pid, const char *name)
{
    struct pb p = {.n = 0};
    field_varint(&p, 10, seq);    /* trusted_packet_sequence_id */
    size_t td = open_msg(&p, 60); /* track_descriptor */
    field_varint(&p, 1, uuid);
    size_t pd = open_msg(&p, 3); /* process */
    field_varint(&p, 1, (uint64_t)(uint32_t)pid);
    field_string(&p, 6, name); /* process_name */
    close_msg(&p, pd);
    close_msg(&p, td);
    emit(s, &p);
}

void fnp_pf_instant(struct fnp_sink *s, uint32_t seq, uint64_t track, uint64_t ts_ns,
                    const char *title, const struct fnp_meta *meta, size_t nmeta)
{
    struct pb p = {.n = 0};
    field_varint(&p, 8, ts_ns); /* timestamp: this sequence keeps the default clock */
    field_varint(&p, 10, seq);
    size_t te = open_msg(&p, 11); /* track_event */
    field_varint(&p, 9, 3);       /* TYPE_INSTANT */
    field_varint(&p, 11, track);
    field_string(&p, 23, title); /* name */
    for (size_t i = 0; i < nmeta; i++) {
        size_t da = open_msg(&p, 4); /* debug_annotations */
        field_string(&p, 10, meta[i].key);
        field_string(&p, 6, meta[i].value);
        close_msg(&p, da);
    }
    close_msg(&p, te);
    emit(s, &p);
}

void fnp_pf_metadata(struct fnp_sink *s, uint32_t seq, const struct fnp_meta *meta, size_t nmeta)
{
    struct pb p = {.n = 0};
    field_varint(&p, 10, seq);
    size_t ce = open_msg(&p, 5); /* chrome_events */
    for (size_t i = 0; i < nmeta; i++) {
        size_t m = open_msg(&p, 2); /* metadata */
        field_string(&p, 1, meta[i].key);
        field_string(&p, 2, meta[i].value); /* string_value */
        close_msg(&p, m);
    }
    close_msg(&p, ce);
    emit(s, &p);
}

void fnp_pf_thread_start(struct fnp_sink *s, uint32_t seq, uint64_t uuid, uint64_t parent, int pid,
                         int tid, const char *name, uint64_t ts_ns)
{
    /* The sequence's state: cleared, its defaults (the incremental clock, the track), the
     * clock starting at ts_ns, which is also the trace clock's reading then. */
    struct pb p = {.n = 0};
    field_varint(&p, 10, seq);
    field_varint(&p, 13, 1);            /* SEQ_INCREMENTAL_STATE_CLEARED */
    size_t d = open_msg(&p, 59);        /* trace_packet_defaults */
    field_varint(&p, 58, FNP_PF_CLOCK); /* timestamp_clock_id */
    size_t ted = open_msg(&p, 11);      /* track_event_defaults */
    field_varint(&p, 11, uuid);
    close_msg(&p, ted);
    close_msg(&p, d);
    size_t cs = open_msg(&p, 6); /* clock_snapshot */
    size_t c = open_msg(&p, 1);
    field_varint(&p, 1, FNP_PF_CLOCK);
    field_varint(&p, 2, ts_ns);
    field_varint(&p, 3, 1); /* is_incremental */
    close_msg(&p, c);
    c = open_msg(&p, 1);
    field_varint(&p, 1, 6); /* BUILTIN_CLOCK_BOOTTIME, the default trace clock */
    field_varint(&p, 2, ts_ns);
    close_msg(&p, c);
    close_msg(&p, cs);
    emit(s, &p);
    fnp_pf_thread_name(s, seq, uuid, parent, pid, tid, name);
}

void fnp_pf_thread_name(struct fnp_sink *s, uint32_t seq, uint64_t uuid, uint64_t parent, int pid,
                        int tid, const char *name)
{
    struct pb p = {.n = 0};
    field_varint(&p, 8, 0); /* no time of its own: a delta of 0 */
    field_varint(&p, 10, seq);
    field_varint(&p, 13, 2); /* SEQ_NEEDS_INCREMENTAL_STATE */
    size_t td = open_msg(&p, 60);
    field_varint(&p, 1, uuid);
    field_varint(&p, 5, parent);
    size_t th = open_msg(&p, 4); /* thread */
    field_varint(&p, 1, (uint64_t)(uint32_t)pid);
    field_varint(&p, 2, (uint64_t)(uint32_t)tid);
    if (name && *name)
        field_string(&p, 5, name);
    close_msg(&p, th);
    close_msg(&p, td);
    emit(s, &p);
}

void fnp_pf_intern(struct fnp_sink *s, uint32_t seq, uint64_t iid, const char *name,
                   const char *file, uint32_t line)
{
    struct pb p = {.n = 0};
    field_varint(&p, 8, 0);
    field_varint(&p, 10, seq);
    field_varint(&p, 13, 2);
    size_t id = open_msg(&p, 12); /* interned_data */
    size_t en = open_msg(&p, 2);  /* event_names */
    field_varint(&p, 1, iid);
    field_string(&p, 2, name);
    close_msg(&p, en);
    size_t sl = open_msg(&p, 4); /* source_locations */
    field_varint(&p, 1, iid);
    field_string(&p, 2, file);
    field_string(&p, 3, name);
    field_varint(&p, 4, line);
    close_msg(&p, sl);
    close_msg(&p, id);
    emit(s, &p);
}

/* What every slice packet of a sequence holds between its timestamp and its track event:
 * the sequence's id, its flags and the track_event field's tag (16 bytes copied, n used). */
struct slice_mid {
    unsigned char b[16];
    size_t n;
};

static void slice_mid_of(struct slice_mid *m, uint32_t seq)
{
    memset(m->b, 0, sizeof(m->b));
    unsigned char *q = m->b;
    *q++ = 10 << 3; /* trusted_packet_sequence_id */
    q = varint_at(q, seq);
    *q++ = 13 << 3;
    *q++ = 2;           /* SEQ_NEEDS_INCREMENTAL_STATE */
    *q++ = 11 << 3 | 2; /* track_event */
    m->n = (size_t)(q - m->b);
}

/* A slice's packet from p on (room for 48 bytes); the byte after it. */
static inline unsigned char *slice_at(unsigned char *p, const struct slice_mid *m,
                                      uint64_t delta_ns, uint64_t iid)
{
    unsigned char *q = p + 2;
    *q++ = 8 << 3;
    q = varint_at(q, delta_ns);
    memcpy(q, m->b, sizeof(m->b));
    q += m->n;
    if (!iid) {
        q[0] = 2; /* the track event's length */
        q[1] = 9 << 3;
        q[2] = 2; /* TYPE_SLICE_END */
        q += 3;
    } else {
        unsigned char *at = q++;
        *q++ = 9 << 3;
        *q++ = 1;       /* TYPE_SLICE_BEGIN */
        *q++ = 10 << 3; /* name_iid */
        q = varint_at(q, iid);
        *q++ = (unsigned char)(34 << 3 & 0x7f) | 0x80; /* source_location_iid: tag 272 */
        *q++ = (unsigned char)((34 << 3) >> 7);
        q = varint_at(q, iid);
        *at = (unsigned char)(q - at - 1);
    }
    p[0] = 1 << 3 | 2;
    p[1] = (unsigned char)(q - p - 2);
    return q;
}

/* The slice through fnp_sink_write, where the sink has no room to encode in place. */
static __attribute__((noinline)) void slice_copied(struct fnp_sink *s, const struct slice_mid *m,
                                                   uint64_t delta_ns, uint64_t iid)
{
    unsigned char tmp[64];
    fnp_sink_write(s, tmp, (size_t)(slice_at(tmp, m, delta_ns, iid) - tmp));
}

void fnp_pf_slice(struct fnp_sink *s, uint32_t seq, uint64_t delta_ns, uint64_t iid)
{
    struct fnp_pf_slice_ev ev = {delta_ns, iid};
    fnp_pf_slices(s, seq, &ev, 1);
}

void fnp_pf_slices(struct fnp_sink *s, uint32_t seq, const struct fnp_pf_slice_ev *ev, size_t n)
{
    /* The hot one, two a call: about 15 bytes (begin) and 11 (end), at most SLICE_MAX, so
     * both lengths are one byte. Encoded in place in the sink's buffer, a batch at a time
     * (no call and no copy per packet, no array on the stack, so no stack protector's check
     * either); a batch is small beside the buffer, so the writes stay near its size. */
    enum { SLICE_MAX = 48, BATCH = 256 };
    struct slice_mid m;
    slice_mid_of(&m, seq);
    size_t i = 0;
    while (i < n) {
        size_t end = n - i > BATCH ? i + BATCH : n;
        unsigned char *b = (unsigned char *)fnp_sink_room(s, (end - i) * SLICE_MAX);
        if (!b) {
            for (; i < end; i++)
                slice_copied(s, &m, ev[i].delta_ns, ev[i].iid);
            continue;
        }
        unsigned char *q = b;
        for (; i < end; i++)
            q = slice_at(q, &m, ev[i].delta_ns, ev[i].iid);
        fnp_sink_wrote(s, (size_t)(q - b));
    }
}
