/* SPDX-License-Identifier: MIT */
/*
 * The raw snapshot: what a signal handler can write. Everything the profile needs, before
 * anything is named, in a file `fnprof symbolize` turns into pstats in another process
 * (profile/raw_read.c documents the format). Async-signal-safe throughout: no malloc, no
 * stdio, no lock, no dl_iterate_phdr (the loader's lock may be held by the interrupted
 * code); the module map comes from /proc/self/maps and the ELF headers in memory.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "runtime.h"

struct fnp_raw_out {
    int fd;
    int err;
    size_t n;
    char buf[4096];
};

static void flush(struct fnp_raw_out *o)
{
    size_t done = 0;
    while (done < o->n && !o->err) {
        ssize_t w = write(o->fd, o->buf + done, o->n - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            o->err = w < 0 ? errno : EIO;
        else
            done += (size_t)w;
    }
    o->n = 0;
}

static void put(struct fnp_raw_out *o, const void *p, size_t len)
{
    const char *c = p;
    while (len) {
        if (o->n == sizeof(o->buf))
            flush(o);
        size_t k = sizeof(o->buf) - o->n < len ? sizeof(o->buf) - o->n : len;
        memcpy(o->buf + o->n, c, k);
        o->n += k;
        c += k;
        len -= k;
    }
}

static void put_u64(struct fnp_raw_out *o, uint64_t v)
{
    unsigned char b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)(v >> (8 * i)); /* little-endian, whatever the host */
    put(o, b, 8);
}

void fnp_raw_put(struct fnp_raw_out *o, const void *p, size_t len)
{
    put(o, p, len);
}

void fnp_raw_put_u64(struct fnp_raw_out *o, uint64_t v)
{
    put_u64(o, v);
}

static void put_module(struct fnp_raw_out *o, const struct fnp_raw_module *m)
{
    size_t len = strlen(m->path);
    put(o, "M", 1);
    put_u64(o, m->bias);
    put_u64(o, m->lo);
    put_u64(o, m->hi);
    put_u64(o, m->gen_end);
    put_u64(o, len);
    put(o, m->path, len);
}

/* The regions and interpreted frames interned so far (region.c), in key order: the i-th
 * record names key FNP_REGION_TAG | (i + 1). An entry is immutable once nregions counts
 * it, so reading the table here needs no lock. */
static void put_regions(struct fnp_raw_out *o)
{
    size_t n;
    const struct fnp_raw_region *g = fnp_regions(&n);
    for (size_t i = 0; i < n; i++) {
        size_t flen = strlen(g[i].file), nlen = strlen(g[i].name);
        put(o, "R", 1);
        put_u64(o, g[i].line);
        put_u64(o, flen);
        put(o, g[i].file, flen);
        put_u64(o, nlen);
        put(o, g[i].name, nlen);
    }
}

static uint64_t parse_hex(const char **s)
{
    uint64_t v = 0;
    for (;; (*s)++) {
        char c = **s;
        unsigned d = c >= '0' && c <= '9'   ? (unsigned)(c - '0')
                     : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                                            : 16;
        if (d == 16)
            return v;
        v = v * 16 + d;
    }
}

/* The load bias of an object whose file offset 0 is mapped at base: base less the first
 * PT_LOAD's page-aligned address, as the loader computes it. */
static uint64_t bias_at(uint64_t base)
{
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)(uintptr_t)base;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
        eh->e_phoff == 0 || eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr) > 4096)
        return base; /* the headers are not in the first page: assume a first PT_LOAD at 0 */
    const Elf64_Phdr *ph = (const Elf64_Phdr *)(uintptr_t)(base + eh->e_phoff);
    for (int i = 0; i < eh->e_phnum; i++)
        if (ph[i].p_type == PT_LOAD)
            return base - (ph[i].p_vaddr & ~(uint64_t)4095);
    return base;
}

/* One line of /proc/self/maps: "lo-hi perms offset dev inode   path". */
struct mapping {
    uint64_t lo, hi, offset;
    int exec;
    const char *path; /* NULL when anonymous or a pseudo-file ([vdso]) */
    size_t path_len;
};

static int parse_mapping(const char *line, size_t len, struct mapping *m)
{
    const char *s = line, *end = line + len;
    m->lo = parse_hex(&s);
    if (*s++ != '-')
        return -1;
    m->hi = parse_hex(&s);
    if (*s++ != ' ' || end - s < 5)
        return -1;
    m->exec = s[2] == 'x';
    s += 5;
    m->offset = parse_hex(&s);
    for (int fields = 0; s < end && fields < 3; fields++) { /* offset's end, dev, inode */
        while (s < end && *s != ' ')
            s++;
        while (s < end && *s == ' ')
            s++;
    }
    m->path = s < end && *s == '/' ? s : NULL;
    m->path_len = m->path ? (size_t)(end - s) : 0;
    return 0;
}

/*
 * Writes one module record per file with executable mappings. /proc/self/maps lists a
 * file's mappings in address order, its offset-0 mapping first, so one pass suffices.
 */
