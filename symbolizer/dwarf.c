/* SPDX-License-Identifier: MIT */
/*
 * DWARF functions: [lo, hi) -> (qualified name, decl file, decl line). The one file that calls
 * libdwarf (20210528: see docs/symbols.md for its API and traps), so a port is one file's work.
 *
 * One walk over every compilation unit records each DW_TAG_subprogram of the unit, with the
 * namespaces and classes around it (there is no parent navigation: trap 6), then, at the end
 * of the unit, follows DW_AT_specification/DW_AT_abstract_origin chains for the ones with
 * code. Only those have their attributes read during the walk; the others (declarations,
 * abstract instances) when a chain reaches them. Chains leaving the unit (LTO) are read with
 * dwarf_offdie_b. Every string is copied out, so the index outlives dwarf_finish.
 */
#include <dwarf.h>
#include <errno.h>
#include <libdwarf.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolizer.h"

/* Deeper DIE trees are damaged input (a real one nests namespaces, classes and blocks a few
 * dozen levels at most); the bound keeps the recursion's stack small. */
#define MAX_DEPTH 128
/* A specification/abstract_origin chain is 1-3 hops (clone -> abstract -> declaration); the
 * bound stops cycles in damaged input. */
#define MAX_CHAIN 16

/* Strings while indexing: offsets into one buffer; offset 0 is "" and means "none". */
struct strbuf {
    char *p;
    size_t len, cap;
};

/* Interned strings (files), an open-addressing set of strbuf offsets. */
struct strset {
    size_t *slot; /* 0 = empty */
    size_t cap, n;
};

/* Entry addresses already indexed, an open-addressing set (0 = empty: never an entry). */
struct addrset {
    uint64_t *slot;
    size_t cap, n;
};

/* Attributes of one DIE. Strings are borrowed from libdwarf until dwarf_finish. */
struct attrs {
    const char *name, *linkage;
    Dwarf_Off ref;            /* DW_AT_specification or DW_AT_abstract_origin target, 0 when none */
    Dwarf_Off object_pointer; /* DW_AT_object_pointer: the "this" parameter, 0 when none */
    Dwarf_Unsigned file;
    uint32_t line;
    bool has_file, has_line, has_low, has_high;
    Dwarf_Attribute ranges; /* kept only when asked for; the caller deallocates it */
};

/* One DW_TAG_subprogram of the unit being walked. */
struct rec {
    Dwarf_Off off;
    struct attrs a;
    uint32_t scope;     /* index into walker.scopes */
    size_t file_str;    /* resolved decl file, for a DIE read from another unit */
    bool foreign;       /* read with dwarf_offdie_b: scope unknown, file_str set */
    bool file_resolved; /* file_str valid */
    bool lazy;          /* attributes not read yet: read when a chain leads here */
};

/* A namespace or type enclosing subprograms. scopes[0] is the unit itself. */
struct scope {
    uint32_t parent;
    Dwarf_Half tag;
    const char *name;
    Dwarf_Off off;
    bool decl_read; /* file and line below read (only the lambda fallback needs them) */
    Dwarf_Unsigned file;
    uint32_t line;
    bool has_file, has_line;
};

struct pending {
    uint64_t lo, hi;
    size_t rec;
};

/* The file table of one unit, each entry normalised and interned on first use. */
struct cu_files {
    Dwarf_Off cu_off;
    bool loaded;
    char **files;
    Dwarf_Signed n;
    Dwarf_Signed base; /* DWARF 5 tables start at 0, older ones at 1 (trap 3) */
    size_t *str;       /* interned strbuf offset per entry, 0 = not yet */
};

/* A function with code. Its name, file and line are resolved when first looked up: a profile
 * asks for a few of the functions in the units it touches, and following DW_AT_specification
 * chains costs as much as the walk itself. */
struct build_func {
    size_t name, linkage, file; /* strbuf offsets, valid once resolved */
    uint32_t line;
    bool resolved;
    uint32_t unit;  /* index into fnp_dwarf.units */
    uint32_t scope; /* index into walker.scopes */
    Dwarf_Off off;
    struct attrs a; /* the DIE's own attributes; strings borrowed until dwarf_finish */
};

/* [lo, hi) of one function; a function may have several (trap 5). */
struct frange {
    uint64_t lo, hi;
    size_t func; /* index into walker.funcs */
};

struct walker {
    Dwarf_Debug dbg;
    const struct fnp_elf_file *elf; /* line table versions, or NULL */
    /* the unit being walked */
    Dwarf_Die cu_die;
    Dwarf_Off cu_off;
    bool in_cu; /* cu_off is valid */
    Dwarf_Half version;
    Dwarf_Addr cu_base;
    bool c_only;    /* C units: no member functions, so type bodies need no walk */
    bool deep;      /* walk nested DIEs too (see fnp_dwarf_prepare) */
    uint32_t unit;  /* index into fnp_dwarf.units of the unit being walked */
    size_t cu_file; /* interned primary source file, 0 = not computed */
    bool cu_file_done;
    struct rec *recs; /* in DIE order, which is offset order: binary search by off */
    size_t nrecs, caprecs;
    struct scope *scopes;
    size_t nscopes, capscopes;
    struct pending *pend;
    size_t npend, cappend;
    struct cu_files *files;  /* this unit's (each unit keeps its table once loaded) */
    struct cu_files scratch; /* the files of a unit not in fnp_dwarf.units */
    size_t ctx_unit;         /* the unit whose context (cu_die...) is set for lookups */
    struct cu_files foreign; /* the last other unit a chain led into */
    /* results */
    struct strbuf str;
    struct strset interned;
    struct addrset entries;
    struct addrset starts; /* the lo of every range indexed: which asked addresses are done */
    struct build_func *funcs;
    size_t nfuncs, capfuncs;
    struct frange *ranges;
    size_t nranges, capranges;
    size_t skeletons;
    bool oom;
    int err; /* first damage seen: -EINVAL with msg */
    char msg[256];
};

/* A compilation unit: where it is, and how far it has been walked. */
struct unit {
    Dwarf_Off off;
    struct cu_files files; /* its file table, loaded on first need */
    Dwarf_Half version;
    uint8_t walked; /* 0 not yet, 1 shallow, 2 deep */
    bool unbounded; /* no usable ranges: walked as soon as anything is asked */
};

/* One address range of a unit, from its DIE's low_pc/high_pc or DW_AT_ranges. */
struct urange {
    uint64_t lo, hi;
    uint64_t max_hi; /* the largest hi of this and every earlier entry (sorted by lo) */
    size_t unit;
};

struct fnp_dwarf {
    Dwarf_Debug dbg;
    struct unit *units;
    size_t nunits, capunits;
    struct urange *uranges;
    size_t nuranges, capuranges;
    size_t walked;
    struct walker w;
    bool stale;                /* w.ranges unsorted */
    Dwarf_Die ctx_die;         /* the CU DIE of w.ctx_unit, for lookups */
    struct fnp_dwarf_func cur; /* what fnp_dwarf_find returned last */
    bool err_reported;         /* w.err already returned once */
};

/* ---- small helpers ------------------------------------------------------------------- */

static bool grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return true;
    size_t n = *cap ? *cap : 16;
    while (n < need)
        n *= 2;
    void *q = reallocarray(*p, n, size);
    if (!q)
        return false;
    *p = q;
    *cap = n;
    return true;
}

