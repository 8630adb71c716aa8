/* SPDX-License-Identifier: MIT */
/*
 * ELF symbol tables through libelf: the fallback names when DWARF is missing, and the flags
 * that tell which DWARF this libdwarf cannot read (docs/symbols.md, trap 9). No libdwarf here.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "symbolizer.h"

/* A symbol before duplicates at one address are folded; name borrowed from the ELF. */
struct cand {
    uint64_t addr;
    uint64_t size;
    const char *name;
    size_t len; /* of the base name */
    int rank;   /* higher wins among symbols at one address */
};

/* Suffix words gcc and clang append to the copies they make of one source function. */
static const char *const clone_words[] = {"constprop", "isra",       "part",   "cold", "clone",
                                          "lto_priv",  "localalias", "__uniq", "llvm"};

static bool is_clone_word(const char *s, size_t len)
{
    for (size_t i = 0; i < sizeof clone_words / sizeof clone_words[0]; i++)
        if (strlen(clone_words[i]) == len && memcmp(clone_words[i], s, len) == 0)
            return true;
    return false;
}

static bool all_digits(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (s[i] < '0' || s[i] > '9')
            return false;
    return len > 0;
}

/* Whether s[0, len), which starts with '.', is a chain like ".constprop.0.isra.0" or
 * ".part.0.cold": each component a clone word, optionally followed by one number. */
static bool is_clone_tail(const char *s, size_t len)
{
    bool after_word = false;
    size_t i = 0;
    while (i < len) {
        size_t j = i + 1;
        while (j < len && s[j] != '.')
            j++;
        const char *tok = s + i + 1;
        size_t tlen = j - i - 1;
        if (is_clone_word(tok, tlen))
            after_word = true;
        else if (after_word && all_digits(tok, tlen))
            after_word = false;
        else
            return false;
        i = j;
    }
    return len > 0;
}

size_t fnp_elf_base_name_len(const char *name)
{
    /* "@VERSION" and "@@VERSION" as binutils and some .symtab spell versioned names. */
    size_t n = strcspn(name, "@");
    /* The first '.' whose tail parses wins, so "f.part.0.cold" loses both parts; a '.' that
     * is part of the name ("f.g", OpenMP's "f._omp_fn.0") stays. */
    for (size_t p = 1; p < n; p++)
        if (name[p] == '.' && is_clone_tail(name + p, n - p))
            return p;
    return n;
}

static int cand_cmp(const void *pa, const void *pb)
{
    const struct cand *a = pa, *b = pb;
    if (a->addr != b->addr)
        return a->addr < b->addr ? -1 : 1;
    if (a->rank != b->rank)
        return a->rank > b->rank ? -1 : 1;
    if (a->len != b->len)
        return a->len < b->len ? -1 : 1;
    return strcmp(a->name, b->name);
}

/* Ranks aliases at one address so the choice does not depend on symbol table order. */
static int rank_of(const GElf_Sym *sym, const char *name, size_t base_len)
{
    int rank = 0;
    if (GELF_ST_TYPE(sym->st_info) == STT_FUNC)
        rank += 16; /* an IFUNC's value is its resolver, which a FUNC may name better */
    switch (GELF_ST_BIND(sym->st_info)) {
    case STB_GLOBAL:
        rank += 8;
        break;
    case STB_WEAK:
        rank += 4;
        break;
    default:
        break;
    }
    if (sym->st_size > 0)
        rank += 2;
    if (name[base_len] == '\0')
        rank += 1; /* not a clone or versioned spelling */
    return rank;
}

