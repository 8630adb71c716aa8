/* SPDX-License-Identifier: MIT */
/*
 * A trace held whole in memory (struct fnp_trace: PROF_TRACE_LAST's flight recording) as a
 * Perfetto protobuf file, with the packets of perfetto.c: the same file the streamed trace
 * (runtime/stream_write.c) makes, written in one go. One packet sequence per thread, its
 * calls as slice begins and ends in time order; the run's metadata, and what the flight
 * recording holds, as the instant "fnprof: run" on the process's track.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"

int fnp_trace_path_is_perfetto(const char *path)
{
    size_t n = path ? strlen(path) : 0;
    return (n >= 8 && strcmp(path + n - 8, ".pftrace") == 0) ||
           (n >= 15 && strcmp(path + n - 15, ".perfetto-trace") == 0);
}

static uint64_t end_of(const struct fnp_trace_event *e)
{
    return e->end > e->start ? e->end : e->start;
}

/* Per track; by start; of two calls that start together, the longer (the caller) first;
 * of one span, the later one in the trace's order (the caller: calls come in the order
 * they ended). */
static int by_track_start(const void *a, const void *b, void *events)
{
    const struct fnp_trace_event *ev = events;
    uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
    const struct fnp_trace_event *x = &ev[i], *y = &ev[j];
    if (x->track != y->track)
        return x->track < y->track ? -1 : 1;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    if (end_of(x) != end_of(y))
        return end_of(x) > end_of(y) ? -1 : 1;
    return i > j ? -1 : i < j;
}

struct seq {
    uint32_t id;
    uint64_t uuid, last_ns;
    uint8_t *sent; /* iids interned on it */
};

static void slice(struct fnp_sink *s, struct seq *q, const struct fnp_trace *t, uint64_t ns,
                  uint32_t func, int begin)
{
    if (ns < q->last_ns)
        ns = q->last_ns;
    if (begin && !q->sent[func]) {
        const struct fnp_key *k = &t->prof->funcs[func].key;
        fnp_pf_intern(s, q->id, func + 1, k->name ? k->name : "?", k->file ? k->file : "?",
                      k->line);
        q->sent[func] = 1;
    }
    fnp_pf_slice(s, q->id, ns - q->last_ns, begin ? func + 1 : 0);
    q->last_ns = ns;
}

int fnp_trace_write_pftrace(struct fnp_sink *s, const struct fnp_trace *t)
{
    if (s->err)
        return s->err;
    if (!t->prof || !(t->tick_seconds > 0) || !isfinite(t->tick_seconds) ||
        t->nevents >= UINT32_MAX)
        return s->err = -EINVAL;
    for (size_t i = 0; i < t->nevents; i++)
        if (t->events[i].func >= t->prof->nfuncs || t->events[i].track >= t->ntracks)
            return s->err = -EINVAL;
    double scale = t->tick_seconds * 1e9;
    uint32_t *order = malloc((t->nevents ? t->nevents : 1) * sizeof(*order));
    uint32_t *stack = malloc((t->nevents ? t->nevents : 1) * sizeof(*stack));
    uint8_t *sent = malloc(t->prof->nfuncs ? t->prof->nfuncs : 1);
    size_t nmeta = t->prof->nmeta;
    struct fnp_meta *meta = malloc((nmeta + 4) * sizeof(*meta));
    char nums[3][32];
    if (!order || !stack || !sent || !meta) {
        free(order);
        free(stack);
        free(sent);
        free(meta);
        return s->err = -ENOMEM;
    }
    for (size_t i = 0; i < t->nevents; i++)
        order[i] = (uint32_t)i;
    qsort_r(order, t->nevents, sizeof(*order), by_track_start, t->events);

    uint64_t process_uuid = (uint64_t)(uint32_t)t->pid << 32;
    fnp_pf_process(s, 1, process_uuid, t->pid, t->process ? t->process : "process");
    /* The run's pairs, less those a flight recording writes itself (the program may have
     * added pairs of those names): each key once, with the recording's value. */
    nmeta = 0;
    for (size_t i = 0; i < t->prof->nmeta; i++)
        if (!t->last || !fnp_trace_is_flight_key(t->prof->meta[i].key))
            meta[nmeta++] = t->prof->meta[i];
    if (t->last) {
        snprintf(nums[0], sizeof(nums[0]), "%llu", (unsigned long long)t->last);
        snprintf(nums[1], sizeof(nums[1]), "%zu", t->nevents);
        snprintf(nums[2], sizeof(nums[2]), "%llu", (unsigned long long)t->overwritten);
        meta[nmeta++] = (struct fnp_meta){FNP_TRACE_KEY_FLIGHT, "true"};
        meta[nmeta++] = (struct fnp_meta){FNP_TRACE_KEY_LAST, nums[0]};
        meta[nmeta++] = (struct fnp_meta){FNP_TRACE_KEY_CALLS, nums[1]};
        meta[nmeta++] = (struct fnp_meta){FNP_TRACE_KEY_OVERWRITTEN, nums[2]};
    }
    fnp_pf_instant(s, 1, process_uuid, 0, "fnprof: run", meta, nmeta);

    for (size_t i = 0, track = (size_t)-1; i < t->nevents && !s->err;) {
        const struct fnp_trace_event *e = &t->events[order[i]];
        if (e->track != track) {
            track = e->track;
            struct seq q = {(uint32_t)track + 2, process_uuid | (track + 2), 0, sent};
            memset(sent, 0, t->prof->nfuncs ? t->prof->nfuncs : 1);
            q.last_ns = fnp_ticks_scale(e->start, scale);
            fnp_pf_thread_start(s, q.id, q.uuid, process_uuid, t->pid, t->tracks[track].tid,
                                t->tracks[track].name, q.last_ns);
            /* The track's calls: a begin each, the ends of those it encloses before the
             * next begin after them. */
            size_t depth = 0;
            for (; i < t->nevents && t->events[order[i]].track == track; i++) {
                const struct fnp_trace_event *c = &t->events[order[i]];
                uint64_t start = fnp_ticks_scale(c->start, scale);
                while (depth && end_of(&t->events[stack[depth - 1]]) <= c->start) {
                    const struct fnp_trace_event *o = &t->events[stack[--depth]];
                    slice(s, &q, t, fnp_ticks_scale(end_of(o), scale), o->func, 0);
                }
                slice(s, &q, t, start, c->func, 1);
                stack[depth++] = order[i];
            }
            while (depth) {
                const struct fnp_trace_event *o = &t->events[stack[--depth]];
                slice(s, &q, t, fnp_ticks_scale(end_of(o), scale), o->func, 0);
            }
        }
    }
    free(order);
    free(stack);
    free(sent);
    free(meta);
    return s->err;
}

int fnp_trace_write_pftrace_fn(struct fnp_sink *s, void *trace)
{
    return fnp_trace_write_pftrace(s, trace);
}
