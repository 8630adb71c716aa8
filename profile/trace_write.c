/* SPDX-License-Identifier: MIT */
/*
 * The timeline (PROF_TRACE) as a Chrome trace: the JSON object form of the Trace Event
 * Format, which Perfetto and chrome://tracing open. One complete ("X") event per call,
 * grouped by thread; metadata ("M") events name the process and the threads and fix the
 * threads' order; the run's metadata goes to otherData. docs/trace.md describes the file.
 *
 * Written in one pass through the sink, so that the exit path needs no second copy of the
 * events: besides the sort order (4 bytes per event), it allocates only the text each
 * function's events repeat (name, category, file and line, escaped once).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"

/* otherData's own keys: a metadata pair of the same name is left out, so that the file
 * never holds a key twice (JSON readers disagree about which one wins). */
#define KEY_LIMIT "fnprof_events_limit"
#define KEY_DROPPED "fnprof_events_dropped"
#define KEY_FLIGHT FNP_TRACE_KEY_FLIGHT
#define KEY_LAST FNP_TRACE_KEY_LAST
#define KEY_CALLS FNP_TRACE_KEY_CALLS
#define KEY_OVERWRITTEN FNP_TRACE_KEY_OVERWRITTEN

int fnp_trace_is_flight_key(const char *key)
{
    return !strcmp(key, KEY_FLIGHT) || !strcmp(key, KEY_LAST) || !strcmp(key, KEY_CALLS) ||
           !strcmp(key, KEY_OVERWRITTEN);
}

static uint64_t end_of(const struct fnp_trace_event *e)
{
    /* A call cannot end before it starts; a bad clock reading becomes a zero-length call
     * rather than a negative duration, which viewers reject. */
    return e->end > e->start ? e->end : e->start;
}

struct order {
    const struct fnp_trace_event *events;
    size_t main; /* the main thread's track, or ntracks */
};

/* Where track k goes: the main thread's first, the others in the order given. */
static uint64_t track_rank(const struct order *o, size_t k)
{
    return k == o->main ? 0 : (uint64_t)k + 1;
}

/* The track at a rank: the inverse of track_rank, without its gap. */
static size_t track_at(const struct order *o, size_t ntracks, size_t rank)
{
    if (o->main >= ntracks)
        return rank;
    if (rank == 0)
        return o->main;
    return rank <= o->main ? rank - 1 : rank;
}

/* Per track, by start; of two calls that start together the longer encloses the other,
 * so it comes first. Equal spans: a track holds its calls in the order they ended, so of
 * two calls of one span the later index is the caller, and comes first. */
static int by_track_time(const void *a, const void *b, void *order)
{
    const struct order *o = order;
    uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
    const struct fnp_trace_event *x = &o->events[i], *y = &o->events[j];
    uint64_t xt = track_rank(o, x->track), yt = track_rank(o, y->track);
    if (xt != yt)
        return xt < yt ? -1 : 1;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    uint64_t xe = end_of(x), ye = end_of(y);
    if (xe != ye)
        return xe > ye ? -1 : 1;
    return i > j ? -1 : i < j;
}

static char *put_int(char *p, int v)
{
    int64_t w = v; /* INT_MIN's magnitude fits */
    if (w < 0) {
        *p++ = '-';
        w = -w;
    }
    return fnp_put_u64(p, (uint64_t)w);
}

/* Microseconds with three decimals: nanoseconds written exactly, without a double's
 * rounding in the printing. */
static char *put_us(char *p, uint64_t ns)
{
    p = fnp_put_u64(p, ns / 1000);
    unsigned frac = (unsigned)(ns % 1000);
    *p++ = '.';
    *p++ = (char)('0' + frac / 100);
    *p++ = (char)('0' + frac / 10 % 10);
    *p++ = (char)('0' + frac % 10);
    return p;
}

static char *put_str(char *p, const char *str)
{
    size_t n = strlen(str);
    memcpy(p, str, n);
    return p + n;
}

static void put_metadata(struct fnp_sink *s, const char *what, int pid, int tid)
{
    fnp_sink_puts(s, ",\n{\"name\":");
    fnp_json_string(s, what);
    fnp_sink_printf(s, ",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"args\":{", pid, tid);
}

/* name as a JSON string, or "<what> <id>" when there is none. */
static void put_name(struct fnp_sink *s, const char *name, const char *what, int id)
{
    if (name && name[0]) {
        fnp_json_string(s, name);
        return;
    }
    char text[32];
    snprintf(text, sizeof(text), "%s %d", what, id);
    fnp_json_string(s, text);
}