static int read_syms(Elf *e, Elf_Scn *scn, const GElf_Shdr *sh, struct fnp_elf_syms *out)
{
    if (out->v)
        return 0; /* a second table of one type: the first one counts */
    Elf_Data *data = elf_getdata(scn, NULL);
    if (!data || sh->sh_entsize == 0)
        return 0;
    size_t count = sh->sh_size / sh->sh_entsize;
    /* libelf converts only what is in the file: a truncated section gives less data. */
    size_t fsize = gelf_fsize(e, ELF_T_SYM, 1, EV_CURRENT);
    if (fsize == 0)
        return 0;
    if (count > data->d_size / fsize)
        count = data->d_size / fsize;
    if (count == 0)
        return 0;

    struct cand *c = malloc(count * sizeof *c);
    if (!c)
        return -ENOMEM;
    size_t n = 0;
    for (size_t i = 0; i < count; i++) {
        GElf_Sym sym;
        if (!gelf_getsym(data, (int)i, &sym))
            break;
        int type = GELF_ST_TYPE(sym.st_info);
        if (sym.st_name && type != STT_SECTION) {
            /* The object calls -finstrument-functions' hooks, through the PLT (undefined
             * here) or linked in (libfnprof.a; glibc's no-op pair also defines them, which
             * its callers in the runtime tell apart by path). */
            const char *u = elf_strptr(e, sh->sh_link, sym.st_name);
            if (u && strcmp(u, "__cyg_profile_func_enter") == 0)
                out->calls_hooks |= sym.st_shndx == SHN_UNDEF ? 1 : 2;
            if (sym.st_shndx == SHN_UNDEF)
                continue;
        }
        if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF ||
            sym.st_value == 0)
            continue;
        const char *name = elf_strptr(e, sh->sh_link, sym.st_name);
        if (!name || !name[0])
            continue;
        size_t len = fnp_elf_base_name_len(name);
        if (len == 0)
            continue;
        c[n++] = (struct cand){sym.st_value, sym.st_size, name, len, rank_of(&sym, name, len)};
    }
    qsort(c, n, sizeof *c, cand_cmp);

    size_t kept = 0, bytes = 0;
    for (size_t i = 0; i < n; i++) {
        if (kept && c[kept - 1].addr == c[i].addr)
            continue;
        c[kept++] = c[i];
        bytes += c[i].len + 1;
    }
    int err = 0;
    out->v = malloc((kept ? kept : 1) * sizeof *out->v);
    out->names = malloc(bytes ? bytes : 1);
    if (!out->v || !out->names) {
        free(out->v);
        free(out->names);
        out->v = NULL;
        out->names = NULL;
        err = -ENOMEM;
    } else {
        char *p = out->names;
        for (size_t i = 0; i < kept; i++) {
            memcpy(p, c[i].name, c[i].len);
            p[c[i].len] = '\0';
            out->v[i] = (struct fnp_elf_sym){c[i].addr, c[i].size, p};
            p += c[i].len + 1;
        }
        out->n = kept;
    }
    free(c);
    return err;
}

static void read_build_id(Elf_Scn *scn, struct fnp_elf_file *out)
{
    Elf_Data *data = elf_getdata(scn, NULL);
    if (!data)
        return;
    GElf_Nhdr nh;
    size_t off = 0, name_off, desc_off, next;
    while (off < data->d_size && (next = gelf_getnote(data, off, &nh, &name_off, &desc_off))) {
        if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
            memcmp((const char *)data->d_buf + name_off, "GNU", 4) == 0 && nh.n_descsz > 0 &&
            nh.n_descsz <= sizeof out->build_id) {
            memcpy(out->build_id, (const char *)data->d_buf + desc_off, nh.n_descsz);
            out->build_id_len = nh.n_descsz;
            out->flags |= FNP_ELF_BUILD_ID;
            return;
        }
        off = next;
    }
}

static uint64_t read_le_be(const unsigned char *p, int n, bool big);

/* .gnu_debuglink: the debug file's name, NUL-terminated, padded to 4 bytes, then the CRC32 of
 * that whole file in the object's byte order. */
static void read_debuglink(Elf *e, Elf_Scn *scn, struct fnp_elf_file *out)
{
    Elf_Data *data = elf_getdata(scn, NULL);
    if (!data || !data->d_buf)
        return;
    const char *p = data->d_buf;
    size_t len = strnlen(p, data->d_size);
    size_t crc_at = (len + 4) & ~(size_t)3;
    if (len == 0 || len >= sizeof out->debuglink || memchr(p, '/', len) ||
        crc_at + 4 > data->d_size)
        return; /* a bare file name only: "../x" must not reach outside the search dirs */
    const char *ident = elf_getident(e, NULL);
    bool big = ident && ident[EI_DATA] == ELFDATA2MSB;
    memcpy(out->debuglink, p, len + 1);
    out->debuglink_crc = (uint32_t)read_le_be((const unsigned char *)p + crc_at, 4, big);
    out->flags |= FNP_ELF_DEBUGLINK;
}

static uint64_t read_le_be(const unsigned char *p, int n, bool big)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v |= (uint64_t)p[big ? n - 1 - i : i] << (8 * i);
    return v;
}

/*
 * libdwarf 20210528 reads every .debug_rnglists and .debug_loclists header when it loads the
 * first unit. On a header it rejects, internal_load_rnglists_contexts() frees the context and
 * then goes on using it (a missing return): a double free, or an endless allocating loop when
 * the length is 0. And dwarf_rnglists_get_rle_head() adds a DW_FORM_rnglistx entry of the
 * offset array to the section start unchecked, then reads there: a wild read. So libdwarf
 * only gets files whose list tables are whole: each area inside the section, each offset
 * array inside its area, each offset pointing into it.
 */