static void put_live_modules(struct fnp_raw_out *o)
{
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    static char text[8192], path[4096];
    size_t have = 0;
    struct fnp_raw_module cur = {.path = path, .gen_end = UINT32_MAX};
    uint64_t base = 0;
    int open_mod = 0;
    for (;;) {
        ssize_t r = read(fd, text + have, sizeof(text) - have);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0 && have == 0)
            break;
        have += r > 0 ? (size_t)r : 0;
        char *nl = memchr(text, '\n', have);
        size_t len = nl ? (size_t)(nl - text) : have;
        struct mapping m;
        if (parse_mapping(text, len, &m) == 0 && m.path && m.path_len < sizeof(path)) {
            if (!open_mod || m.path_len != strlen(path) || memcmp(m.path, path, m.path_len)) {
                if (open_mod && cur.hi)
                    put_module(o, &cur);
                memcpy(path, m.path, m.path_len);
                path[m.path_len] = 0;
                open_mod = 1;
                base = m.offset == 0 ? m.lo : 0;
                cur.bias = base ? bias_at(base) : 0;
                cur.lo = cur.hi = 0;
            }
            if (m.exec) {
                cur.lo = cur.hi ? cur.lo : m.lo;
                cur.hi = m.hi;
            }
        }
        size_t used = nl ? len + 1 : have;
        memmove(text, text + used, have - used);
        have -= used;
        if (r <= 0 && have == 0)
            break;
    }
    if (open_mod && cur.hi)
        put_module(o, &cur);
    close(fd);
}

int fnp_raw_write(int fd, uint64_t now, double tick_seconds)
{
    static struct fnp_raw_out o;
    o.fd = fd;
    o.err = 0;
    o.n = 0;
    put(&o, FNP_RAW_MAGIC, 8);
    uint64_t secs;
    memcpy(&secs, &tick_seconds, 8);
    put_u64(&o, secs);
    put_u64(&o, fnp_clock_kind == FNP_CLOCK_NONE);

    put_live_modules(&o);
    for (struct fnp_retired *r = fnp_retired_list(); r; r = r->next)
        put_module(&o, &r->mod);
    put_regions(&o);

    uint64_t dropped = 0, unmatched = 0, merged = 0, thread = 0;
    for (struct fnp_thread *t = fnp_thread_list(); t; t = t->next, thread++) {
        put(&o, "T", 1);
        /* Pre-order by first_child / next_sibling / parent: no stack needed. */
        const struct fnp_node *n = __atomic_load_n(&t->root.first_child, __ATOMIC_ACQUIRE);
        while (n) {
            put(&o, "N", 1);
            put_u64(&o, (uintptr_t)n);
            put_u64(&o, n->parent == &t->root ? 0 : (uintptr_t)n->parent);
            put_u64(&o, n->fn);
            put_u64(&o, __atomic_load_n(&n->ncalls, __ATOMIC_RELAXED));
            put_u64(&o, __atomic_load_n(&n->ticks, __ATOMIC_RELAXED));
            const struct fnp_node *child = __atomic_load_n(&n->first_child, __ATOMIC_ACQUIRE);
            if (child) {
                n = child;
                continue;
            }
            size_t up = 0;
            n = fnp_cct_after(t, n, &up);
        }
        for (const struct fnp_node *l = __atomic_load_n(&t->links, __ATOMIC_ACQUIRE); l;
             l = l->next_sibling) {
            put(&o, "L", 1);
            put_u64(&o, (uintptr_t)l);
            put_u64(&o, (uintptr_t)l->target);
            put_u64(&o, (uintptr_t)l->parent);
            put_u64(&o, __atomic_load_n(&l->ncalls, __ATOMIC_RELAXED));
            put_u64(&o, __atomic_load_n(&l->ticks, __ATOMIC_RELAXED));
            put_u64(&o, __atomic_load_n(&l->open_flags, __ATOMIC_RELAXED) & 7);
        }
        uint32_t depth = __atomic_load_n(&t->depth, __ATOMIC_ACQUIRE);
        const struct fnp_frame *frames = __atomic_load_n(&t->frames, __ATOMIC_ACQUIRE);
        for (uint32_t i = 0; i < depth; i++) {
            const struct fnp_node *node = __atomic_load_n(&frames[i].node, __ATOMIC_RELAXED);
            uint64_t t0 = __atomic_load_n(&frames[i].t0, __ATOMIC_RELAXED);
            if (!node || fnp_key_is_ghost(node->fn))
                continue; /* a call entered while paused: no node */
            put(&o, "O", 1);
            put_u64(&o, (uintptr_t)node);
            put_u64(&o, now > t0 ? now - t0 : 0);
        }
        dropped += __atomic_load_n(&t->dropped_calls, __ATOMIC_RELAXED);
        unmatched += __atomic_load_n(&t->unmatched, __ATOMIC_RELAXED);
        merged += __atomic_load_n(&t->merged, __ATOMIC_RELAXED);
    }
    fnp_ring_put_raw(&o, now); /* PROF_TRACE_LAST's calls (trace_ring.c) */
    put(&o, "E", 1);
    put_u64(&o, dropped);
    put_u64(&o, unmatched);
    put_u64(&o, fnp_thread_count());
    put_u64(&o, merged);
    put_u64(&o, fnp_max_nodes());
    flush(&o);
    return o.err ? -o.err : 0;
}
