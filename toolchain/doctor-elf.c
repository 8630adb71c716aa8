/* SPDX-License-Identifier: MIT */
/*
 * fnprof doctor: what one ELF file says about -finstrument-functions' hooks, read with
 * libelf (the symbolizer's library): whether it calls them, defines them, whose they are,
 * and, on x86-64, how many places call the enter hook (one per instrumented function, one
 * more per inlined copy of one: gcc instruments an inlined body too, so a C++ program has
 * ten times more call sites than functions) and how many functions hold them (the
 * .symtab's functions, when the file has one).
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "doctor.h"

#define HOOK "__cyg_profile_func_enter"
#define HOOK_EXIT "__cyg_profile_func_exit"

/* Where calls to the enter hook may go: the hook itself, PLT stubs, GOT slots. */
#define MAX_TARGETS 16
struct targets {
    uint64_t direct[MAX_TARGETS]; /* a call rel32 landing here calls the hook */
    size_t ndirect;
    uint64_t slots[MAX_TARGETS]; /* a GOT slot holding the hook's address */
    size_t nslots;
    uint64_t exit_addr; /* the exit hook's own address, when defined here */
};

static void add(uint64_t *v, size_t *n, uint64_t addr)
{
    for (size_t i = 0; i < *n; i++)
        if (v[i] == addr)
            return;
    if (*n < MAX_TARGETS)
        v[(*n)++] = addr;
}

static bool has(const uint64_t *v, size_t n, uint64_t addr)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] == addr)
            return true;
    return false;
}

static bool is_fnprof_name(const char *name)
{
    return strncmp(name, "fnp_", 4) == 0 || strncmp(name, "fnprof_", 7) == 0;
}

/* The hook's entries in one symbol table, and the marks of fnprof's runtime and glibc. */
static void read_symbols(Elf *e, Elf_Scn *scn, const GElf_Shdr *sh, struct fnp_doctor_elf *out,
                         struct targets *t, uint64_t *ifunc_resolver)
{
    Elf_Data *data = elf_getdata(scn, NULL);
    size_t fsize = gelf_fsize(e, ELF_T_SYM, 1, EV_CURRENT);
    if (!data || !fsize)
        return;
    size_t count = data->d_size / fsize;
    bool dyn = sh->sh_type == SHT_DYNSYM;
    for (size_t i = 1; i < count; i++) {
        GElf_Sym sym;
        if (!gelf_getsym(data, (int)i, &sym))
            break;
        const char *name = elf_strptr(e, sh->sh_link, sym.st_name);
        if (!name || !name[0])
            continue;
        bool defined = sym.st_shndx != SHN_UNDEF;
        if (strcmp(name, HOOK) == 0) {
            if (!defined) {
                out->hook_undefined = 1;
                continue;
            }
            out->hook_defined = 1;
            if (dyn && GELF_ST_BIND(sym.st_info) != STB_LOCAL &&
                GELF_ST_VISIBILITY(sym.st_other) == STV_DEFAULT)
                out->hook_exported = 1;
            /* An ifunc's value is its resolver: calls reach it through a stub whose slot
             * an IRELATIVE relocation fills from that resolver. */
            if (GELF_ST_TYPE(sym.st_info) == STT_GNU_IFUNC)
                *ifunc_resolver = sym.st_value;
            else
                add(t->direct, &t->ndirect, sym.st_value);
        } else if (defined && strcmp(name, HOOK_EXIT) == 0) {
            t->exit_addr = sym.st_value;
        } else if (defined && is_fnprof_name(name)) {
            out->fnprof = 1;
        } else if (defined && dyn && strcmp(name, "gnu_get_libc_version") == 0) {
            out->glibc = 1;
        }
    }
}

/* GOT slots the loader fills with the hook's address (JUMP_SLOT, GLOB_DAT, or an
 * IRELATIVE whose resolver is the hook's). */
static void read_relocs(Elf *e, Elf_Scn *scn, const GElf_Shdr *sh, struct targets *t,
                        uint64_t ifunc_resolver)
{
    Elf_Data *data = elf_getdata(scn, NULL);
    Elf_Scn *symscn = elf_getscn(e, sh->sh_link);
    GElf_Shdr symsh;
    Elf_Data *syms = symscn && gelf_getshdr(symscn, &symsh) ? elf_getdata(symscn, NULL) : NULL;
    bool rela = sh->sh_type == SHT_RELA;
    size_t fsize = gelf_fsize(e, rela ? ELF_T_RELA : ELF_T_REL, 1, EV_CURRENT);
    if (!data || !fsize)
        return;
    size_t count = data->d_size / fsize;
    for (size_t i = 0; i < count; i++) {
        GElf_Rela r = {0};
        GElf_Rel rel;
        if (rela && !gelf_getrela(data, (int)i, &r))
            break;
        if (!rela) {
            if (!gelf_getrel(data, (int)i, &rel))
                break;
            r.r_offset = rel.r_offset;
            r.r_info = rel.r_info;
        }
        uint64_t type = GELF_R_TYPE(r.r_info), symi = GELF_R_SYM(r.r_info);
        if (type == R_X86_64_IRELATIVE) {
            if (ifunc_resolver && (uint64_t)r.r_addend == ifunc_resolver)
                add(t->slots, &t->nslots, r.r_offset);
            continue;
        }
        if ((type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) || !symi || !syms)
            continue;
        GElf_Sym sym;
        const char *name =
            gelf_getsym(syms, (int)symi, &sym) ? elf_strptr(e, symsh.sh_link, sym.st_name) : NULL;
        if (name && strcmp(name, HOOK) == 0)
            add(t->slots, &t->nslots, r.r_offset);
    }
}

