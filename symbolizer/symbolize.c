/* SPDX-License-Identifier: MIT */
/*
 * The exported symbolizer: per module (cached by path) DWARF first, then .symtab, then
 * .dynsym, then the bare address, each fallback explained once per module and cause.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolizer.h"

/* Why a module's names fall short of DWARF: one warning per module and cause. */
enum cause {
    CAUSE_UNREADABLE = 1u << 0,  /* not an ELF file we can open */
    CAUSE_NO_DWARF = 1u << 1,    /* no debug info at all */
    CAUSE_UNSUPPORTED = 1u << 2, /* dwz, zstd, split DWARF, mismatched debug file */
    CAUSE_DAMAGED = 1u << 3,     /* libdwarf reported an error */
    CAUSE_NOT_IN_DWARF = 1u << 4,
    CAUSE_NO_SYMBOL = 1u << 5,
    CAUSE_NOMEM = 1u << 6,
};

/* Strings handed out stay put until fnp_symbolizer_free: they live in chunks never moved. */
struct chunk {
    struct chunk *next;
    size_t used, cap;
    char data[];
};

struct module {
    char *path;
    const char *shown_path; /* path as valid UTF-8 (the file of non-DWARF keys) */
    int elf_err;            /* fnp_elf_load's result for path */
    struct fnp_elf_file elf;
    struct fnp_elf_file debug_elf; /* the separate debug file DWARF came from, if any */
    char *debug_path;              /* its path (NULL: none, or no memory to keep it) */
    struct fnp_dwarf *dwarf;       /* NULL when there is none */
    int dwarf_err; /* 0, or why DWARF falls short: -ENODATA, -ENOTSUP, -EINVAL, -ENOMEM */
    char *dwarf_why;
    /* Names as shown, per fnp_dwarf_func.id and per entry of each symbol table; filled on
     * first use. */
    const char **dwarf_names;
    const char **dwarf_files;
    size_t dwarf_cap; /* entries in dwarf_names and dwarf_files */
    const char **symtab_names;
    const char **dynsym_names;
    const char **debug_names;
    unsigned warned;            /* enum cause bits already reported */
    bool mpi;                   /* fnprof's MPI wrappers (libfnprof-mpi.so): keyed ('MPI', 0) */
    struct fnp_sym_func *funcs; /* fnp_symbolizer_functions' answer, made on first use */
};

/* Where separate debug files are looked for when the caller names none (gdb's default). */
#define DEFAULT_DEBUG_DIRS "/usr/lib/debug"

struct fnp_symbolizer {
    fnp_warn_fn warn;
    void *ctx;
    char *debug_dirs; /* ':'-separated, from fnp_symbolizer_set_debug_dirs; NULL: default */
    struct module **mods;
    size_t nmods, capmods;
    struct chunk *chunks;
};

/* ---- strings ------------------------------------------------------------------------- */

static char *arena_alloc(struct fnp_symbolizer *s, size_t n)
{
    struct chunk *c = s->chunks;
    if (!c || c->cap - c->used < n) {
        size_t cap = n > 16384 ? n : 16384;
        c = malloc(sizeof *c + cap);
        if (!c)
            return NULL;
        c->used = 0;
        c->cap = cap;
        c->next = s->chunks;
        s->chunks = c;
    }
    char *p = c->data + c->used;
    c->used += n;
    return p;
}

static const char *keep(struct fnp_symbolizer *s, const char *str)
{
    size_t n = strlen(str) + 1;
    char *p = arena_alloc(s, n);
    if (p)
        memcpy(p, str, n);
    return p;
}