#define GROW(w, arr, cap, need)                                                                    \
    (grow((void **)&(arr), &(cap), (need), sizeof *(arr)) || ((w)->oom = true, false))

static void drop_error(Dwarf_Debug dbg, Dwarf_Error *e)
{
    if (*e) {
        dwarf_dealloc(dbg, *e, DW_DLA_ERROR);
        *e = NULL;
    }
}

static void set_msg(char *msg, size_t len, const char *fmt, ...)
{
    if (!len)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, len, fmt, ap);
    va_end(ap);
}

/* Keeps the first damage report; later ones are usually its echoes. */
static void note_error(struct walker *w, Dwarf_Error *e, const char *what)
{
    if (!w->err) {
        w->err = -EINVAL;
        const char *why = *e ? dwarf_errmsg(*e) : "damaged";
        if (w->in_cu)
            set_msg(w->msg, sizeof w->msg, "%s in the unit at 0x%llx: %s", what,
                    (unsigned long long)w->cu_off, why ? why : "damaged");
        else
            set_msg(w->msg, sizeof w->msg, "%s: %s", what, why ? why : "damaged");
    }
    drop_error(w->dbg, e);
}

static size_t sb_add(struct walker *w, const char *s, size_t n)
{
    if (!GROW(w, w->str.p, w->str.cap, w->str.len + n + 1))
        return 0;
    size_t off = w->str.len;
    memcpy(w->str.p + off, s, n);
    w->str.p[off + n] = '\0';
    w->str.len += n + 1;
    return off;
}

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* lo's home slot in a set of cap slots (a power of two). */
static size_t addr_home(uint64_t lo, size_t cap)
{
    return (size_t)(lo * 0x9e3779b97f4a7c15ull >> 20) & (cap - 1);
}

/* Adds lo to the set; false when it was there already. */
static bool add_to(struct walker *w, struct addrset *t, uint64_t lo)
{
    if ((t->n + 1) * 2 > t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 1024;
        uint64_t *slot = calloc(cap, sizeof *slot);
        if (!slot) {
            w->oom = true;
            return true;
        }
        for (size_t i = 0; i < t->cap; i++) {
            if (!t->slot[i])
                continue;
            size_t j = addr_home(t->slot[i], cap);
            while (slot[j])
                j = (j + 1) & (cap - 1);
            slot[j] = t->slot[i];
        }
        free(t->slot);
        t->slot = slot;
        t->cap = cap;
    }
    size_t j = addr_home(lo, t->cap);
    while (t->slot[j]) {
        if (t->slot[j] == lo)
            return false;
        j = (j + 1) & (t->cap - 1);
    }
    t->slot[j] = lo;
    t->n++;
    return true;
}

static bool has(const struct addrset *t, uint64_t lo)
{
    if (!t->cap || !lo)
        return false;
    size_t j = addr_home(lo, t->cap);
    for (; t->slot[j]; j = (j + 1) & (t->cap - 1))
        if (t->slot[j] == lo)
            return true;
    return false;
}

/* Returns the offset of a copy of s, shared with earlier equal strings; 0 when out of memory. */
static size_t intern(struct walker *w, const char *s)
{
    struct strset *t = &w->interned;
    if ((t->n + 1) * 2 > t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        size_t *slot = calloc(cap, sizeof *slot);
        if (!slot) {
            w->oom = true;
            return 0;
        }
        for (size_t i = 0; i < t->cap; i++) {
            if (!t->slot[i])
                continue;
            size_t j = hash_str(w->str.p + t->slot[i]) & (cap - 1);
            while (slot[j])
                j = (j + 1) & (cap - 1);
            slot[j] = t->slot[i];
        }
        free(t->slot);
        t->slot = slot;
        t->cap = cap;
    }
    size_t j = hash_str(s) & (t->cap - 1);
    while (t->slot[j]) {
        if (strcmp(w->str.p + t->slot[j], s) == 0)
            return t->slot[j];
        j = (j + 1) & (t->cap - 1);
    }
    size_t off = sb_add(w, s, strlen(s));
    if (off) {
        t->slot[j] = off;
        t->n++;
    }
    return off;
}

void fnp_dwarf_normalize_path(char *path)
{
    bool abs = path[0] == '/';
    char *base = path + abs;
    /* Writing never overtakes reading: every segment after the first follows a '/' that is
     * not copied before it, so the '/' written ahead of a segment lands before its start. */
    char *out = base;
    size_t floor = 0; /* the leading "../.." a relative path keeps */
    const char *in = path;
    while (*in) {
        while (*in == '/')
            in++;
        const char *seg = in;
        size_t len = strcspn(in, "/");
        in += len;
        if (len == 0 || (len == 1 && seg[0] == '.'))
            continue;
        if (len == 2 && seg[0] == '.' && seg[1] == '.') {
            if ((size_t)(out - base) > floor) {
                while (out > base && out[-1] != '/')
                    out--;
                if (out > base)
                    out--;
                continue;
            }
            if (abs)
                continue; /* "/.." is "/" */
        }
        if (out > base)
            *out++ = '/';
        memmove(out, seg, len);
        out += len;
        if (len == 2 && seg[0] == '.' && seg[1] == '.')
            floor = (size_t)(out - base);
    }
    if (out == base && !abs)
        *out++ = '.';
    *out = '\0';
}

/* Joins dir and name (when name is relative), normalises, interns. */
static size_t intern_path(struct walker *w, const char *dir, const char *name)
{
    size_t dl = name[0] != '/' && dir && dir[0] ? strlen(dir) : 0;
    size_t nl = strlen(name);
    char *buf = malloc(dl + nl + 2);
    if (!buf) {
        w->oom = true;
        return 0;
    }
    if (dl) {
        memcpy(buf, dir, dl);
        buf[dl] = '/';
        memcpy(buf + dl + 1, name, nl + 1);
    } else {
        memcpy(buf, name, nl + 1);
    }
    fnp_dwarf_normalize_path(buf);
    size_t off = intern(w, buf);
    free(buf);
    return off;
}

/* ---- attributes ---------------------------------------------------------------------- */

static bool read_unsigned(Dwarf_Debug dbg, Dwarf_Attribute at, Dwarf_Unsigned *out)
{
    Dwarf_Error e = NULL;
    Dwarf_Half form = 0;
    if (dwarf_whatform(at, &form, &e) != DW_DLV_OK) {
        drop_error(dbg, &e);
        return false;
    }
    /* gcc 11+ writes decl_file/decl_line as DW_FORM_implicit_const, which dwarf_formudata
     * rejects (trap 1). */
    if (form == DW_FORM_implicit_const || form == DW_FORM_sdata) {
        Dwarf_Signed v = 0;
        if (dwarf_formsdata(at, &v, &e) != DW_DLV_OK || v < 0) {
            drop_error(dbg, &e);
            return false;
        }
        *out = (Dwarf_Unsigned)v;
        return true;
    }
    if (dwarf_formudata(at, out, &e) != DW_DLV_OK) {
        drop_error(dbg, &e);
        return false;
    }
    return true;
}

static const char *read_string(Dwarf_Debug dbg, Dwarf_Attribute at)
{
    Dwarf_Error e = NULL;
    char *s = NULL;
    if (dwarf_formstring(at, &s, &e) != DW_DLV_OK) {
        drop_error(dbg, &e);
        return NULL;
    }
    return s && s[0] ? s : NULL;
}

/* Reads what a subprogram or scope DIE says about itself. A damaged attribute reads as
 * absent: one bad value must not cost the whole unit. */