static bool is_plt(const char *name)
{
    return strncmp(name, ".plt", 4) == 0 || strcmp(name, ".iplt") == 0;
}

static int32_t rel32(const unsigned char *p)
{
    uint32_t v = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    return (int32_t)v;
}

/* PLT stubs that jump through a hook slot ("jmp *slot(%rip)", ff 25): their first byte is
 * what call instructions target. Stubs are sh_entsize (else 16) bytes apart. */
static void find_stubs(Elf_Scn *scn, const GElf_Shdr *sh, struct targets *t)
{
    Elf_Data *data = elf_getdata(scn, NULL);
    if (!data || !data->d_buf || data->d_size < 6)
        return;
    const unsigned char *p = data->d_buf;
    uint64_t entsize = sh->sh_entsize ? sh->sh_entsize : 16;
    for (size_t i = 0; i + 6 <= data->d_size; i++) {
        if (p[i] != 0xff || p[i + 1] != 0x25)
            continue;
        uint64_t slot = sh->sh_addr + i + 6 + (int64_t)rel32(p + i + 2);
        if (has(t->slots, t->nslots, slot))
            add(t->direct, &t->ndirect, sh->sh_addr + i / entsize * entsize);
    }
}

/* The addresses of the enter hook's call sites, grown as they are found. */
struct sites {
    uint64_t *v;
    size_t n, cap;
    bool lost; /* out of memory: the functions are not counted */
};

static void add_site(struct sites *s, uint64_t addr)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 256;
        uint64_t *v = realloc(s->v, cap * sizeof(*v));
        if (!v) {
            s->lost = true;
            return;
        }
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = addr;
}

/* "call rel32" (e8) to a target, or "call *slot(%rip)" (ff 15, -fno-plt) through a slot;
 * each one's address into sites. */
static long count_calls(Elf_Scn *scn, const GElf_Shdr *sh, const struct targets *t,
                        struct sites *sites)
{
    Elf_Data *data = elf_getdata(scn, NULL);
    if (!data || !data->d_buf)
        return 0;
    const unsigned char *p = data->d_buf;
    long n = 0;
    for (size_t i = 0; i + 5 <= data->d_size; i++) {
        if ((p[i] == 0xe8 &&
             has(t->direct, t->ndirect, sh->sh_addr + i + 5 + (int64_t)rel32(p + i + 1))) ||
            (p[i] == 0xff && i + 6 <= data->d_size && p[i + 1] == 0x15 &&
             has(t->slots, t->nslots, sh->sh_addr + i + 6 + (int64_t)rel32(p + i + 2)))) {
            n++;
            add_site(sites, sh->sh_addr + i);
        }
    }
    return n;
}

struct range {
    uint64_t start, end;
};

