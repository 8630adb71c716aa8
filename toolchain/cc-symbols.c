/* SPDX-License-Identifier: MIT */
/*
 * The functions an object file defines, for the compile-time filter: read straight from the
 * ELF symbol table (no libelf: the wrapper runs on every compile of a build, and each shared
 * library it loads costs start-up time).
 */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cc-wrapper.h"

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *data = NULL;
    if (fseek(f, 0, SEEK_END) == 0) {
        long size = ftell(f);
        if (size > 0 && fseek(f, 0, SEEK_SET) == 0 && (data = malloc((size_t)size)) != NULL &&
            fread(data, 1, (size_t)size, f) != (size_t)size) {
            free(data);
            data = NULL;
        }
        *len = size > 0 ? (size_t)size : 0;
    }
    fclose(f);
    return data;
}

int fnp_cc_object_functions(const char *path, char ***names, size_t *n)
{
    *names = NULL;
    *n = 0;
    size_t len;
    char *data = slurp(path, &len);
    if (!data)
        return -1;
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)data;
    if (len < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
        eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_shentsize != sizeof(Elf64_Shdr) ||
        eh->e_shoff > len || (len - eh->e_shoff) / sizeof(Elf64_Shdr) < eh->e_shnum) {
        free(data);
        return -1;
    }
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(data + eh->e_shoff);
    int rc = -1;
    for (size_t i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum)
            continue;
        const Elf64_Shdr *strs = &sh[sh[i].sh_link];
        if (sh[i].sh_offset > len || sh[i].sh_size > len - sh[i].sh_offset ||
            strs->sh_offset > len || strs->sh_size > len - strs->sh_offset || strs->sh_size == 0)
            break;
        const Elf64_Sym *syms = (const Elf64_Sym *)(data + sh[i].sh_offset);
        size_t nsyms = sh[i].sh_size / sizeof(Elf64_Sym);
        const char *str = data + strs->sh_offset;
        *names = calloc(nsyms + 1, sizeof(**names));
        if (!*names)
            break;
        rc = 0;
        for (size_t j = 0; j < nsyms; j++) {
            if (ELF64_ST_TYPE(syms[j].st_info) != STT_FUNC || syms[j].st_shndx == SHN_UNDEF ||
                syms[j].st_name >= strs->sh_size)
                continue;
            const char *name = str + syms[j].st_name;
            if (!memchr(name, '\0', strs->sh_size - syms[j].st_name))
                continue;
            char *copy = strdup(name);
            if (!copy) {
                rc = -1;
                break;
            }
            (*names)[(*n)++] = copy;
        }
        break;
    }
    free(data);
    return rc;
}

int fnp_cc_object_instrumented(const char *path)
{
    size_t len;
    char *data = slurp(path, &len);
    if (!data)
        return -1;
    static const char hook[] = "__cyg_profile_func_enter", lto[] = ".gnu.lto_";
    /* The patchable build's objects (docs/patchable.md) name their site section instead. */
    static const char sites[] = "fnprof_sites", sleds[] = "xray_instr_map";
    int rc = memmem(data, len, hook, sizeof(hook) - 1) != NULL ||
             memmem(data, len, sites, sizeof(sites) - 1) != NULL ||
             memmem(data, len, sleds, sizeof(sleds) - 1) != NULL;
    /* gcc's LTO objects (.gnu.lto_ sections) and clang's bitcode ("BC\xc0\xde", or its
     * wrapper 0x0b17c0de) get their code, and its calls, only when linked. */
    if (!rc && (memmem(data, len, lto, sizeof(lto) - 1) ||
                (len >= 4 &&
                 (memcmp(data, "BC\xc0\xde", 4) == 0 || memcmp(data, "\xde\xc0\x17\x0b", 4) == 0))))
        rc = -1;
    free(data);
    return rc;
}

int fnp_cc_object_lto(const char *path)
{
    size_t len;
    char *data = slurp(path, &len);
    if (!data)
        return -1;
    static const char lto[] = ".gnu.lto_";
    int rc = memmem(data, len, lto, sizeof(lto) - 1) != NULL;
    free(data);
    return rc;
}