static void read_attrs(Dwarf_Debug dbg, Dwarf_Die die, struct attrs *a, bool keep_ranges)
{
    memset(a, 0, sizeof *a);
    Dwarf_Error e = NULL;
    Dwarf_Attribute *list = NULL;
    Dwarf_Signed n = 0;
    if (dwarf_attrlist(die, &list, &n, &e) != DW_DLV_OK) {
        drop_error(dbg, &e);
        return;
    }
    for (Dwarf_Signed i = 0; i < n; i++) {
        Dwarf_Half num = 0;
        if (dwarf_whatattr(list[i], &num, &e) != DW_DLV_OK) {
            drop_error(dbg, &e);
            num = 0;
        }
        Dwarf_Unsigned v = 0;
        Dwarf_Off off = 0;
        switch (num) {
        case DW_AT_name:
            a->name = read_string(dbg, list[i]);
            break;
        case DW_AT_linkage_name:
        case DW_AT_MIPS_linkage_name:
            a->linkage = read_string(dbg, list[i]);
            break;
        case DW_AT_decl_file:
            a->has_file = read_unsigned(dbg, list[i], &v);
            a->file = v;
            break;
        case DW_AT_decl_line:
            a->has_line = read_unsigned(dbg, list[i], &v) && v <= UINT32_MAX;
            a->line = (uint32_t)v;
            break;
        case DW_AT_specification:
        case DW_AT_abstract_origin:
            /* ref_sig8 (type units) is not followed: it fails here and reads as absent. */
            if (dwarf_global_formref(list[i], &off, &e) == DW_DLV_OK)
                a->ref = off;
            drop_error(dbg, &e);
            break;
        case DW_AT_object_pointer:
            if (dwarf_global_formref(list[i], &off, &e) == DW_DLV_OK)
                a->object_pointer = off;
            drop_error(dbg, &e);
            break;
        case DW_AT_low_pc:
            a->has_low = true;
            break;
        case DW_AT_high_pc:
            a->has_high = true;
            break;
        case DW_AT_ranges:
            if (keep_ranges && !a->ranges) {
                a->ranges = list[i];
                list[i] = NULL;
            }
            break;
        default:
            break;
        }
        if (list[i])
            dwarf_dealloc_attribute(list[i]);
    }
    dwarf_dealloc(dbg, list, DW_DLA_LIST);
}

/* ---- file tables --------------------------------------------------------------------- */

static void cu_files_free(Dwarf_Debug dbg, struct cu_files *f)
{
    for (Dwarf_Signed i = 0; i < f->n; i++)
        dwarf_dealloc(dbg, f->files[i], DW_DLA_STRING);
    if (f->files)
        dwarf_dealloc(dbg, f->files, DW_DLA_LIST);
    free(f->str);
    memset(f, 0, sizeof *f);
}

static void cu_files_load(struct walker *w, Dwarf_Die cu_die, Dwarf_Off cu_off, struct cu_files *f)
{
    cu_files_free(w->dbg, f);
    f->loaded = true;
    f->cu_off = cu_off;
    Dwarf_Error e = NULL;
    Dwarf_Unsigned version = 0;
    Dwarf_Small tables = 0;
    Dwarf_Line_Context ctx = NULL;
    Dwarf_Signed base = 1, count = 0, end = 0;
    int known = -1; /* the table's version, when elf.c read it: no decoding needed */
    Dwarf_Attribute at = NULL;
    if (w->elf && dwarf_attr(cu_die, DW_AT_stmt_list, &at, &e) == DW_DLV_OK) {
        Dwarf_Off off = 0;
        if (dwarf_global_formref(at, &off, &e) == DW_DLV_OK)
            known = fnp_elf_line_version(w->elf, off);
        dwarf_dealloc_attribute(at);
    }
    drop_error(w->dbg, &e);
    if (known >= 0) {
        base = known >= 5 ? 0 : 1;
    } else {
        int r = dwarf_srclines_b(cu_die, &version, &tables, &ctx, &e);
        if (r != DW_DLV_OK) {
            /* Without a line table decl_file cannot be resolved: functions fall back to the
             * unit's own file, which is wrong for those defined in headers. */
            if (r == DW_DLV_ERROR)
                note_error(w, &e, "reading the line table");
            return;
        }
        if (dwarf_srclines_files_indexes(ctx, &base, &count, &end, &e) != DW_DLV_OK) {
            drop_error(w->dbg, &e);
            base = version >= 5 ? 0 : 1;
        }
        dwarf_srclines_dealloc_b(ctx);
    }
    /* dwarf_srcfiles joins each name with its include directory and DW_AT_comp_dir. */
    int r = dwarf_srcfiles(cu_die, &f->files, &f->n, &e);
    if (r != DW_DLV_OK) {
        if (r == DW_DLV_ERROR)
            note_error(w, &e, "reading the line table's files");
        f->files = NULL;
        f->n = 0;
        return;
    }
    f->base = base;
    f->str = calloc(f->n > 0 ? (size_t)f->n : 1, sizeof *f->str);
    if (!f->str)
        w->oom = true;
}

static size_t cu_files_get(struct walker *w, struct cu_files *f, Dwarf_Unsigned index)
{
    if (!f->str || index < (Dwarf_Unsigned)f->base)
        return 0;
    Dwarf_Unsigned i = index - (Dwarf_Unsigned)f->base;
    if (i >= (Dwarf_Unsigned)f->n || !f->files[i])
        return 0;
    if (!f->str[i])
        f->str[i] = intern_path(w, NULL, f->files[i]);
    return f->str[i];
}

static size_t local_file(struct walker *w, Dwarf_Unsigned index)
{
    if (!w->files->loaded)
        cu_files_load(w, w->cu_die, w->cu_off, w->files);
    return cu_files_get(w, w->files, index);
}

/* The unit's own source file: the fallback for functions without DW_AT_decl_file. */
static size_t cu_primary_file(struct walker *w)
{
    if (w->cu_file_done)
        return w->cu_file;
    w->cu_file_done = true;
    Dwarf_Error e = NULL;
    char *name = NULL;
    if (dwarf_diename(w->cu_die, &name, &e) != DW_DLV_OK || !name || !name[0]) {
        drop_error(w->dbg, &e);
        return 0;
    }
    const char *dir = NULL;
    Dwarf_Attribute at = NULL;
    if (dwarf_attr(w->cu_die, DW_AT_comp_dir, &at, &e) == DW_DLV_OK) {
        dir = read_string(w->dbg, at);
        dwarf_dealloc_attribute(at);
    }
    drop_error(w->dbg, &e);
    w->cu_file = intern_path(w, dir, name);
    return w->cu_file;
}

/* ---- ranges -------------------------------------------------------------------------- */

static void add_pending(struct walker *w, uint64_t lo, uint64_t hi, size_t rec)
{
    /* Discarded code (gc-sections, COMDAT losers) keeps ranges starting at 0 (trap 5). */
    if (lo == 0 || hi <= lo)
        return;
    if (!GROW(w, w->pend, w->cappend, w->npend + 1))
        return;
    w->pend[w->npend++] = (struct pending){lo, hi, rec};
}