/* Length of the valid UTF-8 sequence at p, or 0. */
static size_t utf8_seq(const unsigned char *p)
{
    if (p[0] < 0x80)
        return 1;
    size_t n;
    uint32_t cp;
    if ((p[0] & 0xe0) == 0xc0) {
        n = 2;
        cp = p[0] & 0x1f;
    } else if ((p[0] & 0xf0) == 0xe0) {
        n = 3;
        cp = p[0] & 0x0f;
    } else if ((p[0] & 0xf8) == 0xf0) {
        n = 4;
        cp = p[0] & 0x07;
    } else {
        return 0;
    }
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (p[i] & 0x3f);
    }
    static const uint32_t min[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

/* pstats keys are Python str: bytes that are not UTF-8 become U+FFFD. Returns str itself when
 * it is valid, else a cleaned copy in the arena; NULL when memory ran out. */
static const char *utf8_clean(struct fnp_symbolizer *s, const char *str)
{
    const unsigned char *p = (const unsigned char *)str;
    size_t bad = 0, len = 0;
    while (p[len]) {
        size_t n = utf8_seq(p + len);
        bad += n == 0;
        len += n ? n : 1;
    }
    if (!bad)
        return str;
    char *out = arena_alloc(s, len + bad * 2 + 1);
    if (!out)
        return NULL;
    char *o = out;
    for (size_t i = 0; i < len;) {
        size_t n = utf8_seq(p + i);
        if (n) {
            memcpy(o, p + i, n);
            o += n;
            i += n;
        } else {
            memcpy(o, "\xef\xbf\xbd", 3);
            o += 3;
            i++;
        }
    }
    *o = '\0';
    return out;
}

/* The demangled form of a "_Z" name in the arena; NULL if name is not one or memory ran out
 * (*nomem tells which). */
static const char *demangled(struct fnp_symbolizer *s, const char *name, bool *nomem)
{
    /* and gcc's _GLOBAL__sub_I_<symbol> (demangle.c) */
    if ((name[0] != '_' || name[1] != 'Z') && strncmp(name, "_GLOBAL__sub_", 13) != 0)
        return NULL;
    char *d = fnp_demangle(name);
    if (!d) {
        *nomem = true;
        return NULL;
    }
    const char *out = NULL;
    if (strcmp(d, name) != 0) { /* an invalid mangling comes back unchanged */
        out = keep(s, d);
        if (!out)
            *nomem = true;
    }
    free(d);
    return out;
}

/* ---- modules ------------------------------------------------------------------------- */

__attribute__((format(printf, 4, 5))) static void warn(struct fnp_symbolizer *s, struct module *m,
                                                       unsigned cause, const char *fmt, ...)
{
    if (m->warned & cause)
        return;
    m->warned |= cause;
    if (!s->warn)
        return;
    char what[PATH_MAX + 256], line[2 * PATH_MAX + 256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(line, sizeof line, "%s: %s", m->shown_path ? m->shown_path : "?", what);
    s->warn(s->ctx, line);
}

static bool same_build_id(const struct fnp_elf_file *a, const struct fnp_elf_file *b)
{
    return a->build_id_len == b->build_id_len &&
           memcmp(a->build_id, b->build_id, a->build_id_len) == 0;
}

static void set_dwarf_err(struct module *m, int err, const char *why)
{
    m->dwarf_err = err;
    free(m->dwarf_why);
    m->dwarf_why = why && why[0] ? strdup(why) : NULL;
}

/* The search for a separate debug file, as gdb and elfutils do it. */
struct debug_search {
    const struct fnp_elf_file *elf; /* the module's */
    char found[PATH_MAX];           /* the file that matched */
    char mismatch[PATH_MAX + 64];   /* the first candidate refused, and why */
};

/* Whether the file at path is the module's debug file: its build-id, when the module has
 * one, is the module's; found through .gnu_debuglink, its CRC32 is the one recorded. A
 * candidate that exists and fails is noted: a stale debug file deserves a warning. */
static bool try_debug_file(struct debug_search *q, const char *path, bool by_link,
                           struct fnp_elf_file *out)
{
    if (access(path, F_OK) != 0)
        return false;
    const char *why = NULL;
    if (by_link) {
        uint32_t crc = 0;
        if (fnp_elf_crc32(path, &crc) != 0)
            return false;
        if (crc != q->elf->debuglink_crc)
            why = "its CRC32 is not the one .gnu_debuglink records";
    }
    int err = why ? 0 : fnp_elf_load(path, out);
    if (!why && err == 0 && !(out->flags & FNP_ELF_DEBUG_INFO))
        why = "it has no DWARF";
    else if (!why && err == 0 && (q->elf->flags & FNP_ELF_BUILD_ID) && !same_build_id(q->elf, out))
        why = "its build-id is not the module's";
    else if (!why && err)
        why = err == -ENOEXEC ? "it is not a readable ELF file" : strerror(-err);
    if (why) {
        fnp_elf_free(out);
        if (!q->mismatch[0])
            snprintf(q->mismatch, sizeof q->mismatch, "%s: %s", path, why);
        return false;
    }
    snprintf(q->found, sizeof q->found, "%s", path);
    return true;
}

/* Looks for the debug file of a module without DWARF of its own, in gdb's order: by build-id
 * under each debug dir, then the .gnu_debuglink name beside the module, in its .debug/
 * subfolder, and under each debug dir followed by the module's folder. */
static bool find_debug_file(const struct fnp_symbolizer *s, const struct module *m,
                            struct debug_search *q, struct fnp_elf_file *out)
{
    const struct fnp_elf_file *e = &m->elf;
    const char *dirs = s->debug_dirs ? s->debug_dirs : DEFAULT_DEBUG_DIRS;
    char path[PATH_MAX], real[PATH_MAX];
    if ((e->flags & FNP_ELF_BUILD_ID) && e->build_id_len >= 2) {
        char hex[2 * sizeof e->build_id + 1];
        for (uint32_t i = 0; i < e->build_id_len; i++)
            snprintf(hex + 2 * i, 3, "%02x", e->build_id[i]);
        for (const char *d = dirs; *d;) {
            size_t dl = strcspn(d, ":");
            if (dl &&
                snprintf(path, sizeof path, "%.*s/.build-id/%.2s/%s.debug", (int)dl, d, hex,
                         hex + 2) < (int)sizeof path &&
                try_debug_file(q, path, false, out))
                return true;
            d += dl + (d[dl] == ':');
        }
    }
    if (!(e->flags & FNP_ELF_DEBUGLINK))
        return false;
    /* The module's own folder, symlinks resolved as the loader saw the file. */
    if (!realpath(m->path, real))
        snprintf(real, sizeof real, "%s", m->path);
    char *slash = strrchr(real, '/');
    const char *dir = slash ? real : ".";
    if (slash)
        *slash = '\0';
    const char *link = e->debuglink;
    if (snprintf(path, sizeof path, "%s/%s", dir, link) < (int)sizeof path &&
        strcmp(path, m->path) != 0 && try_debug_file(q, path, true, out))
        return true;
    if (snprintf(path, sizeof path, "%s/.debug/%s", dir, link) < (int)sizeof path &&
        try_debug_file(q, path, true, out))
        return true;
    for (const char *d = dirs; *d;) {
        size_t dl = strcspn(d, ":");
        if (dl &&
            snprintf(path, sizeof path, "%.*s%s/%s", (int)dl, d, dir, link) < (int)sizeof path &&
            try_debug_file(q, path, true, out))
            return true;
        d += dl + (d[dl] == ':');
    }
    return false;
}

static void load_dwarf(struct fnp_symbolizer *s, struct module *m)
{
    char msg[PATH_MAX + 128];
    const char *path = m->path;
    uint32_t flags = m->elf.flags;
    struct debug_search q = {.elf = &m->elf};
    if (!(m->elf.flags & FNP_ELF_DEBUG_INFO)) {
        if (find_debug_file(s, m, &q, &m->debug_elf)) {
            path = q.found;
            m->debug_path = strdup(q.found);
            flags = m->debug_elf.flags;
        } else if (q.mismatch[0]) {
            snprintf(msg, sizeof msg, "separate debug file refused (%s)", q.mismatch);
            set_dwarf_err(m, -ENOTSUP, msg);
            return;
        } else if (m->elf.flags & FNP_ELF_DEBUGLINK) {
            set_dwarf_err(m, -ENODATA, "the debug file its .gnu_debuglink names was not found");
            return;
        } else {
            set_dwarf_err(m, -ENODATA, NULL);
            return;
        }
    }
    /* This libdwarf reads neither dwz supplementary files nor zstd (docs/symbols.md, trap 9):
     * say so instead of reporting whatever it makes of them. */
    if (flags & FNP_ELF_DEBUGALTLINK) {
        set_dwarf_err(m, -ENOTSUP,
                      "DWARF in a dwz supplementary file (.gnu_debugaltlink) is "
                      "not supported");
        return;
    }
    if (flags & FNP_ELF_ZSTD_DEBUG) {
        set_dwarf_err(m, -ENOTSUP, "zstd-compressed debug sections are not supported");
        return;
    }
    if (flags & FNP_ELF_BAD_LISTS) {
        set_dwarf_err(m, -EINVAL, "a .debug_rnglists or .debug_loclists header is damaged");
        return;
    }
    int r = fnp_dwarf_open(path, &m->dwarf, msg, sizeof msg);
    if (m->dwarf)
        fnp_dwarf_set_lines(m->dwarf, path == m->path ? &m->elf : &m->debug_elf);
    if (r)
        set_dwarf_err(m, r, msg);
}

static void module_free(struct module *m)
{
    if (!m)
        return;
    fnp_elf_free(&m->elf);
    fnp_elf_free(&m->debug_elf);
    free(m->debug_path);
    fnp_dwarf_close(m->dwarf);
    free(m->dwarf_names);
    free(m->dwarf_files);
    free(m->symtab_names);
    free(m->dynsym_names);
    free(m->debug_names);
    free(m->funcs);
    free(m->dwarf_why);
    free(m->path);
    free(m);
}

static struct module *module_get(struct fnp_symbolizer *s, const char *path)
{
    for (size_t i = 0; i < s->nmods; i++)
        if (strcmp(s->mods[i]->path, path) == 0)
            return s->mods[i];
    if (s->nmods == s->capmods) {
        size_t cap = s->capmods ? s->capmods * 2 : 8;
        struct module **mods = reallocarray(s->mods, cap, sizeof *mods);
        if (!mods)
            return NULL;
        s->mods = mods;
        s->capmods = cap;
    }
    struct module *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->path = strdup(path);
    if (!m->path || !(m->shown_path = utf8_clean(s, m->path))) {
        module_free(m);
        return NULL;
    }
    const char *base = strrchr(m->path, '/');
    base = base ? base + 1 : m->path;
    m->mpi = strncmp(base, FNP_MPI_LIBRARY, strlen(FNP_MPI_LIBRARY)) == 0 ||
             strncmp(base, FNP_MPICH_LIBRARY, strlen(FNP_MPICH_LIBRARY)) == 0;
    m->elf_err = fnp_elf_load(path, &m->elf);
    if (m->elf_err == -ENOMEM) {
        module_free(m); /* not cached: a later call may find memory */
        return NULL;
    }
    if (m->elf_err == 0)
        load_dwarf(s, m);
    s->mods[s->nmods++] = m;
    return m;
}

/* ---- one address --------------------------------------------------------------------- */

/* The symbol table that stands for .symtab: the module's, else its separate debug file's. */
static const struct fnp_elf_syms *symtab_of(const struct module *m)
{
    return m->elf.symtab.n ? &m->elf.symtab : &m->debug_elf.symtab;
}

static const char ***names_of(struct module *m, const struct fnp_elf_syms *t)
{
    if (t == &m->elf.symtab)
        return &m->symtab_names;
    if (t == &m->debug_elf.symtab)
        return &m->debug_names;
    return &m->dynsym_names;
}

static const char *elf_name(struct fnp_symbolizer *s, const struct fnp_elf_syms *t,
                            const char ***cache, const struct fnp_elf_sym *sym, bool *nomem)
{
    size_t i = (size_t)(sym - t->v);
    if (!*cache)
        *cache = calloc(t->n, sizeof **cache);
    if (*cache && (*cache)[i])
        return (*cache)[i];
    const char *name = demangled(s, sym->name, nomem);
    if (!name)
        name = sym->name;
    name = utf8_clean(s, name);
    if (!name)
        *nomem = true;
    else if (*cache)
        (*cache)[i] = name;
    return name;
}

/* Makes room in the per-function caches for id i; false when memory ran out. */
static bool cache_room(struct module *m, size_t i)
{
    if (i < m->dwarf_cap)
        return true;
    size_t cap = m->dwarf_cap ? m->dwarf_cap : 256;
    while (cap <= i)
        cap *= 2;
    const char **names = reallocarray(m->dwarf_names, cap, sizeof *names);
    if (names)
        m->dwarf_names = names;
    const char **files = reallocarray(m->dwarf_files, cap, sizeof *files);
    if (files)
        m->dwarf_files = files;
    if (!names || !files)
        return false;
    memset(names + m->dwarf_cap, 0, (cap - m->dwarf_cap) * sizeof *names);
    memset(files + m->dwarf_cap, 0, (cap - m->dwarf_cap) * sizeof *files);
    m->dwarf_cap = cap;
    return true;
}

/* C++: the demangled linkage name carries parameter types, so overloads stay distinct keys.
 * gcc gives no linkage name for internal linkage (trap 7); the .symtab name at the entry
 * address is then the same mangled name. C: the DWARF name (scope-qualified). */
static const char *dwarf_name(struct fnp_symbolizer *s, struct module *m,
                              const struct fnp_dwarf_func *f, uint64_t addr, bool *nomem)
{
    size_t i = f->id;
    bool cached = cache_room(m, i);
    if (cached && m->dwarf_names[i])
        return m->dwarf_names[i];

    const char *name = f->linkage ? demangled(s, f->linkage, nomem) : NULL;
    const struct fnp_elf_sym *sym = NULL;
    if (!name && !f->linkage) {
        const struct fnp_elf_syms *t = symtab_of(m);
        sym = fnp_elf_find(t, addr);
        if (sym && sym->addr == addr)
            name = demangled(s, sym->name, nomem);
    }
    if (!name) /* DWARF's strings move when more units are indexed: keep a copy */
        name = f->name ? keep(s, f->name) : f->linkage ? keep(s, f->linkage) : NULL;
    if (!name && sym)
        name = sym->name;
    if (!name)
        return NULL;
    name = utf8_clean(s, name);
    if (!name)
        *nomem = true;
    else if (cached)
        m->dwarf_names[i] = name;
    return name;
}

static const char *dwarf_file(struct fnp_symbolizer *s, struct module *m,
                              const struct fnp_dwarf_func *f, bool *nomem)
{
    if (!f->file)
        return NULL;
    size_t i = f->id;
    bool cached = cache_room(m, i);
    if (cached && m->dwarf_files[i])
        return m->dwarf_files[i];
    const char *file = keep(s, f->file);
    if (file)
        file = utf8_clean(s, file);
    if (!file)
        *nomem = true;
    else if (cached)
        m->dwarf_files[i] = file;
    return file;
}

/* "libfoo.so+0x1234": the module's file name and the offset, for an address no symbol
 * holds. The module's full path is the key's file. */
static const char *address_name(struct fnp_symbolizer *s, const struct module *m, uint64_t addr,
                                bool *nomem)
{
    const char *base = strrchr(m->shown_path, '/');
    base = base ? base + 1 : m->shown_path;
    char buf[NAME_MAX * 3 + 24];
    snprintf(buf, sizeof buf, "%s+0x%" PRIx64, base, addr);
    const char *name = keep(s, buf);
    if (!name)
        *nomem = true;
    return name ? name : "?";
}

static unsigned dwarf_cause(const struct module *m)
{
    switch (m->dwarf_err) {
    case 0:
        return CAUSE_NOT_IN_DWARF;
    case -ENODATA:
        return CAUSE_NO_DWARF;
    case -ENOTSUP:
        return CAUSE_UNSUPPORTED;
    case -ENOMEM:
        return CAUSE_NOMEM;
    default:
        return CAUSE_DAMAGED;
    }
}

static void warn_no_dwarf(struct fnp_symbolizer *s, struct module *m)
{
    unsigned cause = dwarf_cause(m);
    switch (cause) {
    case CAUSE_NOT_IN_DWARF:
        warn(s, m, cause,
             "some functions have no DWARF debug info; names from the ELF symbol "
             "table");
        break;
    case CAUSE_NO_DWARF:
        if (m->dwarf_why)
            warn(s, m, cause, "no DWARF debug info (%s); names from the ELF symbol table",
                 m->dwarf_why);
        else
            warn(s, m, cause, "no DWARF debug info; names from the ELF symbol table");
        break;
    case CAUSE_UNSUPPORTED:
        warn(s, m, cause, "%s; names from the ELF symbol table",
             m->dwarf_why ? m->dwarf_why : "unsupported DWARF");
        break;
    case CAUSE_NOMEM:
        warn(s, m, cause, "out of memory reading DWARF; names from the ELF symbol table");
        break;
    default:
        warn(s, m, cause, "damaged DWARF (%s); names from the ELF symbol table where it fails",
             m->dwarf_why ? m->dwarf_why : "libdwarf error");
        break;
    }
}

static void resolve_one(struct fnp_symbolizer *s, struct module *m, uint64_t addr,
                        struct fnp_symbol *out, bool *nomem)
{
    out->file = m->shown_path;
    out->line = 0;
    if (m->elf_err) {
        warn(s, m, CAUSE_UNREADABLE, "%s; functions named by address",
             m->elf_err == -ENOEXEC ? "not a readable ELF file" : strerror(-m->elf_err));
        goto none;
    }
    /* DWARF that is partly damaged (or partly split) still names what it can: say once that
     * the rest falls back. */
    if (m->dwarf_err && m->dwarf)
        warn_no_dwarf(s, m);
    const struct fnp_dwarf_func *f = m->dwarf ? fnp_dwarf_find(m->dwarf, addr) : NULL;
    if (m->dwarf && !m->dwarf_err) {
        /* Resolving f read more DWARF: damage found there explains what falls back. */
        char msg[256];
        int r = fnp_dwarf_take_error(m->dwarf, msg, sizeof msg);
        if (r == -ENOMEM)
            *nomem = true;
        else if (r)
            set_dwarf_err(m, r, msg);
    }
    if (f) {
        const char *name = dwarf_name(s, m, f, addr, nomem);
        const char *file = dwarf_file(s, m, f, nomem);
        out->name = name ? name : address_name(s, m, addr, nomem);
        out->file = file ? file : m->shown_path;
        out->line = f->line;
        out->source = FNP_SYM_DWARF;
        return;
    }
    warn_no_dwarf(s, m);

    const struct fnp_elf_syms *t = symtab_of(m);
    const struct fnp_elf_sym *sym = fnp_elf_find(t, addr);
    uint32_t source = FNP_SYM_SYMTAB;
    if (!sym) {
        t = &m->elf.dynsym;
        sym = fnp_elf_find(t, addr);
        source = FNP_SYM_DYNSYM;
    }
    if (sym) {
        const char *name = elf_name(s, t, names_of(m, t), sym, nomem);
        if (name) {
            out->name = name;
            out->source = source;
            return;
        }
    } else {
        warn(s, m, CAUSE_NO_SYMBOL, "some functions are in no symbol table; named by address");
    }
none:
    out->name = address_name(s, m, addr, nomem);
    out->source = FNP_SYM_NONE;
}

/* ---- API ----------------------------------------------------------------------------- */

struct fnp_symbolizer *fnp_symbolizer_new(fnp_warn_fn warn_fn, void *ctx)
{
    struct fnp_symbolizer *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->warn = warn_fn;
    s->ctx = ctx;
    return s;
}

int fnp_symbolizer_resolve(struct fnp_symbolizer *s, const char *module_path, const uint64_t *addrs,
                           size_t n, struct fnp_symbol *out)
{
    struct module *m = module_path ? module_get(s, module_path) : NULL;
    bool nomem = module_path && !m;
    if (m && m->dwarf) {
        /* Index the units these addresses need, all at once (dwarf.c is lazy). */
        char msg[256];
        int r = fnp_dwarf_prepare(m->dwarf, addrs, n, msg, sizeof msg);
        if (r == -ENOMEM)
            nomem = true;
        else if (r && !m->dwarf_err)
            set_dwarf_err(m, r, msg);
    }
    for (size_t i = 0; i < n; i++) {
        if (!m) {
            /* No module record to own strings: static ones are valid for as long. */
            out[i] = (struct fnp_symbol){"?", "?", 0, FNP_SYM_NONE};
            continue;
        }
        resolve_one(s, m, addrs[i], &out[i], &nomem);
        /* An MPI function is the MPI library's, whoever built the wrapper and wherever it is
         * installed: the same key on every machine, rank and fnprof build, so that ranks'
         * profiles merge; the wrappers' source file would be the build machine's path. */
        if (m->mpi) {
            out[i].file = FNP_MPI_FILE;
            out[i].line = 0;
        }
    }
    if (nomem && m)
        warn(s, m, CAUSE_NOMEM, "out of memory; names degraded");
    return nomem ? -ENOMEM : 0;
}

int fnp_symbolizer_functions(struct fnp_symbolizer *s, const char *module_path,
                             const struct fnp_sym_func **out, size_t *n, int *calls_hooks)
{
    *out = NULL;
    *n = 0;
    *calls_hooks = 0;
    struct module *m = module_get(s, module_path);
    if (!m)
        return -ENOMEM;
    if (m->elf_err)
        return m->elf_err == -ENOMEM ? -ENOMEM : -ENOENT;
    *calls_hooks = m->elf.symtab.calls_hooks | m->elf.dynsym.calls_hooks;
    const struct fnp_elf_syms *t = symtab_of(m);
    if (!t->n)
        t = &m->elf.dynsym;
    if (!m->funcs) {
        if (!(m->funcs = malloc((t->n ? t->n : 1) * sizeof(*m->funcs))))
            return -ENOMEM;
        for (size_t i = 0; i < t->n; i++)
            m->funcs[i] = (struct fnp_sym_func){t->v[i].addr, t->v[i].name};
    }
    *out = m->funcs;
    *n = t->n;
    return 0;
}

int fnp_symbolizer_set_debug_dirs(struct fnp_symbolizer *s, const char *dirs)
{
    char *copy = NULL;
    if (dirs && !(copy = strdup(dirs)))
        return -ENOMEM;
    free(s->debug_dirs);
    s->debug_dirs = copy;
    return 0;
}

int fnp_symbolizer_debug_info(struct fnp_symbolizer *s, const char *module_path, char *where,
                              size_t where_len, char *why, size_t why_len)
{
    if (where_len)
        where[0] = '\0';
    if (why_len)
        why[0] = '\0';
    struct module *m = module_get(s, module_path);
    if (!m)
        return -ENOMEM;
    if (m->elf_err)
        return m->elf_err;
    if (m->dwarf_why && why_len)
        snprintf(why, why_len, "%s", m->dwarf_why);
    /* What resolve would do: no DWARF object, or one it refuses (dwz, zstd), is none. */
    if (!m->dwarf || m->dwarf_err == -ENOTSUP || m->dwarf_err == -ENODATA)
        return FNP_DEBUG_NONE;
    bool separate = m->debug_path != NULL;
    if (where_len)
        snprintf(where, where_len, "%s", separate ? m->debug_path : m->path);
    return separate ? FNP_DEBUG_SEPARATE : FNP_DEBUG_IN_FILE;
}

void fnp_symbolizer_free(struct fnp_symbolizer *s)
{
    if (!s)
        return;
    free(s->debug_dirs);
    for (size_t i = 0; i < s->nmods; i++)
        module_free(s->mods[i]);
    free(s->mods);
    while (s->chunks) {
        struct chunk *next = s->chunks->next;
        free(s->chunks);
        s->chunks = next;
    }
    free(s);
}
