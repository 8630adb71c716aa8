/* SPDX-License-Identifier: MIT */
/*
 * The rewrite fnprof-as applies to gcc's assembly (patch-as.h, docs/patchable.md). gcc built
 * with -pg -mfentry -mrecord-mcount -minstrument-return=nop5 -mrecord-return prints, at each
 * function's first instruction (after an endbr64) and before each ret or tail-call jmp:
 *
 *   1:	call	*__fentry__@GOTPCREL(%rip)      (non-PIC: 1:	call	__fentry__)
 *   	.section __mcount_loc, "a",@progbits
 *   	.quad 1b
 *   	.previous
 *
 *   1:
 *   	.byte	0x0f, 0x1f, 0x44, 0x00, 0x00
 *   	.section __return_loc, "a",@progbits
 *   	.quad 1b
 *   	.previous
 *
 * The call becomes the same 5-byte nop the return sites have, and the .quad tables (absolute
 * addresses: dynamic relocations in read-only data, DT_TEXTREL in a PIC link, and entries
 * pointing into discarded COMDAT or gc'ed sections) become one 8-byte entry per site in
 * fnprof_sites: PC-relative, and linked (SHF_LINK_ORDER) to the site's own section and in its
 * COMDAT group, so the linker keeps or drops a function's sites with the function. Every other
 * line is copied byte for byte; the rewrite keeps the line count, so the real assembler's
 * messages name the lines they would have named.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "patch-as.h"

/* One ELF section as the assembler tells them apart: name, COMDAT group, unique id. link is
 * the number of the first site label placed in it (0: none yet), the linked-to symbol of
 * all its sites' entries: gas makes one fnprof_sites section per linked-to symbol, so one
 * symbol per text section keeps it to one fnprof_sites per text section, not per site. */
struct section {
    char *name, *group, *unique; /* group, unique: NULL when absent */
    int comdat;
    unsigned link;
    uint64_t hash;
};

struct text {
    char *p;
    size_t len, cap;
    int failed;
};

/* Sections by (name, group, unique), interned: -ffunction-sections makes one per function. */
struct sections {
    struct section *v;
    size_t n, cap;
    size_t *slot; /* open addressing, index + 1, 0 empty */
    size_t nslot;
};

#define STACK_MAX 64

struct rewrite {
    struct text out;
    struct sections secs;
    /* Indices into secs: the current section, the one .previous returns to, and
     * .pushsection's saved pairs. */
    size_t cur, prev;
    size_t stack[STACK_MAX][2];
    size_t depth;
    unsigned next_label; /* the last site label: it carries over, as the sections do */
    int changed;
};

static void put(struct text *t, const char *s, size_t n)
{
    if (t->failed)
        return;
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 1 << 16;
        while (cap < t->len + n + 1)
            cap *= 2;
        char *p = realloc(t->p, cap);
        if (!p) {
            t->failed = 1;
            return;
        }
        t->p = p;
        t->cap = cap;
    }
    memcpy(t->p + t->len, s, n);
    t->len += n;
}

static void puts_text(struct text *t, const char *s)
{
    put(t, s, strlen(s));
}

