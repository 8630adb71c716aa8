/* SPDX-License-Identifier: MIT */
/*
 * Reads the raw snapshot a dying process wrote (format in profile.h), for `fnprof
 * symbolize`. The file may be cut short (the disk filled, the process was killed while
 * writing) or be anything at all: every count is bounded by the input, every reference
 * checked, and the first problem reported with its offset.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"

struct rd {
    const unsigned char *p;
    size_t len, at;
    char *why;
    size_t whylen;
};

__attribute__((format(printf, 2, 3))) static int bad(struct rd *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = fnp_read_fail(r->why, r->whylen, r->at, NULL, fmt, ap);
    va_end(ap);
    return rc;
}

static int u64(struct rd *r, uint64_t *v)
{
    if (r->len - r->at < 8)
        return bad(r, "cut short (no end record: the process died while writing?)");
    uint64_t x = 0;
    for (int i = 7; i >= 0; i--)
        x = x << 8 | r->p[r->at + (size_t)i];
    r->at += 8;
    *v = x;
    return 0;
}

/* n u64s in a row: a record's fixed fields. */
static int u64s(struct rd *r, uint64_t *v, int n)
{
    int rc = 0;
    for (int i = 0; i < n && !rc; i++)
        rc = u64(r, &v[i]);
    return rc;
}

/* A string of the file: its u64 length, then its bytes (no NUL), copied NUL-terminated to
 * *out at *used in strings, which holds the whole input's length: a string and its NUL
 * take no more room there than its length field and bytes take in the input. */
static int str(struct rd *r, char *strings, size_t *used, const char **out)
{
    uint64_t n;
    int rc = u64(r, &n);
    if (rc)
        return rc;
    if (n > r->len - r->at || memchr(r->p + r->at, 0, n))
        return bad(r, "a string of %llu bytes where %zu are left, or with a NUL",
                   (unsigned long long)n, r->len - r->at);
    char *s = strings + *used;
    memcpy(s, r->p + r->at, n);
    s[n] = 0;
    *used += n + 1;
    r->at += n;
    *out = s;
    return 0;
}

struct id_index {
    uint64_t id;
    uint32_t index;
};

static int by_id(const void *a, const void *b)
{
    uint64_t x = ((const struct id_index *)a)->id, y = ((const struct id_index *)b)->id;
    return x < y ? -1 : x > y;
}

/* Node index of id among ids[0, n) (sorted), or -1. */
static int64_t find_id(const struct id_index *ids, size_t n, uint64_t id)
{
    struct id_index key = {.id = id};
    const struct id_index *hit = bsearch(&key, ids, n, sizeof(*ids), by_id);
    return hit ? (int64_t)hit->index : -1;
}

/* A link of the snapshot, for the open calls that name it (fnp_raw_add_link). */
struct link {
    uint64_t id;
    uint32_t target, parent;
    uint32_t flags;
};

/* Record counts are bounded by the input: a node or a link takes 41 bytes or more, a
 * module 41 or more. */
#define NODE_BYTES 41
#define MODULE_BYTES 41
#define REGION_BYTES 25
#define FLIGHT_BYTES 33 /* 'F' */
#define TRACK_BYTES 17  /* 'K' */

