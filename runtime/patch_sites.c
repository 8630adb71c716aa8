/* SPDX-License-Identifier: MIT */
/*
 * The sites of a loaded object: where its tables are (the file's section headers, the one
 * thing read from the file), what they list (read in memory: both tables are allocated, so
 * they are mapped), and checks that make a write safe: the file is the object mapped (its
 * PT_LOAD headers are the ones in memory), every site lies in executable memory of the
 * object and holds the bytes its compiler emits. Anything else leaves the object alone.
 *
 * Tables (docs/patchable.md): fnprof_sites, 8-byte entries {int32 site - &entry, uint8 kind
 * (1 entry, 2 exit), uint8 size (5), uint16 0}, from fnprof's assembler filter for gcc; and
 * XRay's xray_instr_map, 32-byte entries {int64 sled - &entry, int64 function - &field,
 * uint8 kind (0 entry, 1 exit, 2 tail exit, 3 entry with arguments logged), uint8 always,
 * uint8 version (2: the fields are pc-relative)}.
 *
 * A gcc exit site does not say its function. A pause needs it (exits of functions with a
 * call open stay patched), so it is the function whose unwind range (.eh_frame_hdr, mapped)
 * holds the site, when that range begins at an entry site; otherwise (the cold part of a
 * function gcc split off, no unwind tables) it stays unknown, 0, and such exits are kept
 * patched through a pause whenever any call is open.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "patch.h"

#if defined(__x86_64__) && defined(__linux__)

#define SITES_SECTION "fnprof_sites"
#define XRAY_SECTION "xray_instr_map"
#define MAX_SHSTRTAB (1u << 20)

/* Pointer encodings of .eh_frame (the LSB's EH_PE_*), those found on x86_64. */
#define EH_PE_absptr 0x00
#define EH_PE_udata4 0x03
#define EH_PE_udata8 0x04
#define EH_PE_sdata4 0x0b
#define EH_PE_sdata8 0x0c
#define EH_PE_pcrel 0x10
#define EH_PE_datarel 0x30

static const uint8_t nop5[5] = {0x0f, 0x1f, 0x44, 0x00, 0x00};
static const uint8_t endbr64[4] = {0xf3, 0x0f, 0x1e, 0xfa};

static int read_at(int fd, void *buf, size_t len, off_t off)
{
    return pread(fd, buf, len, off) == (ssize_t)len ? 0 : -1;
}

struct file_tables {
    ElfW(Ehdr) eh;
    ElfW(Shdr) sites, xray; /* sh_type SHT_NULL when absent */
};

/* The site tables' section headers of the ELF file fd. 0, or -1 when it is no x86_64 ELF
 * object or cannot be read. */
static int read_tables(int fd, struct file_tables *ft)
{
    ElfW(Ehdr) eh;
    memset(ft, 0, sizeof(*ft));
    if (read_at(fd, &eh, sizeof(eh), 0) || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
        eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64 ||
        eh.e_shentsize != sizeof(ElfW(Shdr)) || eh.e_phentsize != sizeof(ElfW(Phdr)) ||
        eh.e_shnum == 0 || eh.e_shstrndx >= eh.e_shnum)
        return -1;
    ElfW(Shdr) *sh = malloc((size_t)eh.e_shnum * sizeof(*sh));
    char *names = NULL;
    int rc = -1;
    if (!sh || read_at(fd, sh, (size_t)eh.e_shnum * sizeof(*sh), (off_t)eh.e_shoff))
        goto out;
    const ElfW(Shdr) *strs = &sh[eh.e_shstrndx];
    if (strs->sh_size == 0 || strs->sh_size > MAX_SHSTRTAB ||
        !(names = malloc(strs->sh_size + 1)) ||
        read_at(fd, names, strs->sh_size, (off_t)strs->sh_offset))
        goto out;
    names[strs->sh_size] = 0;
    for (size_t i = 0; i < eh.e_shnum; i++) {
        if (sh[i].sh_name >= strs->sh_size)
            continue;
        if (strcmp(names + sh[i].sh_name, SITES_SECTION) == 0)
            ft->sites = sh[i];
        else if (strcmp(names + sh[i].sh_name, XRAY_SECTION) == 0)
            ft->xray = sh[i];
    }
    ft->eh = eh;
    rc = 0;
out:
    free(sh);
    free(names);
    return rc;
}