static void read_rnglists(struct walker *w, Dwarf_Attribute at, Dwarf_Half form, size_t rec)
{
    Dwarf_Error e = NULL;
    Dwarf_Unsigned value = 0;
    int r;
    if (form == DW_FORM_rnglistx) {
        r = dwarf_formudata(at, &value, &e);
    } else {
        Dwarf_Off off = 0;
        r = dwarf_global_formref(at, &off, &e);
        value = off;
    }
    if (r != DW_DLV_OK) {
        drop_error(w->dbg, &e);
        return;
    }
    Dwarf_Rnglists_Head head = NULL;
    Dwarf_Unsigned count = 0, global_off = 0;
    if (dwarf_rnglists_get_rle_head(at, form, value, &head, &count, &global_off, &e) != DW_DLV_OK) {
        drop_error(w->dbg, &e);
        return;
    }
    for (Dwarf_Unsigned i = 0; i < count; i++) {
        unsigned len = 0, code = 0;
        Dwarf_Unsigned raw1 = 0, raw2 = 0, lo = 0, hi = 0;
        Dwarf_Bool no_addr = 0;
        if (dwarf_get_rnglists_entry_fields_a(head, i, &len, &code, &raw1, &raw2, &no_addr, &lo,
                                              &hi, &e) != DW_DLV_OK) {
            drop_error(w->dbg, &e);
            break;
        }
        if (code == DW_RLE_end_of_list)
            break;
        /* The cooked values already carry the base address. */
        if (code == DW_RLE_base_address || code == DW_RLE_base_addressx || no_addr)
            continue;
        add_pending(w, lo, hi, rec);
    }
    dwarf_dealloc_rnglists_head(head);
}

static void read_ranges(struct walker *w, Dwarf_Die die, Dwarf_Attribute at, size_t rec)
{
    Dwarf_Error e = NULL;
    Dwarf_Half form = 0;
    if (dwarf_whatform(at, &form, &e) != DW_DLV_OK) {
        drop_error(w->dbg, &e);
        return;
    }
    if (w->version >= 5 || form == DW_FORM_rnglistx) {
        read_rnglists(w, at, form, rec);
        return;
    }
    Dwarf_Off off = 0;
    int r;
    if (form == DW_FORM_sec_offset) {
        r = dwarf_global_formref(at, &off, &e);
    } else {
        Dwarf_Unsigned v = 0; /* DWARF 2/3: data4/data8 */
        r = dwarf_formudata(at, &v, &e);
        off = v;
    }
    if (r != DW_DLV_OK) {
        drop_error(w->dbg, &e);
        return;
    }
    Dwarf_Ranges *list = NULL;
    Dwarf_Signed n = 0;
    Dwarf_Unsigned bytes = 0;
    Dwarf_Off real = 0;
    if (dwarf_get_ranges_b(w->dbg, off, die, &real, &list, &n, &bytes, &e) != DW_DLV_OK) {
        drop_error(w->dbg, &e);
        return;
    }
    /* .debug_ranges entries are offsets from the unit's base address until a base address
     * selection entry replaces it. */
    Dwarf_Addr base = w->cu_base;
    for (Dwarf_Signed i = 0; i < n; i++) {
        if (list[i].dwr_type == DW_RANGES_END)
            break;
        if (list[i].dwr_type == DW_RANGES_ADDRESS_SELECTION)
            base = list[i].dwr_addr2;
        else
            add_pending(w, base + list[i].dwr_addr1, base + list[i].dwr_addr2, rec);
    }
    dwarf_ranges_dealloc(w->dbg, list, n);
}

static void read_pc(struct walker *w, Dwarf_Die die, const struct attrs *a, size_t rec)
{
    Dwarf_Error e = NULL;
    Dwarf_Addr lo = 0, hi = 0;
    if (dwarf_lowpc(die, &lo, &e) != DW_DLV_OK) {
        drop_error(w->dbg, &e);
        return;
    }
    hi = lo + 1; /* without high_pc only the entry address itself is known */
    if (a->has_high) {
        Dwarf_Half form = 0;
        enum Dwarf_Form_Class cls = DW_FORM_CLASS_UNKNOWN;
        Dwarf_Addr v = 0;
        if (dwarf_highpc_b(die, &v, &form, &cls, &e) == DW_DLV_OK)
            hi = cls == DW_FORM_CLASS_CONSTANT ? lo + v : v;
        drop_error(w->dbg, &e);
    }
    add_pending(w, lo, hi, rec);
}

/* ---- the walk ------------------------------------------------------------------------ */

static void walk_children(struct walker *w, Dwarf_Die parent, uint32_t scope, int depth);

static bool has_attr(Dwarf_Debug dbg, Dwarf_Die die, Dwarf_Half attr)
{
    Dwarf_Error e = NULL;
    Dwarf_Bool yes = 0;
    if (dwarf_hasattr(die, attr, &yes, &e) != DW_DLV_OK)
        drop_error(dbg, &e);
    return yes != 0;
}

static void visit_subprogram(struct walker *w, Dwarf_Die die, uint32_t scope, int depth)
{
    Dwarf_Error e = NULL;
    if (!GROW(w, w->recs, w->caprecs, w->nrecs + 1))
        return;
    struct rec *r = &w->recs[w->nrecs];
    memset(r, 0, sizeof *r);
    if (dwarf_dieoffset(die, &r->off, &e) != DW_DLV_OK) {
        drop_error(w->dbg, &e);
        return;
    }
    r->scope = scope;
    size_t idx = w->nrecs++;
    /* Most subprogram DIEs of C++ units are declarations from headers, or COMDAT copies the
     * linker discarded (low_pc 0, trap 5): reading all their attributes would cost half the
     * walk. They are read only if a chain leads to them. */
    Dwarf_Addr lo = 0;
    int res = dwarf_lowpc(die, &lo, &e);
    drop_error(w->dbg, &e);
    if (res == DW_DLV_OK && !has_attr(w->dbg, die, DW_AT_ranges) &&
        (lo == 0 || !add_to(w, &w->entries, lo))) {
        /* Discarded, or a COMDAT copy that ld pointed at the kept one, which an earlier unit
         * described (a template used by 24 units: 24 DIEs, one function). So are the
         * functions nested in it, unless this is the deep walk of a unit whose shallow walk
         * indexed the function itself but not what it nests. */
        r->lazy = true;
        if (lo != 0 && w->deep)
            walk_children(w, die, scope, depth + 1);
        return;
    }
    if (res != DW_DLV_OK) {
        bool declaration = has_attr(w->dbg, die, DW_AT_declaration);
        if (declaration || !has_attr(w->dbg, die, DW_AT_ranges)) {
            r->lazy = true;
            /* An abstract instance (inline, or a clone's origin) holds its lambdas' closure
             * types; a declaration holds parameters only. */
            if (!declaration && w->deep)
                walk_children(w, die, scope, depth + 1);
            return;
        }
    }
    read_attrs(w->dbg, die, &r->a, true);
    Dwarf_Attribute ranges = r->a.ranges;
    r->a.ranges = NULL;
    /* DW_AT_ranges wins over low_pc (trap 5). */
    if (ranges) {
        read_ranges(w, die, ranges, idx);
        dwarf_dealloc_attribute(ranges);
    } else if (r->a.has_low) {
        read_pc(w, die, &w->recs[idx].a, idx);
    }
    /* Nested: C++ local classes and lambdas' closure types, GNU C nested functions. */
    if (w->deep)
        walk_children(w, die, scope, depth + 1);
}