static uint64_t hash_str(uint64_t h, const char *s)
{
    for (; s && *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return (h ^ 0xff) * 1099511628211ull; /* a separator: ("ab","") != ("a","b") */
}

static int same(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static char *dup_n(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

static int grow_slots(struct sections *s)
{
    size_t nslot = s->nslot ? s->nslot * 2 : 256;
    size_t *slot = calloc(nslot, sizeof(*slot));
    if (!slot)
        return -1;
    for (size_t i = 0; i < s->n; i++) {
        size_t j = s->v[i].hash & (nslot - 1);
        while (slot[j])
            j = (j + 1) & (nslot - 1);
        slot[j] = i + 1;
    }
    free(s->slot);
    s->slot = slot;
    s->nslot = nslot;
    return 0;
}

/* The index of the section so named, added when new; (size_t)-1 when out of memory. The
 * strings are copied. */
static size_t intern(struct sections *s, const char *name, const char *group, int comdat,
                     const char *unique)
{
    uint64_t h = hash_str(hash_str(hash_str(1469598103934665603ull, name), group), unique);
    if (s->nslot) {
        for (size_t j = h & (s->nslot - 1); s->slot[j]; j = (j + 1) & (s->nslot - 1)) {
            struct section *x = &s->v[s->slot[j] - 1];
            if (x->hash == h && strcmp(x->name, name) == 0 && same(x->group, group) &&
                same(x->unique, unique))
                return s->slot[j] - 1;
        }
    }
    if ((s->n + 1) * 2 > s->nslot && grow_slots(s) < 0)
        return (size_t)-1;
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        struct section *v = realloc(s->v, cap * sizeof(*v));
        if (!v)
            return (size_t)-1;
        s->v = v;
        s->cap = cap;
    }
    struct section *x = &s->v[s->n];
    x->name = strdup(name);
    x->group = group ? strdup(group) : NULL;
    x->unique = unique ? strdup(unique) : NULL;
    if (!x->name || (group && !x->group) || (unique && !x->unique)) {
        free(x->name);
        free(x->group);
        free(x->unique);
        return (size_t)-1;
    }
    x->comdat = comdat;
    x->link = 0;
    x->hash = h;
    size_t j = h & (s->nslot - 1);
    while (s->slot[j])
        j = (j + 1) & (s->nslot - 1);
    s->slot[j] = s->n + 1;
    return s->n++;
}

/* ---- following the assembler's current section ---------------------------------------- */

static int blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

static int symbol_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.' || c == '$';
}

/* The comma-separated operands of a directive, blanks trimmed, quotes kept (a quoted
 * section or group name is handed back to the assembler as it was written). */
#define MAX_FIELDS 10
static size_t split_fields(const char *s, const char *end, char *field[MAX_FIELDS])
{
    size_t n = 0;
    while (s < end && n < MAX_FIELDS) {
        while (s < end && blank(*s))
            s++;
        const char *start = s;
        int quoted = 0;
        for (; s < end && (quoted || *s != ','); s++) {
            if (*s == '\\' && quoted && s + 1 < end)
                s++;
            else if (*s == '"')
                quoted = !quoted;
        }
        const char *stop = s;
        while (stop > start && blank(stop[-1]))
            stop--;
        field[n++] = dup_n(start, (size_t)(stop - start));
        if (s < end)
            s++; /* the comma */
        else
            break;
    }
    return n;
}

static void free_fields(char **field, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(field[i]);
}

static void set_section(struct rewrite *r, size_t sec)
{
    if (sec == (size_t)-1) {
        r->out.failed = 1;
        return;
    }
    r->prev = r->cur;
    r->cur = sec;
}

/* `.section NAME[, "FLAGS"[, @TYPE[, ENTSIZE (M)][, SYMBOL (o)][, GROUP[, LINKAGE] (G)]
 * [, unique, ID]]]`, gas's order. A name alone is the section without a group. */
static void on_section(struct rewrite *r, const char *args, const char *end)
{
    char *f[MAX_FIELDS] = {0};
    size_t n = split_fields(args, end, f);
    for (size_t i = 0; i < n; i++)
        if (!f[i]) {
            free_fields(f, n);
            r->out.failed = 1;
            return;
        }
    if (n == 0 || f[0][0] == '\0') {
        free_fields(f, n);
        return;
    }
    const char *flags = n > 1 ? f[1] : "";
    size_t i = 3; /* after name, flags, type */
    if (strchr(flags, 'M'))
        i++;
    if (strchr(flags, 'o'))
        i++;
    const char *group = NULL;
    int comdat = 0;
    if (strchr(flags, 'G') && i < n) {
        group = f[i++];
        if (i < n && strcmp(f[i], "comdat") == 0) {
            comdat = 1;
            i++;
        }
    } else if (strchr(flags, '?') && r->secs.v[r->cur].group) {
        /* '?': the group of the section current before this directive. */
        group = r->secs.v[r->cur].group;
        comdat = r->secs.v[r->cur].comdat;
    }
    const char *unique = NULL;
    if (i + 1 < n && strcmp(f[i], "unique") == 0)
        unique = f[i + 1];
    /* A name may be quoted: "name" and name are one section. */
    char *name = f[0];
    size_t nl = strlen(name);
    if (nl >= 2 && name[0] == '"' && name[nl - 1] == '"') {
        name[nl - 1] = '\0';
        name++;
    }
    set_section(r, intern(&r->secs, name, group, comdat, unique));
    free_fields(f, n);
}

/* One statement (no ';' or comment in it): a section directive changes the current section,
 * anything else is left alone. */
static void track_statement(struct rewrite *r, const char *s, const char *end)
{
    for (;;) { /* labels first: "x: .text" */
        while (s < end && blank(*s))
            s++;
        const char *w = s;
        while (w < end && symbol_char(*w))
            w++;
        if (w > s && w < end && *w == ':')
            s = w + 1;
        else
            break;
    }
    if (s == end || *s != '.')
        return;
    const char *w = s;
    while (w < end && symbol_char(*w))
        w++;
    size_t len = (size_t)(w - s);
#define IS(word) (len == sizeof(word) - 1 && memcmp(s, word, len) == 0)
    if (IS(".text") || IS(".data") || IS(".bss")) {
        char name[8];
        memcpy(name, s, len);
        name[len] = '\0';
        set_section(r, intern(&r->secs, name, NULL, 0, NULL));
    } else if (IS(".section")) {
        on_section(r, w, end);
    } else if (IS(".pushsection")) {
        if (r->depth < STACK_MAX) {
            r->stack[r->depth][0] = r->cur;
            r->stack[r->depth][1] = r->prev;
        }
        r->depth++;
        on_section(r, w, end);
    } else if (IS(".popsection")) {
        if (r->depth > 0 && --r->depth < STACK_MAX) {
            r->cur = r->stack[r->depth][0];
            r->prev = r->stack[r->depth][1];
        }
    } else if (IS(".previous")) {
        size_t t = r->cur;
        r->cur = r->prev;
        r->prev = t;
    }
#undef IS
}

/* A line is statements separated by ';', up to a '#' comment, quotes respected. */
static void track_line(struct rewrite *r, const char *s, const char *end)
{
    const char *start = s;
    int quoted = 0;
    for (; s < end; s++) {
        if (quoted) {
            if (*s == '\\' && s + 1 < end)
                s++;
            else if (*s == '"')
                quoted = 0;
        } else if (*s == '"') {
            quoted = 1;
        } else if (*s == ';' || *s == '#') {
            track_statement(r, start, s);
            if (*s == '#')
                return;
            start = s + 1;
        }
    }
    track_statement(r, start, end);
}

/* ---- gcc's sites ---------------------------------------------------------------------- */

/* The line without its blanks, into buf; 0 when it does not fit (then it is none of the
 * short lines below). */
static int squeeze(const char *s, const char *end, char *buf, size_t n)
{
    size_t k = 0;
    for (; s < end; s++) {
        if (blank(*s))
            continue;
        if (k + 1 >= n)
            return 0;
        buf[k++] = *s;
    }
    buf[k] = '\0';
    return 1;
}

#define NOP5 ".byte0x0f,0x1f,0x44,0x00,0x00"

/* The site's instruction, after "1:": the call gcc makes (PIC or not) or the nop. */
static int site_instruction(const char *s)
{
    return strcmp(s, "call*__fentry__@GOTPCREL(%rip)") == 0 || strcmp(s, "call__fentry__") == 0 ||
           strcmp(s, NOP5) == 0;
}

struct line {
    const char *p, *end;
};

/* Whether lines[0..n) start with a site gcc printed; its kind (1 entry, 2 exit) and how many
 * lines it takes, else 0. */
static int match_site(const struct line *l, size_t n, size_t *used)
{
    char a[64], b[64];
    size_t k;
    if (n < 4 || !squeeze(l[0].p, l[0].end, a, sizeof(a)))
        return 0;
    if (strcmp(a, "1:") == 0) {
        if (n < 5 || !squeeze(l[1].p, l[1].end, b, sizeof(b)) || !site_instruction(b))
            return 0;
        k = 2;
    } else if (strncmp(a, "1:", 2) == 0 && site_instruction(a + 2)) {
        memmove(b, a + 2, strlen(a + 2) + 1);
        k = 1;
    } else {
        return 0;
    }
    char sec[64], quad[64], prev[64];
    if (!squeeze(l[k].p, l[k].end, sec, sizeof(sec)) ||
        !squeeze(l[k + 1].p, l[k + 1].end, quad, sizeof(quad)) ||
        !squeeze(l[k + 2].p, l[k + 2].end, prev, sizeof(prev)) || strcmp(quad, ".quad1b") != 0 ||
        strcmp(prev, ".previous") != 0)
        return 0;
    int kind;
    if (strcmp(sec, ".section__mcount_loc,\"a\",@progbits") == 0)
        kind = 1;
    else if (strcmp(sec, ".section__return_loc,\"a\",@progbits") == 0 && strcmp(b, NOP5) == 0)
        kind = 2;
    else
        return 0;
    *used = k + 3;
    return kind;
}

/* The site: gcc's "1:" kept (the numeric labels around it, "1b" or "1f" in inline asm,
 * resolve as before), a label of ours on the nop, and its entry. As many lines as gcc's
 * text took (4 or 5). */
static void emit_site(struct rewrite *r, int kind, size_t used)
{
    struct section *s = &r->secs.v[r->cur];
    unsigned label = ++r->next_label;
    if (!s->link)
        s->link = label;
    char buf[256];
    if (used == 5)
        puts_text(&r->out, "1:\n");
    /* An exit site on an even address: its first two bytes, which the runtime switches by
     * one atomic store (patch.c), then never straddle a cache line. An entry site stays at
     * the function's first byte (or after its endbr64): its address names the function. */
    snprintf(buf, sizeof(buf), "%s1:\t.Lfnprof_site%u:\t.byte\t0x0f, 0x1f, 0x44, 0x00, 0x00\n",
             kind == 2 ? "\t.p2align\t1; " : "", label);
    puts_text(&r->out, buf);
    snprintf(buf, sizeof(buf), "\t.pushsection\tfnprof_sites,\"ao%s\",@progbits,.Lfnprof_site%u",
             s->group ? "G" : "", s->link);
    puts_text(&r->out, buf);
    if (s->group) {
        puts_text(&r->out, ",");
        puts_text(&r->out, s->group);
        if (s->comdat)
            puts_text(&r->out, ",comdat");
    }
    snprintf(buf, sizeof(buf),
             "\n\t.balign\t4; .long\t.Lfnprof_site%u - .; .byte\t%d, 5; .short\t0\n"
             "\t.popsection\n",
             label, kind);
    puts_text(&r->out, buf);
    r->changed = 1;
}

void fnp_patch_rewrite_free(struct fnp_patch_rewrite *rw)
{
    if (!rw || !rw->r)
        return;
    struct rewrite *r = rw->r;
    for (size_t i = 0; i < r->secs.n; i++) {
        free(r->secs.v[i].name);
        free(r->secs.v[i].group);
        free(r->secs.v[i].unique);
    }
    free(r->secs.v);
    free(r->secs.slot);
    free(r->out.p);
    free(r);
    rw->r = NULL;
}

int fnp_patch_rewrite_new(struct fnp_patch_rewrite *rw)
{
    struct rewrite *r = calloc(1, sizeof(*r));
    if (!r)
        return -1;
    rw->r = r;
    /* The assembler starts in .text, with .text as the previous section too. */
    r->cur = r->prev = intern(&r->secs, ".text", NULL, 0, NULL);
    if (r->cur == (size_t)-1) {
        fnp_patch_rewrite_free(rw);
        return -1;
    }
    return 0;
}

int fnp_patch_rewrite(struct fnp_patch_rewrite *rw, const char *in, size_t len, char **out,
                      size_t *outlen, int *changed)
{
    struct rewrite *r = rw->r;
    r->out.len = 0;
    r->out.failed = 0;
    r->changed = 0;
    /* A window of the next 5 lines: a site takes at most that many. */
    struct line l[5];
    size_t nl = 0;
    const char *p = in, *end = in + len;
    for (;;) {
        while (nl < 5 && p < end) {
            const char *e = memchr(p, '\n', (size_t)(end - p));
            l[nl].p = p;
            l[nl].end = e ? e : end;
            p = e ? e + 1 : end;
            nl++;
        }
        if (nl == 0)
            break;
        size_t used;
        int kind = match_site(l, nl, &used);
        if (kind) {
            emit_site(r, kind, used);
        } else {
            used = 1;
            track_line(r, l[0].p, l[0].end);
            /* The line as it was, with its newline when it had one. */
            put(&r->out, l[0].p,
                (size_t)(l[0].end - l[0].p) + (l[0].end < end && *l[0].end == '\n'));
        }
        if (kind && l[used - 1].end == end)
            r->out.len--; /* the input's last line had no newline: neither has ours */
        memmove(l, l + used, (nl - used) * sizeof(*l));
        nl -= used;
        if (r->out.failed)
            return -1;
    }
    *out = r->out.p;
    *outlen = r->out.len;
    *changed = r->changed;
    return r->out.failed ? -1 : 0;
}