/* The threads' names, and their order in the viewer: viewers sort threads by
 * thread_sort_index, then by tid, which would put the main thread anywhere. */
static void put_threads(struct fnp_sink *s, const struct fnp_trace *t, const struct order *o)
{
    for (size_t rank = 0; rank < t->ntracks; rank++) {
        const struct fnp_trace_track *tr = &t->tracks[track_at(o, t->ntracks, rank)];
        put_metadata(s, "thread_name", t->pid, tr->tid);
        fnp_sink_puts(s, "\"name\":");
        put_name(s, tr->name, "thread", tr->tid);
        fnp_sink_puts(s, "}}");
        put_metadata(s, "thread_sort_index", t->pid, tr->tid);
        fnp_sink_printf(s, "\"sort_index\":%zu}}", rank);
    }
}

/* What every event of a function repeats, escaped once, at its first event: the head up
 * to the value of "ts", the tail from "args" on. */
struct rendered {
    size_t off; /* in the cache's buffer */
    size_t head, tail;
    int done;
};

struct calls {
    const struct fnp_trace *t;
    double scale;
    struct fnp_sink cache;
    struct rendered *funcs; /* by function index */
};

static const struct rendered *render(struct calls *c, uint32_t func)
{
    struct rendered *r = &c->funcs[func];
    if (r->done)
        return r;
    const struct fnp_key *key = &c->t->prof->funcs[func].key;
    struct fnp_sink *s = &c->cache;
    r->off = s->len;
    fnp_sink_puts(s, ",\n{\"name\":");
    fnp_json_string(s, key->name ? key->name : "?");
    static const char *const cats[] = {",\"cat\":\"function\"", ",\"cat\":\"region\"",
                                       ",\"cat\":\"frame\""};
    uint8_t kind = c->t->is_region ? c->t->is_region[func] : 0;
    fnp_sink_puts(s, cats[kind < 3 ? kind : 1]);
    fnp_sink_puts(s, ",\"ph\":\"X\",\"ts\":");
    r->head = s->len - r->off;
    fnp_sink_puts(s, ",\"args\":{\"file\":");
    fnp_json_string(s, key->file ? key->file : "?");
    fnp_sink_printf(s, ",\"line\":%u}}", (unsigned)key->line);
    r->tail = s->len - r->off - r->head;
    r->done = !s->err;
    return r;
}

static void put_call(struct fnp_sink *s, struct calls *c, const struct fnp_trace_event *e)
{
    const struct rendered *r = render(c, e->func);
    if (c->cache.err) {
        s->err = c->cache.err;
        return;
    }
    /* Each end converted on its own, then subtracted: a callee's end never lands after
     * its caller's through rounding, as a rounded duration could make it. */
    uint64_t start = fnp_ticks_scale(e->start, c->scale);
    uint64_t end = fnp_ticks_scale(end_of(e), c->scale);
    char mid[128], *p = mid; /* two numbers of 24 characters, two of 11, and the keys */
    p = put_us(p, start);
    p = put_str(p, ",\"dur\":");
    p = put_us(p, end - start);
    p = put_str(p, ",\"pid\":");
    p = put_int(p, c->t->pid);
    p = put_str(p, ",\"tid\":");
    p = put_int(p, c->t->tracks[e->track].tid);
    fnp_sink_write(s, c->cache.buf + r->off, r->head);
    fnp_sink_write(s, mid, (size_t)(p - mid));
    fnp_sink_write(s, c->cache.buf + r->off + r->head, r->tail);
}

/* A global instant event where the timeline stops: the viewer draws it across every
 * track, so that a reader sees the trace is cut short without opening otherData. */
static void put_dropped(struct fnp_sink *s, const struct fnp_trace *t, const uint32_t *order,
                        double scale)
{
    uint64_t last = 0;
    int tid = t->ntracks ? t->tracks[0].tid : 0;
    for (size_t i = 0; i < t->nevents; i++) {
        const struct fnp_trace_event *e = &t->events[order[i]];
        if (end_of(e) >= last) {
            last = end_of(e);
            tid = t->tracks[e->track].tid;
        }
    }
    char name[128];
    snprintf(name, sizeof(name), "fnprof: %llu calls not traced (%s=%llu)",
             (unsigned long long)t->dropped, t->last ? "PROF_TRACE_LAST" : "PROF_TRACE_EVENTS",
             (unsigned long long)t->limit);
    fnp_sink_puts(s, ",\n{\"name\":");
    fnp_json_string(s, name);
    char ts[32];
    *put_us(ts, fnp_ticks_scale(last, scale)) = 0;
    fnp_sink_printf(s, ",\"cat\":\"fnprof\",\"ph\":\"i\",\"s\":\"g\",\"ts\":%s", ts);
    fnp_sink_printf(s, ",\"pid\":%d,\"tid\":%d,\"args\":{\"dropped\":%llu,\"limit\":%llu}}", t->pid,
                    tid, (unsigned long long)t->dropped, (unsigned long long)t->limit);
}