static void visit_scope(struct walker *w, Dwarf_Die die, Dwarf_Half tag, uint32_t scope, int depth)
{
    Dwarf_Error e = NULL;
    if (!GROW(w, w->scopes, w->capscopes, w->nscopes + 1))
        return;
    char *name = NULL;
    if (dwarf_diename(die, &name, &e) != DW_DLV_OK)
        drop_error(w->dbg, &e);
    Dwarf_Off off = 0;
    if (dwarf_dieoffset(die, &off, &e) != DW_DLV_OK)
        drop_error(w->dbg, &e);
    uint32_t s = (uint32_t)w->nscopes++;
    w->scopes[s] = (struct scope){
        .parent = scope, .tag = tag, .name = name && name[0] ? name : NULL, .off = off};
    walk_children(w, die, s, depth + 1);
}

static void visit(struct walker *w, Dwarf_Die die, uint32_t scope, int depth)
{
    Dwarf_Error e = NULL;
    Dwarf_Half tag = 0;
    if (dwarf_tag(die, &tag, &e) != DW_DLV_OK) {
        drop_error(w->dbg, &e);
        return;
    }
    switch (tag) {
    case DW_TAG_subprogram:
        visit_subprogram(w, die, scope, depth);
        break;
    case DW_TAG_class_type:
    case DW_TAG_structure_type:
    case DW_TAG_union_type:
    case DW_TAG_interface_type:
        /* Members only, and C structs are plentiful. In C++ the definitions of members sit
         * outside the class, reaching their declarations through DW_AT_specification, which
         * resolve() reads on demand: the shallow walk skips type bodies too. */
        if (w->c_only || !w->deep)
            break;
        /* fall through */
    case DW_TAG_namespace:
        visit_scope(w, die, tag, scope, depth);
        break;
    case DW_TAG_lexical_block:
        if (w->deep)
            walk_children(w, die, scope, depth + 1);
        break;
    default:
        /* Inlined instances are not functions of their own: hooks receive out-of-line
         * entry addresses. Variables, parameters and types hold no code. */
        break;
    }
}

static void walk_children(struct walker *w, Dwarf_Die parent, uint32_t scope, int depth)
{
    if (w->oom)
        return;
    Dwarf_Error e = NULL;
    if (depth > MAX_DEPTH) {
        note_error(w, &e, "DIE tree nested too deep");
        return;
    }
    Dwarf_Die child = NULL;
    int r = dwarf_child(parent, &child, &e);
    while (r == DW_DLV_OK && !w->oom) {
        visit(w, child, scope, depth);
        Dwarf_Die sib = NULL;
        r = dwarf_siblingof_b(w->dbg, child, true, &sib, &e);
        dwarf_dealloc_die(child);
        child = sib;
    }
    if (r == DW_DLV_OK)
        dwarf_dealloc_die(child);
    if (r == DW_DLV_ERROR)
        note_error(w, &e, "reading DIEs");
}

/* ---- chains and names ---------------------------------------------------------------- */