int fnp_sites_in_file(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    struct file_tables ft;
    int has =
        read_tables(fd, &ft) == 0 && (ft.sites.sh_type != SHT_NULL || ft.xray.sh_type != SHT_NULL);
    close(fd);
    return has;
}

/* The file's PT_LOAD headers (phnum at phdr) are the mapped object's, in the same order. */
static int same_loads(const ElfW(Phdr) * phdr, size_t phnum, const struct fnp_object_view *v)
{
    const ElfW(Phdr) *mem = v->phdr;
    size_t i = 0, j = 0;
    for (;;) {
        while (i < phnum && phdr[i].p_type != PT_LOAD)
            i++;
        while (j < v->phnum && mem[j].p_type != PT_LOAD)
            j++;
        if (i == phnum || j == v->phnum)
            return i == phnum && j == v->phnum;
        if (memcmp(&phdr[i], &mem[j], sizeof(mem[j])) != 0)
            return 0;
        i++;
        j++;
    }
}

/* The PT_LOAD of v holding [addr, addr + len) with all of flags, or NULL. */
static const ElfW(Phdr) *
    segment_of(const struct fnp_object_view *v, uintptr_t addr, size_t len, unsigned flags)
{
    const ElfW(Phdr) *ph = v->phdr;
    for (size_t i = 0; i < v->phnum; i++) {
        uintptr_t lo = v->bias + ph[i].p_vaddr;
        if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & flags) == flags && addr >= lo &&
            addr - lo <= ph[i].p_filesz && len <= ph[i].p_filesz - (addr - lo))
            return &ph[i];
    }
    return NULL;
}

/* ---- .eh_frame_hdr: the unwind range holding an address -------------------------------- */

struct eh_hdr {
    const uint8_t *base;  /* the header: datarel base of its table */
    const int32_t *table; /* pairs {initial location, FDE}, datarel sdata4, sorted */
    size_t count;
};

static uint64_t uleb(const uint8_t **p, const uint8_t *end)
{
    uint64_t v = 0;
    unsigned shift = 0;
    while (*p < end) {
        uint8_t b = *(*p)++;
        if (shift < 64)
            v |= (uint64_t)(b & 0x7f) << shift;
        shift += 7;
        if (!(b & 0x80))
            break;
    }
    return v;
}

/* A pointer encoded as enc (EH_PE_*: absolute or pc-relative, fixed-size forms) at *p;
 * -1 for an encoding not handled. */
static int read_encoded(const uint8_t **p, const uint8_t *end, uint8_t enc, uintptr_t *out)
{
    const uint8_t *at = *p;
    int64_t v;
    size_t size;
    switch (enc & 0x0f) {
    case EH_PE_absptr:
    case EH_PE_udata8:
    case EH_PE_sdata8:
        size = 8;
        break;
    case EH_PE_udata4:
    case EH_PE_sdata4:
        size = 4;
        break;
    default:
        return -1;
    }
    if ((size_t)(end - at) < size)
        return -1;
    if (size == 8) {
        memcpy(&v, at, 8);
    } else if ((enc & 0x0f) == EH_PE_sdata4) {
        int32_t s;
        memcpy(&s, at, 4);
        v = s;
    } else {
        uint32_t u;
        memcpy(&u, at, 4);
        v = u;
    }
    *p = at + size;
    if ((enc & 0x70) == EH_PE_pcrel)
        v += (intptr_t)at;
    else if ((enc & 0x70) != EH_PE_absptr)
        return -1;
    *out = (uintptr_t)v;
    return 0;
}

/* The table of the object's PT_GNU_EH_FRAME, if it has the usual form. */
static int eh_hdr_find(const struct fnp_object_view *v, struct eh_hdr *h)
{
    const ElfW(Phdr) *ph = v->phdr;
    for (size_t i = 0; i < v->phnum; i++) {
        if (ph[i].p_type != PT_GNU_EH_FRAME || ph[i].p_memsz < 12)
            continue;
        const uint8_t *b = (const uint8_t *)(v->bias + ph[i].p_vaddr), *p = b + 4;
        const uint8_t *end = b + ph[i].p_memsz;
        uintptr_t frame, count;
        if (b[0] != 1 || b[3] != (EH_PE_datarel | EH_PE_sdata4) ||
            read_encoded(&p, end, b[1], &frame) || read_encoded(&p, end, b[2], &count) ||
            count > (size_t)(end - p) / 8)
            return -1;
        h->base = b;
        h->table = (const int32_t *)p;
        h->count = count;
        return 0;
    }
    return -1;
}