static void put_other_data(struct fnp_sink *s, const struct fnp_trace *t)
{
    fnp_sink_puts(s, "\"otherData\":{");
    const struct fnp_profile *p = t->prof;
    for (size_t i = 0; i < p->nmeta; i++) {
        const char *key = p->meta[i].key;
        if (!strcmp(key, KEY_LIMIT) || !strcmp(key, KEY_DROPPED) ||
            (t->last && fnp_trace_is_flight_key(key)))
            continue;
        fnp_json_string(s, key);
        fnp_sink_puts(s, ":");
        fnp_json_string(s, p->meta[i].value);
        fnp_sink_puts(s, ",");
    }
    if (t->last) /* a flight recording: what it holds of the run */
        fnp_sink_printf(s,
                        "\"" KEY_FLIGHT "\":true,\"" KEY_LAST "\":%llu,\"" KEY_CALLS
                        "\":%zu,\"" KEY_OVERWRITTEN "\":%llu,",
                        (unsigned long long)t->last, t->nevents,
                        (unsigned long long)t->overwritten);
    /* Always there, 0 included: a reader tells "nothing dropped" from "an older file". */
    fnp_sink_printf(s, "\"" KEY_LIMIT "\":%llu,\"" KEY_DROPPED "\":%llu}",
                    (unsigned long long)t->limit, (unsigned long long)t->dropped);
}

static int valid(const struct fnp_trace *t)
{
    if (!t->prof || !(t->tick_seconds > 0) || !isfinite(t->tick_seconds))
        return 0;
    if (t->nevents >= UINT32_MAX || (t->nevents && !t->events) || (t->ntracks && !t->tracks))
        return 0;
    for (size_t i = 0; i < t->nevents; i++)
        if (t->events[i].func >= t->prof->nfuncs || t->events[i].track >= t->ntracks)
            return 0;
    return 1;
}

int fnp_trace_write(struct fnp_sink *s, const struct fnp_trace *t)
{
    if (s->err)
        return s->err;
    if (!valid(t))
        return s->err = -EINVAL;
    uint32_t *order = malloc((t->nevents ? t->nevents : 1) * sizeof(*order));
    if (!order)
        return s->err = -ENOMEM;
    for (size_t i = 0; i < t->nevents; i++)
        order[i] = (uint32_t)i;
    /* The main thread's tid is the process id. */
    struct order o = {t->events, t->ntracks};
    for (size_t k = 0; k < t->ntracks && o.main == t->ntracks; k++)
        if (t->tracks[k].tid == t->pid)
            o.main = k;
    qsort_r(order, t->nevents, sizeof(*order), by_track_time, &o);
    struct calls c = {.t = t, .scale = t->tick_seconds * 1e9};
    fnp_sink_memory(&c.cache);
    c.funcs = calloc(t->prof->nfuncs + 1, sizeof(*c.funcs));
    if (!c.funcs) {
        free(order);
        return s->err = -ENOMEM;
    }

    fnp_sink_puts(s, "{\"traceEvents\":[\n{\"name\":\"process_name\",\"ph\":\"M\"");
    fnp_sink_printf(s, ",\"pid\":%d,\"tid\":0,\"args\":{\"name\":", t->pid);
    put_name(s, t->process, "process", t->pid);
    fnp_sink_puts(s, "}}");
    put_threads(s, t, &o);
    for (size_t i = 0; i < t->nevents && !s->err; i++)
        put_call(s, &c, &t->events[order[i]]);
    if (t->dropped)
        put_dropped(s, t, order, c.scale);
    fnp_sink_puts(s, "\n],\n\"displayTimeUnit\":\"ns\",\n");
    put_other_data(s, t);
    fnp_sink_puts(s, "}\n");
    free(order);
    free(c.funcs);
    fnp_sink_free(&c.cache);
    return s->err;
}

int fnp_trace_write_fn(struct fnp_sink *s, void *trace)
{
    return fnp_trace_write(s, trace);
}