static struct rec *find_rec(struct walker *w, Dwarf_Off off)
{
    size_t lo = 0, hi = w->nrecs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (w->recs[mid].off < off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < w->nrecs && w->recs[lo].off == off ? &w->recs[lo] : NULL;
}

/* Reads the attributes of a DIE of this unit that visit_subprogram left for later. */
static void load_rec(struct walker *w, struct rec *r)
{
    Dwarf_Error e = NULL;
    Dwarf_Die die = NULL;
    r->lazy = false;
    if (dwarf_offdie_b(w->dbg, r->off, true, &die, &e) != DW_DLV_OK) {
        drop_error(w->dbg, &e);
        return;
    }
    read_attrs(w->dbg, die, &r->a, false);
    dwarf_dealloc_die(die);
}

/* The decl file and line of a scope, read on first need. */
static void load_scope_decl(struct walker *w, struct scope *sc)
{
    Dwarf_Error e = NULL;
    Dwarf_Die die = NULL;
    sc->decl_read = true;
    if (!sc->off || dwarf_offdie_b(w->dbg, sc->off, true, &die, &e) != DW_DLV_OK) {
        drop_error(w->dbg, &e);
        return;
    }
    struct attrs a;
    read_attrs(w->dbg, die, &a, false);
    dwarf_dealloc_die(die);
    sc->file = a.file;
    sc->line = a.line;
    sc->has_file = a.has_file;
    sc->has_line = a.has_line;
}

/* decl_file index of a DIE in any unit, resolved in that unit's line table (trap 3). */
static size_t die_file(struct walker *w, Dwarf_Die die, Dwarf_Unsigned index)
{
    Dwarf_Error e = NULL;
    Dwarf_Off cu_off = 0;
    if (dwarf_CU_dieoffset_given_die(die, &cu_off, &e) != DW_DLV_OK) {
        drop_error(w->dbg, &e);
        return 0;
    }
    if (cu_off == w->cu_off)
        return local_file(w, index);
    if (!w->foreign.loaded || w->foreign.cu_off != cu_off) {
        Dwarf_Die cu = NULL;
        if (dwarf_offdie_b(w->dbg, cu_off, true, &cu, &e) == DW_DLV_OK) {
            cu_files_load(w, cu, cu_off, &w->foreign);
            dwarf_dealloc_die(cu);
        }
        drop_error(w->dbg, &e);
    }
    if (w->foreign.loaded && w->foreign.cu_off == cu_off)
        return cu_files_get(w, &w->foreign, index);
    return 0;
}

/* Reads a DIE outside the records of this unit (another unit under LTO). */
static bool read_foreign(struct walker *w, Dwarf_Off off, struct rec *out)
{
    Dwarf_Error e = NULL;
    Dwarf_Die die = NULL;
    memset(out, 0, sizeof *out);
    if (dwarf_offdie_b(w->dbg, off, true, &die, &e) != DW_DLV_OK) {
        drop_error(w->dbg, &e);
        return false;
    }
    out->off = off;
    out->foreign = true;
    read_attrs(w->dbg, die, &out->a, false);
    if (out->a.has_file) {
        out->file_str = die_file(w, die, out->a.file);
        out->file_resolved = true;
    }
    dwarf_dealloc_die(die);
    return true;
}

/* The class of a member function, through its object pointer parameter's type: how a DIE
 * reached across units (LTO) finds its class without parent navigation. Fills file and line
 * from the class's decl_file/decl_line. */
static bool class_decl(struct walker *w, Dwarf_Off off, size_t *file, uint32_t *line)
{
    /* parameter -> pointer -> const -> class: a few hops; the bound stops cycles. */
    for (int hop = 0; hop < 8 && off; hop++) {
        Dwarf_Error e = NULL;
        Dwarf_Die die = NULL;
        Dwarf_Half tag = 0;
        if (dwarf_offdie_b(w->dbg, off, true, &die, &e) != DW_DLV_OK ||
            dwarf_tag(die, &tag, &e) != DW_DLV_OK) {
            drop_error(w->dbg, &e);
            if (die)
                dwarf_dealloc_die(die);
            return false;
        }
        off = 0;
        if (tag == DW_TAG_class_type || tag == DW_TAG_structure_type || tag == DW_TAG_union_type) {
            struct attrs a;
            read_attrs(w->dbg, die, &a, false);
            if (a.has_line) {
                *line = a.line;
                *file = a.has_file ? die_file(w, die, a.file) : 0;
            }
            dwarf_dealloc_die(die);
            return a.has_line;
        }
        Dwarf_Attribute at = NULL;
        if (dwarf_attr(die, DW_AT_type, &at, &e) == DW_DLV_OK) {
            if (dwarf_global_formref(at, &off, &e) != DW_DLV_OK)
                off = 0;
            dwarf_dealloc_attribute(at);
        }
        drop_error(w->dbg, &e);
        dwarf_dealloc_die(die);
    }
    return false;
}

static const char *scope_segment(const struct scope *s)
{
    if (s->name)
        return s->name;
    switch (s->tag) {
    case DW_TAG_namespace:
        return "(anonymous namespace)";
    case DW_TAG_union_type:
        return "(anonymous union)";
    case DW_TAG_class_type:
        return "(anonymous class)";
    default:
        return "(anonymous struct)";
    }
}

/* "ns::C::name" from the scopes enclosing the DIE that carried the name. */
static size_t qualified_name(struct walker *w, uint32_t scope, const char *name)
{
    uint32_t chain[MAX_DEPTH + 1];
    size_t n = 0, len = strlen(name);
    for (uint32_t s = scope; s != 0 && n <= MAX_DEPTH; s = w->scopes[s].parent) {
        chain[n++] = s;
        len += strlen(scope_segment(&w->scopes[s])) + 2;
    }
    char *buf = malloc(len + 1);
    if (!buf) {
        w->oom = true;
        return 0;
    }
    char *p = buf;
    while (n > 0) {
        const char *seg = scope_segment(&w->scopes[chain[--n]]);
        size_t sl = strlen(seg);
        memcpy(p, seg, sl);
        memcpy(p + sl, "::", 2);
        p += sl + 2;
    }
    memcpy(p, name, strlen(name) + 1);
    size_t off = sb_add(w, buf, strlen(buf));
    free(buf);
    return off;
}

/* Name, linkage name, decl file and decl line each come from the first DIE of the chain that
 * has them: clang puts only decl_line on out-of-class definitions (trap 4). */
static void resolve(struct walker *w, struct rec *r, struct build_func *f)
{
    const char *name = NULL, *linkage = NULL;
    Dwarf_Off object_pointer = 0;
    uint32_t name_scope = 0, line = 0;
    size_t file = 0;
    bool has_file = false, has_line = false;
    struct rec tmp;
    for (int hop = 0; r && hop < MAX_CHAIN; hop++) {
        if (r->lazy)
            load_rec(w, r);
        if (!name && r->a.name) {
            name = r->a.name;
            name_scope = r->foreign ? 0 : r->scope;
        }
        if (!linkage && r->a.linkage)
            linkage = r->a.linkage;
        if (!object_pointer)
            object_pointer = r->a.object_pointer;
        if (!has_file && r->a.has_file) {
            file = r->file_resolved ? r->file_str : local_file(w, r->a.file);
            has_file = file != 0;
        }
        if (!has_line && r->a.has_line) {
            line = r->a.line;
            has_line = true;
        }
        if (!r->a.ref || (name && linkage && has_file && has_line))
            break;
        Dwarf_Off ref = r->a.ref;
        r = find_rec(w, ref);
        if (!r)
            r = read_foreign(w, ref, &tmp) ? &tmp : NULL;
    }
    /* gcc's lambda operator() has neither decl_file nor decl_line: its closure type has
     * them (trap 6). Likewise for other artificial members. The enclosing scopes are known
     * in this unit; across units the object pointer leads to the class. */
    if (!has_line && name) {
        for (uint32_t s = name_scope; s != 0; s = w->scopes[s].parent) {
            struct scope *sc = &w->scopes[s];
            if (sc->tag == DW_TAG_namespace)
                continue;
            if (!sc->decl_read)
                load_scope_decl(w, sc);
            if (!sc->has_line)
                continue;
            line = sc->line;
            has_line = true;
            if (!has_file && sc->has_file) {
                file = local_file(w, sc->file);
                has_file = file != 0;
            }
            break;
        }
    }
    if (!has_line && object_pointer) {
        size_t class_file = 0;
        if (class_decl(w, object_pointer, &class_file, &line)) {
            has_line = true;
            if (!has_file && class_file) {
                file = class_file;
                has_file = true;
            }
        }
    }
    f->name = name ? qualified_name(w, name_scope, name) : 0;
    f->linkage = linkage ? sb_add(w, linkage, strlen(linkage)) : 0;
    f->file = has_file ? file : cu_primary_file(w);
    f->line = has_line ? line : 0;
}

/* Turns the unit's subprograms with code into functions and ranges. */
static void finish_cu(struct walker *w)
{
    size_t i = 0;
    while (i < w->npend && !w->oom) {
        size_t rec = w->pend[i].rec;
        if (!GROW(w, w->funcs, w->capfuncs, w->nfuncs + 1))
            break;
        const struct rec *r = &w->recs[rec];
        size_t fi = w->nfuncs++;
        w->funcs[fi] =
            (struct build_func){.unit = w->unit, .scope = r->scope, .off = r->off, .a = r->a};
        for (; i < w->npend && w->pend[i].rec == rec; i++) {
            if (!GROW(w, w->ranges, w->capranges, w->nranges + 1))
                break;
            w->ranges[w->nranges++] = (struct frange){w->pend[i].lo, w->pend[i].hi, fi};
            add_to(w, &w->starts, w->pend[i].lo);
        }
    }
}

/* Sets up the walker for the unit whose DIE is cu. False when the unit holds no code of its
 * own: a type unit, or a split DWARF skeleton (counted). */
static bool begin_unit(struct walker *w, Dwarf_Die cu, Dwarf_Half version, Dwarf_Half unit_type,
                       struct cu_files *files)
{
    Dwarf_Error e = NULL;
    w->cu_die = cu;
    w->version = version;
    w->cu_base = 0;
    w->cu_file = 0;
    w->cu_file_done = false;
    w->nrecs = w->npend = 0;
    /* Scopes stay: functions resolved later name theirs. */
    w->files = files;
    w->in_cu = false;
    if (dwarf_dieoffset(cu, &w->cu_off, &e) != DW_DLV_OK) {
        note_error(w, &e, "reading a unit's offset");
        return false;
    }
    w->in_cu = true;
    /* Type units hold no code. */
    if (unit_type == DW_UT_type || unit_type == DW_UT_split_type)
        return false;
    Dwarf_Bool yes = 0;
    if (unit_type == DW_UT_skeleton || unit_type == DW_UT_split_compile ||
        (dwarf_hasattr(cu, DW_AT_GNU_dwo_name, &yes, &e) == DW_DLV_OK && yes) ||
        (dwarf_hasattr(cu, DW_AT_dwo_name, &yes, &e) == DW_DLV_OK && yes)) {
        w->skeletons++; /* split DWARF: the functions are in a .dwo this libdwarf won't read */
        drop_error(w->dbg, &e);
        return false;
    }
    drop_error(w->dbg, &e);
    Dwarf_Addr base = 0;
    if (dwarf_lowpc(cu, &base, &e) == DW_DLV_OK)
        w->cu_base = base;
    drop_error(w->dbg, &e);
    Dwarf_Unsigned lang = 0;
    w->c_only = false;
    if (dwarf_srclang(cu, &lang, &e) == DW_DLV_OK)
        w->c_only =
            lang == DW_LANG_C89 || lang == DW_LANG_C || lang == DW_LANG_C99 || lang == DW_LANG_C11;
    drop_error(w->dbg, &e);
    return true;
}

static void end_unit(struct walker *w)
{
    cu_files_free(w->dbg, &w->scratch);
    w->files = &w->scratch;
    w->cu_die = NULL;
    w->in_cu = false;
}

static int cmp_range(const void *pa, const void *pb)
{
    const struct frange *a = pa, *b = pb;
    if (a->lo != b->lo)
        return a->lo < b->lo ? -1 : 1;
    if (a->hi != b->hi)
        return a->hi > b->hi ? -1 : 1; /* the outer of two nested ranges first */
    return a->func < b->func ? -1 : a->func > b->func;
}

static int cmp_urange(const void *pa, const void *pb)
{
    const struct urange *a = pa, *b = pb;
    if (a->lo != b->lo)
        return a->lo < b->lo ? -1 : 1;
    return a->unit < b->unit ? -1 : a->unit > b->unit;
}

static void walker_free(struct walker *w)
{
    cu_files_free(w->dbg, &w->scratch);
    cu_files_free(w->dbg, &w->foreign);
    free(w->recs);
    free(w->scopes);
    free(w->pend);
    free(w->interned.slot);
    free(w->entries.slot);
    free(w->starts.slot);
    free(w->funcs);
    free(w->ranges);
    free(w->str.p);
}

/* Records unit u's ranges, read from its DIE (after begin_unit). */
static void unit_ranges(struct fnp_dwarf *d, Dwarf_Die cu, size_t u)
{
    struct walker *w = &d->w;
    Dwarf_Error e = NULL;
    Dwarf_Attribute at = NULL;
    w->npend = 0;
    int r = dwarf_attr(cu, DW_AT_ranges, &at, &e);
    if (r == DW_DLV_OK) {
        read_ranges(w, cu, at, 0);
        dwarf_dealloc_attribute(at);
    } else {
        drop_error(w->dbg, &e);
        struct attrs a = {0};
        a.has_high = has_attr(w->dbg, cu, DW_AT_high_pc);
        if (a.has_high)
            read_pc(w, cu, &a, 0);
    }
    if (w->npend == 0) {
        d->units[u].unbounded = true;
        return;
    }
    if (!GROW(w, d->uranges, d->capuranges, d->nuranges + w->npend))
        return;
    for (size_t i = 0; i < w->npend; i++)
        d->uranges[d->nuranges++] = (struct urange){w->pend[i].lo, w->pend[i].hi, 0, u};
    w->npend = 0;
}

/* Reads every unit header and the ranges of each unit's DIE: no other DIE. */
static void read_units(struct fnp_dwarf *d)
{
    struct walker *w = &d->w;
    for (;;) {
        Dwarf_Error e = NULL;
        Dwarf_Unsigned header_len = 0, type_off = 0, next = 0;
        Dwarf_Half version = 0, addr_size = 0, off_size = 0, ext_size = 0, unit_type = 0;
        Dwarf_Off abbrev = 0;
        Dwarf_Sig8 sig;
        int r =
            dwarf_next_cu_header_d(d->dbg, true, &header_len, &version, &abbrev, &addr_size,
                                   &off_size, &ext_size, &sig, &type_off, &next, &unit_type, &e);
        if (r == DW_DLV_NO_ENTRY)
            break;
        if (r == DW_DLV_ERROR) {
            note_error(w, &e, "reading a unit header");
            break; /* the next header cannot be found past a bad one */
        }
        Dwarf_Die cu = NULL;
        r = dwarf_siblingof_b(d->dbg, NULL, true, &cu, &e);
        if (r == DW_DLV_ERROR)
            note_error(w, &e, "reading a unit's DIE");
        if (r != DW_DLV_OK)
            continue;
        if (begin_unit(w, cu, version, unit_type, &w->scratch) &&
            GROW(w, d->units, d->capunits, d->nunits + 1)) {
            size_t u = d->nunits++;
            d->units[u] = (struct unit){.off = w->cu_off, .version = version};
            unit_ranges(d, cu, u);
        }
        end_unit(w);
        dwarf_dealloc_die(cu);
        if (w->oom)
            break;
    }
    /* uranges is NULL while empty, and qsort's pointer must not be (C11 7.22.5). */
    if (d->nuranges > 1)
        qsort(d->uranges, d->nuranges, sizeof *d->uranges, cmp_urange);
    uint64_t max_hi = 0;
    for (size_t i = 0; i < d->nuranges; i++) {
        if (d->uranges[i].hi > max_hi)
            max_hi = d->uranges[i].hi;
        d->uranges[i].max_hi = max_hi;
    }
}

static void leave_unit(struct fnp_dwarf *d);

/* Walks unit u: shallow the first time, deep when asked again. */
static void walk_unit(struct fnp_dwarf *d, size_t u, bool deep)
{
    struct walker *w = &d->w;
    struct unit *un = &d->units[u];
    if (un->walked >= (deep ? 2 : 1))
        return;
    leave_unit(d);
    Dwarf_Error e = NULL;
    Dwarf_Die cu = NULL;
    if (dwarf_offdie_b(d->dbg, un->off, true, &cu, &e) != DW_DLV_OK) {
        note_error(w, &e, "reading a unit's DIE");
        un->walked = 2;
        return;
    }
    if (!un->walked)
        d->walked++;
    un->walked = deep ? 2 : 1;
    w->deep = deep;
    w->unit = (uint32_t)u;
    if (begin_unit(w, cu, un->version, DW_UT_compile, &un->files)) {
        walk_children(w, cu, 0, 0);
        finish_cu(w);
    }
    end_unit(w);
    dwarf_dealloc_die(cu);
    d->stale = true;
}

/* Walks the units whose ranges hold addr: shallow ones until one indexes a function starting
 * at addr (hooks pass entry addresses), deep ones all. ld points the DWARF of discarded
 * COMDAT copies at the kept one, so a template used by every unit lies in every unit's
 * ranges: stopping at the first unit that has it keeps a profile of a few units cheap. */
static void units_holding(struct fnp_dwarf *d, uint64_t addr, bool deep)
{
    if (!deep && has(&d->w.starts, addr))
        return;
    size_t lo = 0, hi = d->nuranges;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (d->uranges[mid].lo <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* Every earlier entry whose hi could exceed addr: max_hi says when none is left. */
    for (size_t i = lo; i > 0 && d->uranges[i - 1].max_hi > addr && !d->w.oom; i--) {
        if (addr >= d->uranges[i - 1].hi)
            continue;
        walk_unit(d, d->uranges[i - 1].unit, deep);
        if (!deep && has(&d->w.starts, addr))
            return;
    }
}

/* The index in w->funcs of the function at addr, or SIZE_MAX. */
static size_t find(const struct walker *w, uint64_t addr)
{
    size_t lo = 0, hi = w->nranges;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (w->ranges[mid].lo <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return SIZE_MAX;
    /* Hooks pass entry addresses: a range starting exactly there names the function. Of
     * several starting there, the first in sort order (the outermost) wins. */
    size_t i = lo - 1;
    if (w->ranges[i].lo == addr) {
        while (i > 0 && w->ranges[i - 1].lo == addr)
            i--;
        return w->ranges[i].func;
    }
    /* Otherwise the innermost range holding addr; nesting is shallow (nested functions),
     * so a bounded look back suffices. */
    for (size_t steps = 0; steps < 8; steps++, i--) {
        if (addr < w->ranges[i].hi)
            return w->ranges[i].func;
        if (i == 0)
            break;
    }
    return SIZE_MAX;
}

/* Sorts the ranges after walks added some. */
static void publish(struct fnp_dwarf *d)
{
    if (!d->stale)
        return;
    if (d->w.nranges > 1) /* ranges is NULL while empty */
        qsort(d->w.ranges, d->w.nranges, sizeof *d->w.ranges, cmp_range);
    d->stale = false;
}

/* The first damage, reported once; -ENOMEM always. */
static int report(struct fnp_dwarf *d, char *msg, size_t msg_len)
{
    if (d->w.oom) {
        set_msg(msg, msg_len, "out of memory");
        return -ENOMEM;
    }
    if (d->w.err && !d->err_reported) {
        d->err_reported = true;
        set_msg(msg, msg_len, "%s", d->w.msg);
        return d->w.err;
    }
    return 0;
}

int fnp_dwarf_prepare(struct fnp_dwarf *d, const uint64_t *addrs, size_t n, char *msg,
                      size_t msg_len)
{
    if (msg_len)
        msg[0] = '\0';
    struct walker *w = &d->w;
    for (size_t u = 0; u < d->nunits && !w->oom; u++)
        if (d->units[u].unbounded)
            walk_unit(d, u, false);
    for (size_t i = 0; i < n && !w->oom; i++)
        units_holding(d, addrs[i], false);
    publish(d);
    /* An address in a unit's ranges but in none of its functions: a nested function or a
     * member defined inside a type. Walk that unit whole. */
    bool again = false;
    for (size_t i = 0; i < n && !w->oom; i++) {
        if (find(w, addrs[i]) != SIZE_MAX)
            continue;
        units_holding(d, addrs[i], true);
        for (size_t u = 0; u < d->nunits; u++)
            if (d->units[u].unbounded)
                walk_unit(d, u, true);
        again = true;
    }
    if (again)
        publish(d);
    return report(d, msg, msg_len);
}

/* Drops the lookup context: a walk sets its own. */
static void leave_unit(struct fnp_dwarf *d)
{
    struct walker *w = &d->w;
    if (d->ctx_die)
        dwarf_dealloc_die(d->ctx_die);
    d->ctx_die = NULL;
    w->ctx_unit = SIZE_MAX;
    w->cu_die = NULL;
    w->in_cu = false;
    w->files = &w->scratch;
}

/* Sets the walker's unit context to unit u, as during its walk, for resolve(). */
static bool enter_unit(struct fnp_dwarf *d, size_t u)
{
    struct walker *w = &d->w;
    if (w->ctx_unit == u)
        return true;
    leave_unit(d);
    Dwarf_Error e = NULL;
    if (dwarf_offdie_b(d->dbg, d->units[u].off, true, &d->ctx_die, &e) != DW_DLV_OK) {
        drop_error(d->dbg, &e);
        d->ctx_die = NULL;
        return false;
    }
    w->cu_die = d->ctx_die;
    w->cu_off = d->units[u].off;
    w->version = d->units[u].version;
    w->in_cu = true;
    w->files = &d->units[u].files;
    w->cu_file = 0;
    w->cu_file_done = false;
    w->nrecs = 0; /* chains are followed with dwarf_offdie_b */
    w->ctx_unit = u;
    return true;
}

const struct fnp_dwarf_func *fnp_dwarf_find(struct fnp_dwarf *d, uint64_t addr)
{
    struct walker *w = &d->w;
    if (d->stale)
        return NULL; /* a prepare ran out of memory publishing */
    size_t i = find(w, addr);
    if (i == SIZE_MAX)
        return NULL;
    struct build_func *f = &w->funcs[i];
    if (!f->resolved) {
        if (enter_unit(d, f->unit)) {
            struct rec r = {.off = f->off, .a = f->a, .scope = f->scope};
            resolve(w, &r, f);
        }
        f->resolved = true; /* a unit that cannot be entered resolves to nothing */
        f = &w->funcs[i];
    }
    d->cur = (struct fnp_dwarf_func){f->name ? w->str.p + f->name : NULL,
                                     f->linkage ? w->str.p + f->linkage : NULL,
                                     f->file ? w->str.p + f->file : NULL, f->line, (uint32_t)i};
    return &d->cur;
}

int fnp_dwarf_take_error(struct fnp_dwarf *d, char *msg, size_t msg_len)
{
    return report(d, msg, msg_len);
}

void fnp_dwarf_set_lines(struct fnp_dwarf *d, const struct fnp_elf_file *elf)
{
    d->w.elf = elf;
}

void fnp_dwarf_stats(const struct fnp_dwarf *d, size_t *units, size_t *walked)
{
    *units = d ? d->nunits : 0;
    *walked = d ? d->walked : 0;
}

int fnp_dwarf_open(const char *path, struct fnp_dwarf **out, char *msg, size_t msg_len)
{
    *out = NULL;
    if (msg_len)
        msg[0] = '\0';
    struct fnp_dwarf *d = calloc(1, sizeof *d);
    if (!d)
        return -ENOMEM;
    Dwarf_Error e = NULL;
    /* No true-path buffer: libdwarf then reads path itself and follows no .gnu_debuglink or
     * build-id (symbolize.c does, to choose and check the file). A NULL error pointer would
     * make libdwarf abort on the first problem (trap 2). */
    int r = dwarf_init_path(path, NULL, 0, DW_DLC_READ, DW_GROUPNUMBER_ANY, NULL, NULL, &d->dbg,
                            NULL, 0, NULL, &e);
    if (r != DW_DLV_OK) {
        if (r == DW_DLV_ERROR) {
            const char *why = e ? dwarf_errmsg(e) : NULL;
            set_msg(msg, msg_len, "%s", why ? why : "libdwarf cannot read it");
            /* No Dwarf_Debug exists yet: such errors are freed through a NULL one. */
            if (e)
                dwarf_dealloc(NULL, e, DW_DLA_ERROR);
        }
        free(d);
        return r == DW_DLV_ERROR ? -EINVAL : -ENODATA;
    }
    struct walker *w = &d->w;
    w->dbg = d->dbg;
    w->files = &w->scratch;
    w->ctx_unit = SIZE_MAX;
    w->nscopes = 1; /* scopes[0]: the unit itself */
    GROW(w, w->scopes, w->capscopes, 1);
    if (w->scopes)
        w->scopes[0] = (struct scope){0};
    sb_add(w, "", 0); /* offset 0: "none" */
    if (!w->oom)
        read_units(d);
    if (w->oom) {
        fnp_dwarf_close(d);
        set_msg(msg, msg_len, "out of memory");
        return -ENOMEM;
    }
    *out = d;
    int err = report(d, msg, msg_len);
    if (err)
        return err;
    if (w->skeletons) {
        set_msg(msg, msg_len, "split DWARF (.dwo files) is not supported");
        return -ENOTSUP;
    }
    if (d->nunits == 0) {
        fnp_dwarf_close(d);
        *out = NULL;
        return -ENODATA;
    }
    return 0;
}

void fnp_dwarf_close(struct fnp_dwarf *d)
{
    if (!d)
        return;
    leave_unit(d);
    for (size_t u = 0; u < d->nunits; u++)
        cu_files_free(d->dbg, &d->units[u].files);
    walker_free(&d->w);
    free(d->units);
    free(d->uranges);
    Dwarf_Error e = NULL;
    if (dwarf_finish(d->dbg, &e) != DW_DLV_OK && e)
        dwarf_dealloc(NULL, e, DW_DLA_ERROR);
    free(d);
}