/* The unwind range [*lo, *hi) of the FDE at fde; -1 for a form not handled. */
static int fde_range(const uint8_t *fde, uintptr_t *lo, uintptr_t *hi)
{
    uint32_t len, cie_off;
    memcpy(&len, fde, 4);
    memcpy(&cie_off, fde + 4, 4);
    if (len == 0 || len == 0xffffffffu || cie_off == 0)
        return -1;
    const uint8_t *cie = fde + 4 - cie_off, *end;
    uint32_t cie_len;
    memcpy(&cie_len, cie, 4);
    if (cie_len == 0 || cie_len == 0xffffffffu)
        return -1;
    end = cie + 4 + cie_len;
    const uint8_t *p = cie + 8;
    uint8_t version = *p++, enc = EH_PE_absptr;
    const char *aug = (const char *)p;
    p += strnlen(aug, (size_t)(end - p)) + 1;
    if (p >= end || aug[0] != 'z')
        return -1;
    uleb(&p, end); /* code alignment */
    uleb(&p, end); /* data alignment (a sleb128: only skipped) */
    if (version == 1)
        p++;
    else
        uleb(&p, end); /* return address column */
    uleb(&p, end);     /* augmentation data's length */
    for (const char *a = aug + 1; *a && p < end; a++) {
        if (*a == 'R') {
            enc = *p++;
        } else if (*a == 'P') {
            uintptr_t ignored;
            if (read_encoded(&p, end, (uint8_t)(*p++ & 0x7f), &ignored))
                return -1;
        } else if (*a == 'L') {
            p++;
        } else if (*a != 'S' && *a != 'B' && *a != 'G') {
            return -1;
        }
    }
    const uint8_t *q = fde + 8, *fend = fde + 4 + len;
    uintptr_t start, range;
    if (read_encoded(&q, fend, enc, &start) || read_encoded(&q, fend, enc & 0x0f, &range))
        return -1;
    *lo = start;
    *hi = start + range;
    return 0;
}

/* The start of the unwind range holding addr, or 0. */
static uintptr_t eh_function(const struct eh_hdr *h, uintptr_t addr)
{
    size_t lo = 0, hi = h->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if ((uintptr_t)(h->base + h->table[2 * mid]) <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    uintptr_t from, to;
    if (lo == 0 || fde_range(h->base + h->table[2 * (lo - 1) + 1], &from, &to) || addr < from ||
        addr >= to)
        return 0;
    return from;
}

/* ---- the tables -------------------------------------------------------------------------- */

struct list {
    struct fnp_site *v;
    size_t n, cap;
};

static int add(struct list *l, uintptr_t addr, uintptr_t fn, uint8_t form)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 256;
        struct fnp_site *v = realloc(l->v, cap * sizeof(*v));
        if (!v)
            return -1;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = (struct fnp_site){.addr = addr, .fn = fn, .form = form};
    return 0;
}

/* The table's entries, read in memory once the section is known to lie in a readable
 * segment of the object. */
static const uint8_t *table_in_memory(const struct fnp_object_view *v, const ElfW(Shdr) * sh,
                                      size_t entry)
{
    if (!(sh->sh_flags & SHF_ALLOC) || sh->sh_size % entry != 0 ||
        !segment_of(v, v->bias + sh->sh_addr, sh->sh_size, PF_R))
        return NULL;
    return (const uint8_t *)(v->bias + sh->sh_addr);
}

static int read_fnprof_sites(const struct fnp_object_view *v, const ElfW(Shdr) * sh, struct list *l,
                             char *why, size_t whylen)
{
    const uint8_t *t = table_in_memory(v, sh, 8);
    if (!t) {
        snprintf(why, whylen, "its %s table is not mapped", SITES_SECTION);
        return -1;
    }
    for (size_t off = 0; off < sh->sh_size; off += 8) {
        int32_t rel;
        memcpy(&rel, t + off, 4);
        uint8_t kind = t[off + 4], size = t[off + 5];
        if ((kind != 1 && kind != 2) || size != 5) {
            snprintf(why, whylen, "%s entry %zu has kind %u, size %u", SITES_SECTION, off / 8, kind,
                     size);
            return -1;
        }
        if (add(l, (uintptr_t)(t + off) + (intptr_t)rel, 0,
                kind == 1 ? FNP_SITE_NOP5_ENTRY : FNP_SITE_NOP5_EXIT))
            return -2;
    }
    return 0;
}