static bool list_headers_ok(const unsigned char *p, uint64_t size, bool big)
{
    uint64_t off = 0;
    while (off < size) {
        uint64_t left = size - off, hdr = 4;
        if (left < 4)
            return false;
        uint64_t len = read_le_be(p + off, 4, big);
        if (len == 0xffffffff) {
            if (left < 12)
                return false;
            len = read_le_be(p + off + 4, 8, big);
            hdr = 12;
        } else if (len >= 0xfffffff0) {
            return false;
        }
        /* version (2), address size (1), segment selector size (1), offset count (4) */
        if (len < 8 || len > left - hdr)
            return false;
        if (read_le_be(p + off + hdr, 2, big) != 5)
            return false;
        unsigned addr_size = p[off + hdr + 2];
        if (addr_size != 2 && addr_size != 4 && addr_size != 8)
            return false;
        uint64_t end = off + hdr + len;
        uint64_t array = off + hdr + 8;
        uint64_t width = hdr == 12 ? 8 : 4;
        uint64_t count = read_le_be(p + off + hdr + 4, 4, big);
        if (count > (end - array) / width)
            return false;
        for (uint64_t i = 0; i < count; i++)
            if (read_le_be(p + array + i * width, (int)width, big) >= end - array)
                return false;
        off = end;
    }
    return true;
}

static bool list_section_ok(Elf *e, Elf_Scn *scn, const GElf_Shdr *sh, const char *name)
{
    if (sh->sh_type == SHT_NOBITS)
        return true; /* nothing libdwarf would read */
    /* Inflated in memory only, as libdwarf will see it. */
    if ((sh->sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
        return false;
    if (name[1] == 'z' && elf_compress_gnu(scn, 0, 0) < 0)
        return false;
    Elf_Data *d = elf_getdata(scn, NULL);
    if (!d)
        return false;
    if (!d->d_buf)
        return d->d_size == 0;
    const char *ident = elf_getident(e, NULL);
    bool big = ident && ident[EI_DATA] == ELFDATA2MSB;
    return list_headers_ok(d->d_buf, d->d_size, big);
}

/* The version of each line table in .debug_line, by offset: DWARF 5 tables number files from
 * 0, older ones from 1 (docs/symbols.md, trap 3), and asking libdwarf means decoding every row. */
static int read_line_versions(Elf *e, Elf_Scn *scn, const GElf_Shdr *sh, const char *name,
                              struct fnp_elf_file *out)
{
    if (sh->sh_type == SHT_NOBITS || out->line_tables)
        return 0;
    if ((sh->sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
        return 0;
    if (name[1] == 'z' && elf_compress_gnu(scn, 0, 0) < 0)
        return 0;
    Elf_Data *d = elf_getdata(scn, NULL);
    if (!d || !d->d_buf)
        return 0;
    const char *ident = elf_getident(e, NULL);
    bool big = ident && ident[EI_DATA] == ELFDATA2MSB;
    const unsigned char *p = d->d_buf;
    uint64_t size = d->d_size, off = 0;
    size_t n = 0, cap = 0;
    struct fnp_elf_line_table *v = NULL;
    while (size - off >= 6) {
        uint64_t len = read_le_be(p + off, 4, big), hdr = 4;
        if (len == 0xffffffff) {
            if (size - off < 14)
                break;
            len = read_le_be(p + off + 4, 8, big);
            hdr = 12;
        } else if (len >= 0xfffffff0) {
            break;
        }
        if (len < 2 || len > size - off - hdr)
            break; /* damaged: the tables read so far stand, libdwarf answers for the rest */
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            struct fnp_elf_line_table *nv = reallocarray(v, cap, sizeof *v);
            if (!nv) {
                free(v);
                return -ENOMEM;
            }
            v = nv;
        }
        v[n++] = (struct fnp_elf_line_table){off, (uint16_t)read_le_be(p + off + hdr, 2, big)};
        off += hdr + len;
    }
    out->line_tables = v;
    out->nline_tables = n;
    return 0;
}

int fnp_elf_line_version(const struct fnp_elf_file *f, uint64_t offset)
{
    size_t lo = 0, hi = f->nline_tables;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (f->line_tables[mid].offset < offset)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < f->nline_tables && f->line_tables[lo].offset == offset ? f->line_tables[lo].version
                                                                       : -1;
}

static bool starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static int read_sections(Elf *e, struct fnp_elf_file *out)
{
    size_t shstrndx;
    if (elf_getshdrstrndx(e, &shstrndx) != 0)
        shstrndx = SHN_UNDEF; /* names unknown; symbol tables are found by type */
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(e, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh))
            continue;
        const char *name = shstrndx != SHN_UNDEF ? elf_strptr(e, shstrndx, sh.sh_name) : NULL;
        if (!name)
            name = "";
        int err = 0;
        if (sh.sh_type == SHT_SYMTAB)
            err = read_syms(e, scn, &sh, &out->symtab);
        else if (sh.sh_type == SHT_DYNSYM)
            err = read_syms(e, scn, &sh, &out->dynsym);
        else if (sh.sh_type == SHT_NOTE && !(out->flags & FNP_ELF_BUILD_ID))
            read_build_id(scn, out);
        if (err)
            return err;

        if (strcmp(name, ".debug_info") == 0 || strcmp(name, ".zdebug_info") == 0)
            out->flags |= FNP_ELF_DEBUG_INFO;
        else if (strcmp(name, ".gnu_debugaltlink") == 0)
            out->flags |= FNP_ELF_DEBUGALTLINK;
        else if (strcmp(name, ".gnu_debuglink") == 0 && !(out->flags & FNP_ELF_DEBUGLINK))
            read_debuglink(e, scn, out);
        if (starts_with(name, ".debug_") && (sh.sh_flags & SHF_COMPRESSED)) {
            /* libdwarf 20210528 inflates zlib only (docs/symbols.md, trap 9). */
            GElf_Chdr ch;
            if (!gelf_getchdr(scn, &ch) || ch.ch_type != ELFCOMPRESS_ZLIB)
                out->flags |= FNP_ELF_ZSTD_DEBUG;
        }
        /* After the compression check above: this inflates the section in place. */
        if ((strcmp(name, ".debug_line") == 0 || strcmp(name, ".zdebug_line") == 0) &&
            (err = read_line_versions(e, scn, &sh, name, out)) != 0)
            return err;
        if ((strcmp(name, ".debug_rnglists") == 0 || strcmp(name, ".debug_loclists") == 0 ||
             strcmp(name, ".zdebug_rnglists") == 0 || strcmp(name, ".zdebug_loclists") == 0) &&
            !list_section_ok(e, scn, &sh, name))
            out->flags |= FNP_ELF_BAD_LISTS;
    }
    return 0;
}

/* libelf takes a file cut short after its ELF header and shows it without sections; call it
 * unreadable instead, as libdwarf would. */
static bool headers_fit(Elf *e, uint64_t size)
{
    GElf_Ehdr eh;
    size_t shnum = 0;
    if (!gelf_getehdr(e, &eh) || elf_getshdrnum(e, &shnum) != 0)
        return false;
    uint64_t ph_end = eh.e_phoff + (uint64_t)eh.e_phnum * eh.e_phentsize;
    uint64_t sh_end = eh.e_shoff + (uint64_t)shnum * eh.e_shentsize;
    return ph_end <= size && sh_end <= size && (eh.e_shoff != 0 || eh.e_phoff != 0);
}

/* path opened for reading if it is a regular file (O_NONBLOCK: a FIFO there must not hang
 * the dump); the fd, or -errno of open(2), or -ENOEXEC; *st gets its fstat. */
static int open_regular(const char *path, struct stat *st)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return -errno;
    if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode)) {
        close(fd);
        return -ENOEXEC;
    }
    return fd;
}