int fnp_raw_read(struct fnp_raw_file *f, const void *data, size_t len, char *why, size_t whylen)
{
    memset(f, 0, sizeof(*f));
    struct rd r = {.p = data, .len = len, .why = why, .whylen = whylen};
    if (len < 24 || memcmp(data, FNP_RAW_MAGIC, 8) != 0)
        return bad(&r, "not a raw fnprof snapshot (no \"FNPRAW1\" header)");
    r.at = 8;
    uint64_t secs_bits, count_only;
    u64(&r, &secs_bits);
    u64(&r, &count_only);
    double secs;
    memcpy(&secs, &secs_bits, sizeof(secs));
    if (!isfinite(secs) || secs <= 0 || secs > 1 || count_only > 1)
        return bad(&r, "bad header (tick length %g s, count-only %llu)", secs,
                   (unsigned long long)count_only);

    size_t max_nodes = len / NODE_BYTES, max_mods = len / MODULE_BYTES,
           max_regions = len / REGION_BYTES;
    f->nodes = malloc((max_nodes ? max_nodes : 1) * sizeof(*f->nodes));
    struct id_index *ids = malloc((max_nodes ? max_nodes : 1) * sizeof(*ids));
    /* The path from the thread's outermost call to the node read last: in pre-order a
     * node's parent is on it, so finding the parent pops what is left behind. */
    uint32_t *path = malloc((max_nodes ? max_nodes : 1) * sizeof(*path));
    uint64_t *node_id = malloc((max_nodes ? max_nodes : 1) * sizeof(*node_id));
    size_t depth = 0;
    struct link *links = malloc((max_nodes ? max_nodes : 1) * sizeof(*links));
    size_t nlinks = 0, links_first = 0;
    f->mods = malloc((max_mods ? max_mods : 1) * sizeof(*f->mods));
    f->regions = malloc((max_regions ? max_regions : 1) * sizeof(*f->regions));
    f->paths = malloc(len);
    size_t max_flight = len / FLIGHT_BYTES, max_tracks = len / TRACK_BYTES;
    f->flight = malloc((max_flight ? max_flight : 1) * sizeof(*f->flight));
    f->flight_tracks = malloc((max_tracks ? max_tracks : 1) * sizeof(*f->flight_tracks));
    size_t n = 0, nmods = 0, nregions = 0, paths_used = 0, sorted = 0, thread_first = 0;
    uint32_t thread = 0;
    int in_thread = 0, rc = 0, ended = 0;
    if (!f->nodes || !ids || !path || !node_id || !links || !f->mods || !f->regions || !f->paths ||
        !f->flight || !f->flight_tracks) {
        rc = -ENOMEM;
        goto out;
    }
    while (!rc && !ended) {
        if (r.at >= len) {
            rc = bad(&r, "cut short (no end record: the process died while writing?)");
            break;
        }
        unsigned char type = r.p[r.at++];
        uint64_t v[6];
        switch (type) {
        case 'M': {
            rc = u64s(&r, v, 5);
            if (rc)
                break;
            if (v[4] == 0 || v[4] > len - r.at || v[1] > v[2] || v[3] > UINT32_MAX ||
                memchr(r.p + r.at, 0, v[4])) {
                rc = bad(&r, "bad module record");
                break;
            }
            char *name = f->paths + paths_used;
            memcpy(name, r.p + r.at, v[4]);
            name[v[4]] = 0;
            paths_used += v[4] + 1;
            r.at += v[4];
            f->mods[nmods++] = (struct fnp_raw_module){name, v[0], v[1], v[2], (uint32_t)v[3]};
            break;
        }
        case 'R': {
            struct fnp_raw_region *g = &f->regions[nregions];
            rc = u64(&r, &v[0]);
            if (!rc && (v[0] > UINT32_MAX || nregions >= max_regions))
                rc = bad(&r, "bad region record (line %llu)", (unsigned long long)v[0]);
            if (!rc)
                rc = str(&r, f->paths, &paths_used, &g->file);
            if (!rc)
                rc = str(&r, f->paths, &paths_used, &g->name);
            if (rc)
                break;
            g->line = (uint32_t)v[0];
            nregions++;
            break;
        }
        case 'T':
            if (in_thread && n > thread_first)
                thread++;
            in_thread = 1;
            thread_first = sorted = n;
            links_first = nlinks;
            depth = 0;
            break;
        case 'N': {
            rc = u64s(&r, v, 5);
            if (rc)
                break;
            if (!in_thread)
                rc = bad(&r, "a node before any thread record");
            else if (v[0] == 0 || (v[2] & FNP_ADDR_MASK) == 0)
                rc = bad(&r, "a node with id or address 0");
            else if (n >= max_nodes || n >= FNP_NO_PARENT)
                rc = bad(&r, "too many nodes");
            if (rc)
                break;
            uint32_t parent = FNP_NO_PARENT;
            while (depth > 0 && node_id[path[depth - 1]] != v[1])
                depth--;
            if (depth > 0) {
                parent = path[depth - 1];
            } else if (v[1] != 0) {
                rc = bad(&r, "node %#llx: its parent %#llx is not on the path before it",
                         (unsigned long long)v[0], (unsigned long long)v[1]);
                break;
            }
            path[depth++] = (uint32_t)n;
            node_id[n] = v[0];
            ids[n] = (struct id_index){v[0], (uint32_t)n};
            f->nodes[n++] = (struct fnp_raw_node){v[2], parent, thread, v[3], v[4], 0, 0};
            break;
        }
        case 'L':
        case 'O': {
            int fields = type == 'L' ? 6 : 2;
            for (int i = 0; i < fields && !rc; i++)
                rc = u64(&r, &v[i]);
            if (rc)
                break;
            /* Links and open calls come after their thread's nodes: sort those ids once. */
            if (sorted != n) {
                qsort(ids + thread_first, n - thread_first, sizeof(*ids), by_id);
                sorted = n;
            }
            size_t nids = n - thread_first;
            if (type == 'L') {
                int64_t to = find_id(ids + thread_first, nids, v[1]);
                if (to < 0 || nlinks >= max_nodes || v[5] > 7) {
                    rc = bad(&r, "a link to unknown node %#llx", (unsigned long long)v[1]);
                    break;
                }
                int64_t from = find_id(ids + thread_first, nids, v[2]);
                links[nlinks++] = (struct link){
                    v[0], (uint32_t)to, from < 0 ? FNP_NO_PARENT : (uint32_t)from, (uint32_t)v[5]};
                fnp_raw_add_link(f->nodes, (uint32_t)to, links[nlinks - 1].parent, v[3], v[4],
                                 (uint32_t)v[5]);
                break;
            }
            int64_t k = find_id(ids + thread_first, nids, v[0]);
            if (k >= 0) {
                f->nodes[k].ticks += v[1];
                break;
            }
            const struct link *l = NULL;
            for (size_t i = nlinks; i-- > links_first && !l;)
                if (links[i].id == v[0])
                    l = &links[i];
            if (!l) {
                rc = bad(&r, "an open call of unknown node %#llx", (unsigned long long)v[0]);
                break;
            }
            fnp_raw_add_link(f->nodes, l->target, l->parent, 0, v[1], l->flags);
            break;
        }
        case 'F':
            rc = u64s(&r, v, 4);
            if (!rc && (f->nflight >= max_flight || (v[1] & FNP_ADDR_MASK) == 0 || v[2] > v[3]))
                rc = bad(&r, "bad flight recording call (address %#llx)", (unsigned long long)v[1]);
            if (!rc)
                f->flight[f->nflight++] =
                    (struct fnp_raw_flight_call){(int64_t)v[0], v[1], v[2], v[3]};
            break;
        case 'K': {
            struct fnp_raw_flight_track *k = &f->flight_tracks[f->nflight_tracks];
            rc = u64(&r, &v[0]);
            if (!rc && f->nflight_tracks >= max_tracks)
                rc = bad(&r, "too many thread names");
            if (!rc)
                rc = str(&r, f->paths, &paths_used, &k->name);
            if (rc)
                break;
            k->tid = (int64_t)v[0];
            f->nflight_tracks++;
            break;
        }
        case 'W':
            rc = u64s(&r, v, 5);
            if (rc)
                break;
            f->flight_seen = 1;
            f->flight_last = v[0];
            f->flight_overwritten = v[1];
            f->flight_not_kept = v[2];
            f->flight_origin = v[3];
            f->flight_pid = v[4];
            break;
        case 'E':
            rc = u64s(&r, v, 5);
            if (rc)
                break;
            f->dropped = v[0];
            f->unmatched = v[1];
            f->threads_seen = v[2];
            f->raw.merged = v[3];
            f->raw.max_nodes = v[4];
            ended = 1;
            if (r.at != len)
                rc = bad(&r, "%zu bytes after the end record", len - r.at);
            break;
        default:
            r.at--;
            rc = bad(&r, "unknown record type 0x%02x", type);
        }
    }
out:
    free(ids);
    free(path);
    free(node_id);
    free(links);
    if (rc)
        return rc;
    f->raw.nodes = f->nodes;
    f->raw.n = n;
    f->raw.threads = in_thread && n > thread_first ? thread + 1 : thread;
    f->raw.mods = f->mods;
    f->raw.nmods = nmods;
    f->raw.regions = f->regions;
    f->raw.nregions = nregions;
    f->raw.tick_seconds = count_only ? 1.0 : secs;
    f->raw.count_only = (int)count_only;
    return 0;
}

void fnp_raw_file_free(struct fnp_raw_file *f)
{
    free(f->nodes);
    free(f->mods);
    free(f->regions);
    free(f->paths);
    free(f->flight);
    free(f->flight_tracks);
    memset(f, 0, sizeof(*f));
}