static int read_xray(const struct fnp_object_view *v, const ElfW(Shdr) * sh, struct list *l,
                     char *why, size_t whylen)
{
    const uint8_t *t = table_in_memory(v, sh, 32);
    if (!t) {
        snprintf(why, whylen, "its %s table is not mapped", XRAY_SECTION);
        return -1;
    }
    for (size_t off = 0; off < sh->sh_size; off += 32) {
        const uint8_t *e = t + off;
        int64_t sled, fn;
        memcpy(&sled, e, 8);
        memcpy(&fn, e + 8, 8);
        uint8_t kind = e[16], version = e[18];
        if (version != 2) {
            snprintf(why, whylen,
                     "its XRay sleds are of version %u (2 expected: clang 14 or later)", version);
            return -1;
        }
        /* 3: an entry whose arguments XRay would log; 4 and 5: event sleds, of another form */
        uint8_t form = kind == 0 || kind == 3 ? FNP_SITE_SLED_ENTRY
                       : kind == 1            ? FNP_SITE_SLED_EXIT
                       : kind == 2            ? FNP_SITE_SLED_TAIL
                                              : 0xff;
        if (form != 0xff &&
            add(l, (uintptr_t)e + (intptr_t)sled, (uintptr_t)e + 8 + (intptr_t)fn, form))
            return -2;
    }
    return 0;
}