int fnp_elf_load(const char *path, struct fnp_elf_file *out)
{
    memset(out, 0, sizeof *out);
    if (elf_version(EV_CURRENT) == EV_NONE)
        return -ENOEXEC;
    struct stat st;
    int fd = open_regular(path, &st);
    if (fd < 0)
        return fd;
    Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    int err = -ENOEXEC;
    if (e && elf_kind(e) == ELF_K_ELF && gelf_getclass(e) != ELFCLASSNONE &&
        headers_fit(e, (uint64_t)st.st_size))
        err = read_sections(e, out);
    if (e)
        elf_end(e);
    close(fd);
    if (err)
        fnp_elf_free(out);
    return err;
}

int fnp_elf_crc32(const char *path, uint32_t *crc)
{
    struct stat st;
    int fd = open_regular(path, &st);
    if (fd < 0)
        return fd;
    unsigned char buf[65536];
    uLong c = crc32(0, Z_NULL, 0);
    ssize_t got;
    while ((got = read(fd, buf, sizeof buf)) > 0)
        c = crc32(c, buf, (uInt)got);
    int err = got < 0 ? -errno : 0;
    close(fd);
    if (!err)
        *crc = (uint32_t)c;
    return err;
}

const struct fnp_elf_sym *fnp_elf_find(const struct fnp_elf_syms *t, uint64_t addr)
{
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->v[mid].addr <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* A few steps back cover a large symbol holding smaller ones (hand-written assembly);
     * compiled functions never overlap, so the first candidate nearly always decides. */
    for (size_t i = lo, steps = 0; i > 0 && steps < 4; i--, steps++) {
        const struct fnp_elf_sym *s = &t->v[i - 1];
        if (s->addr == addr || addr - s->addr < s->size)
            return s;
    }
    return NULL;
}

void fnp_elf_free(struct fnp_elf_file *f)
{
    free(f->symtab.v);
    free(f->symtab.names);
    free(f->dynsym.v);
    free(f->dynsym.names);
    free(f->line_tables);
    memset(f, 0, sizeof *f);
}