static int cmp_range(const void *a, const void *b)
{
    const struct range *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* How many of the .symtab's functions hold at least one of the sites; -1 when the file has
 * no .symtab (stripped: the .dynsym lists only exported functions) or memory ran out. */
static long count_functions(Elf *e, struct sites *sites)
{
    if (sites->lost)
        return -1;
    Elf_Scn *scn = NULL;
    GElf_Shdr sh;
    while ((scn = elf_nextscn(e, scn)))
        if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
            break;
    Elf_Data *data = scn ? elf_getdata(scn, NULL) : NULL;
    size_t fsize = gelf_fsize(e, ELF_T_SYM, 1, EV_CURRENT);
    if (!data || !fsize)
        return -1;
    size_t count = data->d_size / fsize, n = 0;
    struct range *funcs = malloc((count ? count : 1) * sizeof(*funcs));
    if (!funcs)
        return -1;
    for (size_t i = 1; i < count; i++) {
        GElf_Sym sym;
        if (!gelf_getsym(data, (int)i, &sym))
            break;
        if (GELF_ST_TYPE(sym.st_info) == STT_FUNC && sym.st_shndx != SHN_UNDEF && sym.st_size)
            funcs[n++] = (struct range){sym.st_value, sym.st_value + sym.st_size};
    }
    qsort(funcs, n, sizeof(*funcs), cmp_range);
    qsort(sites->v, sites->n, sizeof(*sites->v), cmp_u64);
    /* Both sorted: one walk. A function's aliases share its range and count once. */
    long found = 0;
    size_t f = 0;
    uint64_t last_start = 0;
    bool counted = false;
    for (size_t i = 0; i < sites->n; i++) {
        uint64_t a = sites->v[i];
        while (f < n && funcs[f].end <= a)
            f++;
        /* the innermost range holding a: the last one starting at or before it */
        size_t g = f;
        while (g + 1 < n && funcs[g + 1].start <= a)
            g++;
        if (g >= n || funcs[g].start > a || a >= funcs[g].end)
            continue;
        if (counted && funcs[g].start == last_start)
            continue;
        found++;
        counted = true;
        last_start = funcs[g].start;
    }
    free(funcs);
    return found;
}

/* Whether the dynamic section marks a PIE (DF_1_PIE): a static PIE has no PT_INTERP. */
static bool pie_flagged(Elf *e, Elf_Scn *scn)
{
    Elf_Data *data = elf_getdata(scn, NULL);
    size_t fsize = gelf_fsize(e, ELF_T_DYN, 1, EV_CURRENT);
    if (!data || !fsize)
        return false;
    for (size_t i = 0; i < data->d_size / fsize; i++) {
        GElf_Dyn d;
        if (!gelf_getdyn(data, (int)i, &d) || d.d_tag == DT_NULL)
            break;
        if (d.d_tag == DT_FLAGS_1 && (d.d_un.d_val & DF_1_PIE))
            return true;
    }
    return false;
}

static void read_interp(int fd, const GElf_Phdr *ph, struct fnp_doctor_elf *out)
{
    size_t n = ph->p_filesz < sizeof out->interp_path ? ph->p_filesz : sizeof out->interp_path - 1;
    ssize_t got = pread(fd, out->interp_path, n, (off_t)ph->p_offset);
    out->interp_path[got > 0 ? got : 0] = '\0';
}

static void read_file(Elf *e, int fd, struct fnp_doctor_elf *out)
{
    GElf_Ehdr eh;
    gelf_getehdr(e, &eh);
    size_t nph = 0;
    elf_getphdrnum(e, &nph);
    for (size_t i = 0; i < nph; i++) {
        GElf_Phdr ph;
        if (!gelf_getphdr(e, (int)i, &ph))
            continue;
        if (ph.p_type == PT_DYNAMIC)
            out->dynamic = 1;
        else if (ph.p_type == PT_INTERP) {
            out->interp = 1;
            read_interp(fd, &ph, out);
        }
    }

    /* Symbols first: the relocations and the stubs are looked up by what they found. */
    struct targets t = {0};
    uint64_t ifunc_resolver = 0;
    bool pie_flag = false;
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(e, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh))
            continue;
        if (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM) {
            out->has_symtab |= sh.sh_type == SHT_SYMTAB;
            read_symbols(e, scn, &sh, out, &t, &ifunc_resolver);
        } else if (sh.sh_type == SHT_DYNAMIC) {
            pie_flag |= pie_flagged(e, scn);
        }
    }
    out->executable = eh.e_type == ET_EXEC || (eh.e_type == ET_DYN && (out->interp || pie_flag));
    out->pie = out->executable && eh.e_type == ET_DYN;

    /* glibc's no-op pair is one function under two names (libc.a's, in a static program):
     * a call there may be either hook, so none is counted. */
    size_t shstrndx = 0;
    if (eh.e_machine != EM_X86_64 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
        elf_getshdrstrndx(e, &shstrndx) != 0 ||
        (t.exit_addr && has(t.direct, t.ndirect, t.exit_addr))) {
        out->enter_calls = -1;
        out->functions = -1;
        return;
    }
    struct sites sites = {0};
    for (scn = NULL; (scn = elf_nextscn(e, scn));) {
        GElf_Shdr sh;
        if (gelf_getshdr(scn, &sh) && (sh.sh_type == SHT_RELA || sh.sh_type == SHT_REL))
            read_relocs(e, scn, &sh, &t, ifunc_resolver);
    }
    for (int pass = 0; pass < 2; pass++) {
        for (scn = NULL; (scn = elf_nextscn(e, scn));) {
            GElf_Shdr sh;
            if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
                !(sh.sh_flags & SHF_EXECINSTR))
                continue;
            const char *name = elf_strptr(e, shstrndx, sh.sh_name);
            bool plt = name && is_plt(name);
            if (pass == 0 && plt)
                find_stubs(scn, &sh, &t);
            else if (pass == 1 && !plt)
                out->enter_calls += count_calls(scn, &sh, &t, &sites);
        }
    }
    out->functions = count_functions(e, &sites);
    free(sites.v);
}

int fnp_doctor_elf_read(const char *path, struct fnp_doctor_elf *out)
{
    memset(out, 0, sizeof *out);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    elf_version(EV_CURRENT);
    Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    int rc = 0;
    if (!e || elf_kind(e) != ELF_K_ELF)
        rc = -ENOEXEC;
    else
        read_file(e, fd, out);
    elf_end(e);
    close(fd);
    return rc;
}