static int by_addr(const void *a, const void *b)
{
    const struct fnp_site *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int cmp_uintptr(const void *a, const void *b)
{
    uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
    return x < y ? -1 : x > y;
}

static int has_fn(const uintptr_t *fns, size_t n, uintptr_t fn)
{
    return fn && bsearch(&fn, fns, n, sizeof(*fns), cmp_uintptr) != NULL;
}

/* Checks a site's bytes and fills in its function and stub; -1 with why when it is not what
 * its table says. */
static int check_site(const struct fnp_object_view *v, struct fnp_site *s, char *why, size_t whylen)
{
    size_t len = fnp_site_len(s->form);
    const uint8_t *b = (const uint8_t *)s->addr;
    if (!segment_of(v, s->addr, len, PF_X | PF_R)) {
        snprintf(why, whylen, "a site at %#lx is outside its code",
                 (unsigned long)(s->addr - v->bias));
        return -1;
    }
    int ok, endbr = s->addr >= 4 && segment_of(v, s->addr - 4, 4, PF_X | PF_R) &&
                    memcmp(b - 4, endbr64, 4) == 0;
    switch (s->form) {
    case FNP_SITE_NOP5_ENTRY:
        ok = memcmp(b, nop5, 5) == 0;
        s->fn = s->addr - (endbr ? 4 : 0);
        s->slot = endbr ? FNP_SLOT_ENTER9 : FNP_SLOT_ENTER5;
        break;
    case FNP_SITE_NOP5_EXIT:
        ok = memcmp(b, nop5, 5) == 0;
        s->slot = FNP_SLOT_EXIT_CALL;
        break;
    case FNP_SITE_SLED_ENTRY:
        ok = b[0] == 0xeb && b[1] == 0x09 && (s->fn == s->addr || (endbr && s->fn == s->addr - 4));
        s->slot = s->fn == s->addr ? FNP_SLOT_ENTER11 : FNP_SLOT_ENTER15;
        break;
    case FNP_SITE_SLED_TAIL:
        ok = b[0] == 0xeb && b[1] == 0x09;
        s->slot = FNP_SLOT_EXIT_CALL;
        break;
    default:
        ok = b[0] == 0xc3;
        s->slot = FNP_SLOT_EXIT_JMP;
        break;
    }
    if (!ok) {
        snprintf(why, whylen, "the site at %#lx does not hold the expected no-op",
                 (unsigned long)(s->addr - v->bias));
        return -1;
    }
    memcpy(s->head, b, 2);
    return 0;
}

/*
 * Sites whose first two bytes straddle a cache line cannot be switched by one atomic store
 * (patch.c): their function is left out, entry and exits alike, as if inlined (XRay aligns
 * its sleds to 2 bytes, so this concerns gcc's nops). So are the functions PROF_FILTER leaves
 * out, which then cost nothing. Keeps the rest, in place; returns their number.
 */
static size_t drop_functions(struct fnp_site *s, size_t n)
{
    uintptr_t *bad = malloc((n ? n : 1) * sizeof(*bad));
    size_t nbad = 0, k = 0;
    if (!bad)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (s[i].fn && ((s[i].addr & 63) == 63 || (fnp_exclude_on && fnp_exclude_has(s[i].fn))))
            bad[nbad++] = s[i].fn;
    qsort(bad, nbad, sizeof(*bad), cmp_uintptr);
    for (size_t i = 0; i < n; i++)
        if (!has_fn(bad, nbad, s[i].fn) && (s[i].addr & 63) != 63)
            s[k++] = s[i];
    free(bad);
    return k;
}

int fnp_sites_read(const struct fnp_object_view *v, struct fnp_site **sites, size_t *n, char *why,
                   size_t whylen)
{
    *sites = NULL;
    *n = 0;
    int fd = open(v->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    struct file_tables ft;
    struct list l = {0};
    uintptr_t *entries = NULL;
    ElfW(Phdr) *phdr = NULL;
    int rc = read_tables(fd, &ft);
    if (rc || (ft.sites.sh_type == SHT_NULL && ft.xray.sh_type == SHT_NULL)) {
        close(fd);
        rc = 0;
        goto out;
    }
    /* the file's program headers, only for an object with sites */
    size_t phsize = (size_t)ft.eh.e_phnum * sizeof(*phdr);
    rc = !(phdr = malloc(phsize ? phsize : 1)) || read_at(fd, phdr, phsize, (off_t)ft.eh.e_phoff);
    close(fd);
    if (rc) {
        rc = 0; /* unreadable, as before the tables were found: not patched, nothing said */
        goto out;
    }
    rc = -1;
    if (!same_loads(phdr, ft.eh.e_phnum, v)) {
        snprintf(why, whylen, "the file is not the one loaded (its program headers differ)");
        goto out;
    }
    if ((ft.sites.sh_type != SHT_NULL && (rc = read_fnprof_sites(v, &ft.sites, &l, why, whylen))) ||
        (ft.xray.sh_type != SHT_NULL && (rc = read_xray(v, &ft.xray, &l, why, whylen))))
        goto nomem;
    qsort(l.v, l.n, sizeof(*l.v), by_addr);
    size_t k = 0;
    for (size_t i = 0; i < l.n; i++)
        if (k == 0 || l.v[i].addr != l.v[k - 1].addr)
            l.v[k++] = l.v[i];
    l.n = k;
    for (size_t i = 0; i < l.n; i++)
        if ((rc = check_site(v, &l.v[i], why, whylen)))
            goto out;
    /* gcc's exits: the function whose unwind range holds them, if it has an entry site */
    if (!(entries = malloc((l.n ? l.n : 1) * sizeof(*entries))))
        goto nomem_set;
    size_t ne = 0;
    for (size_t i = 0; i < l.n; i++)
        if (l.v[i].form == FNP_SITE_NOP5_ENTRY || l.v[i].form == FNP_SITE_SLED_ENTRY)
            entries[ne++] = l.v[i].fn;
    qsort(entries, ne, sizeof(*entries), cmp_uintptr);
    struct eh_hdr h;
    int have_eh = eh_hdr_find(v, &h) == 0;
    for (size_t i = 0; i < l.n; i++)
        if (l.v[i].form == FNP_SITE_NOP5_EXIT) {
            uintptr_t fn = have_eh ? eh_function(&h, l.v[i].addr) : 0;
            l.v[i].fn = has_fn(entries, ne, fn) ? fn : 0;
        }
    l.n = drop_functions(l.v, l.n);
    *sites = l.v;
    *n = l.n;
    l.v = NULL;
    rc = 0;
    goto out;
nomem:
    if (rc != -2)
        goto out;
nomem_set:
    snprintf(why, whylen, "out of memory");
    rc = -1;
out:
    free(entries);
    free(l.v);
    free(phdr);
    return rc;
}

#else

int fnp_sites_in_file(const char *path)
{
    (void)path;
    return 0;
}

#endif
