/* SPDX-License-Identifier: MIT */
/*
 * symbolizer/: addresses to pstats keys (source file, first line, function name).
 *
 * The one internal header of this folder. Two halves live here:
 *   - modmap.c: which loaded object holds a runtime address (dl_iterate_phdr). It has no
 *     dependency beyond libc and is linked into the hooks' library itself.
 *   - elf.c, dwarf.c, demangle.c, symbolize.c: ELF/DWARF reading through libelf and
 *     libdwarf. They make up libfnprof-symbolizer.so, which libfnprof.so loads with dlopen
 *     only when a profile is written (so a profiled host never maps libdwarf before exit),
 *     and they are linked directly into libfnprof.a and the fnprof command.
 */
#ifndef FNPROF_SYMBOLIZER_H
#define FNPROF_SYMBOLIZER_H

#include <stddef.h>
#include <stdint.h>

/* Functions the symbolizer module exports to the runtime's dlopen (see runtime/symload.c). */
#define FNP_SYM_EXPORT __attribute__((visibility("default")))

/* ---- modmap.c ---------------------------------------------------------------------- */

/* A loaded object and where its code sits at run time. */
struct fnp_module {
    char *path;    /* absolute path of the ELF file (the executable: /proc/self/exe target) */
    uint64_t bias; /* runtime address - ELF virtual address (dlpi_addr; 0 for non-PIE) */
    uint64_t lo;   /* lowest runtime address of its PT_LOAD segments */
    uint64_t hi;   /* one past the highest */
};

struct fnp_modmap {
    struct fnp_module *mods; /* sorted by lo, non-overlapping */
    size_t n;
};

/* Fills *map with the objects loaded now. Returns 0 or -errno; caller frees with
 * fnp_modmap_free. Not async-signal-safe (malloc). */
int fnp_modmap_load(struct fnp_modmap *map);
/* The module holding runtime address addr, or NULL. */
const struct fnp_module *fnp_modmap_find(const struct fnp_modmap *map, uint64_t addr);
/* Frees what fnp_modmap_load allocated; accepts a zeroed map. */
void fnp_modmap_free(struct fnp_modmap *map);

/* ---- symbolize.c (with elf.c, dwarf.c, demangle.c) --------------------------------- */

/* Where a symbol's name came from, best first. */
enum fnp_sym_source {
    FNP_SYM_NONE = 0,   /* nothing: name is "<object file name>+0x<offset>" ("libfoo.so+0x1234"),
                           file is the object path, line 0 */
    FNP_SYM_DYNSYM = 1, /* ELF .dynsym: file is the object path, line 0 */
    FNP_SYM_SYMTAB = 2, /* ELF .symtab: file is the object path, line 0 */
    FNP_SYM_DWARF = 3,  /* DWARF: file is the absolute source path, line is DW_AT_decl_line */
};

/* fnprof's MPI wrappers (runtime/mpi): every function of a library whose file name starts
 * with FNP_MPI_LIBRARY or FNP_MPICH_LIBRARY (the same wrappers built for MPICH beside Open
 * MPI) is keyed (FNP_MPI_FILE, 0, its name), whatever its source. */
#define FNP_MPI_LIBRARY "libfnprof-mpi.so"
#define FNP_MPICH_LIBRARY "libfnprof-mpich.so"
#define FNP_MPI_FILE "MPI"

struct fnp_symbol {
    const char *file; /* absolute, normalised ("a/./b/../c" -> "a/c"), valid UTF-8; or
                         FNP_MPI_FILE */
    const char *name; /* qualified, demangled ("ns::C<int>::f(int)" for C++, "f" for C) */
    uint32_t line;    /* first line of the function (decl line), 0 when unknown */
    uint32_t source;  /* enum fnp_sym_source */
};

struct fnp_symbolizer;

/* Reports a problem worth one line on stderr (without the "fnprof: " prefix, no newline).
 * Called at most once per module and cause. */
typedef void (*fnp_warn_fn)(void *ctx, const char *msg);

/* Returns a new symbolizer or NULL (out of memory). warn may be NULL. Caller frees with
 * fnp_symbolizer_free. Not thread-safe: one symbolizer per thread. */
FNP_SYM_EXPORT struct fnp_symbolizer *fnp_symbolizer_new(fnp_warn_fn warn, void *ctx);

/*
 * Resolves n addresses of one object file. addrs[i] are ELF virtual addresses in that file
 * (runtime address - bias), each the entry address a hook received (a function's first
 * instruction). out[i] is always filled, degrading DWARF -> .symtab -> .dynsym -> none;
 * strings in out are owned by s and valid until fnp_symbolizer_free. Compiler clones
 * (.constprop/.isra/.part/.cold) resolve to the key of the function they were cloned from.
 * The module is opened and indexed once per path and cached in s.
 * Returns 0, or -errno when memory ran out (out is then still filled, degraded).
 */
FNP_SYM_EXPORT int fnp_symbolizer_resolve(struct fnp_symbolizer *s, const char *module_path,
                                          const uint64_t *addrs, size_t n, struct fnp_symbol *out);

/*
 * Where separate debug files are looked for: dirs is a ':'-separated list of roots, each
 * searched as gdb searches its debug-file-directory (<root>/.build-id/xx/rest.debug, then
 * <root>/<module's folder>/<.gnu_debuglink name>); the module's own folder and its .debug/
 * subfolder are always searched. NULL restores the default, "/usr/lib/debug". Applies to
 * modules s opens afterwards. dirs is copied. Returns 0 or -ENOMEM (setting unchanged).
 */
FNP_SYM_EXPORT int fnp_symbolizer_set_debug_dirs(struct fnp_symbolizer *s, const char *dirs);

/* Where fnp_symbolizer_resolve reads a module's DWARF from (for fnprof doctor). */
enum fnp_debug_where {
    FNP_DEBUG_NONE = 0,     /* nowhere: names come from the ELF symbol tables */
    FNP_DEBUG_IN_FILE = 1,  /* the module itself */
    FNP_DEBUG_SEPARATE = 2, /* a separate debug file (build-id or .gnu_debuglink search) */
};

/*
 * Opens and caches module_path as fnp_symbolizer_resolve does, and says where its DWARF
 * comes from: returns an enum fnp_debug_where, with the file in where (the module's path or
 * the debug file's; "" for none), and in why what the symbolizer would warn about ("" when
 * nothing: a missing or refused debug file, unsupported or damaged DWARF); both truncated
 * to their length. Returns -ENOEXEC (not ELF), -errno of open(2) or -ENOMEM instead.
 */
int fnp_symbolizer_debug_info(struct fnp_symbolizer *s, const char *module_path, char *where,
                              size_t where_len, char *why, size_t why_len);

/* A function of an object file, as its symbol table lists it. */
struct fnp_sym_func {
    uint64_t addr;   /* ELF virtual address */
    const char *raw; /* the symbol's name (mangled), without clone suffixes and @VERSION */
};

/*
 * The functions of the object file at module_path (.symtab, else its separate debug file's,
 * else .dynsym), one per address, sorted by address, in *out (owned by s, valid until
 * fnp_symbolizer_free); *calls_hooks says how the file names -finstrument-functions'
 * enter hook: 0 not at all, bit 1 undefined (it calls the hook through the PLT), bit 2
 * defined (libfnprof.a linked in, or a library providing the hooks: libc, libfnprof). Returns 0,
 * -ENOENT when the file cannot be read as ELF, or -ENOMEM.
 */
FNP_SYM_EXPORT int fnp_symbolizer_functions(struct fnp_symbolizer *s, const char *module_path,
                                            const struct fnp_sym_func **out, size_t *n,
                                            int *calls_hooks);

/* Frees s and every string it returned; accepts NULL. */
FNP_SYM_EXPORT void fnp_symbolizer_free(struct fnp_symbolizer *s);

/* Signature of the above, for the runtime's dlsym. */
typedef struct fnp_symbolizer *(*fnp_symbolizer_new_fn)(fnp_warn_fn, void *);
typedef int (*fnp_symbolizer_resolve_fn)(struct fnp_symbolizer *, const char *, const uint64_t *,
                                         size_t, struct fnp_symbol *);
typedef void (*fnp_symbolizer_free_fn)(struct fnp_symbolizer *);
typedef int (*fnp_symbolizer_set_debug_dirs_fn)(struct fnp_symbolizer *, const char *);
typedef int (*fnp_symbolizer_functions_fn)(struct fnp_symbolizer *, const char *,
                                           const struct fnp_sym_func **, size_t *, int *);

/* ---- elf.c, dwarf.c, demangle.c: internal to symbolize.c (and its unit test) ---------- */

/* demangle.c */
/* Returns the demangled form of an Itanium C++ name ("_Z..."), else a copy of name; NULL
 * when memory ran out. Caller frees with free(). */
char *fnp_demangle(const char *name);

/* elf.c */
struct fnp_elf_sym {
    uint64_t addr;
    uint64_t size;    /* 0 when the symbol table gave none: then only addr itself matches */
    const char *name; /* raw (mangled) name without clone suffixes and @VERSION */
};

struct fnp_elf_syms {
    struct fnp_elf_sym *v; /* FUNC symbols sorted by addr, one per address */
    size_t n;
    char *names;     /* owns every name in v */
    int calls_hooks; /* the table names __cyg_profile_func_enter: 1 undefined, 2 defined */
};

enum fnp_elf_flag {
    FNP_ELF_DEBUG_INFO = 1u << 0,   /* has .debug_info or .zdebug_info */
    FNP_ELF_DEBUGALTLINK = 1u << 1, /* has .gnu_debugaltlink (dwz supplementary file) */
    FNP_ELF_ZSTD_DEBUG = 1u << 2,   /* a .debug_* section is compressed, but not with zlib */
    FNP_ELF_DEBUGLINK = 1u << 3,    /* debuglink and debuglink_crc hold .gnu_debuglink */
    FNP_ELF_BUILD_ID = 1u << 4,     /* build_id holds the GNU build-id note */
    FNP_ELF_BAD_LISTS = 1u << 5,    /* a .debug_rnglists/.debug_loclists table that libdwarf
                                       20210528 would crash on (elf.c says how) */
};

struct fnp_elf_line_table {
    uint64_t offset; /* in .debug_line, as DW_AT_stmt_list gives it */
    uint16_t version;
};

struct fnp_elf_file {
    struct fnp_elf_line_table *line_tables; /* sorted by offset */
    size_t nline_tables;
    struct fnp_elf_syms symtab;
    struct fnp_elf_syms dynsym;
    uint32_t flags; /* enum fnp_elf_flag */
    uint32_t build_id_len;
    uint8_t build_id[64];
    uint32_t debuglink_crc; /* CRC32 (zlib's) of the whole debug file */
    char debuglink[256];    /* its file name, without '/' */
};

/* Reads the FUNC symbols and flags of the ELF file at path. Returns 0, -ENOEXEC (not an ELF
 * file, or one too damaged to read), -ENOMEM or -errno of open(2). Caller frees with
 * fnp_elf_free, also after an error. */
int fnp_elf_load(const char *path, struct fnp_elf_file *out);
/* The version of the .debug_line table at offset, or -1 when f knows no table there. */
int fnp_elf_line_version(const struct fnp_elf_file *f, uint64_t offset);
/* The CRC32 of the whole file at path, as .gnu_debuglink records it. Returns 0 or -errno. */
int fnp_elf_crc32(const char *path, uint32_t *crc);
/* The symbol whose [addr, addr+size) holds addr, or NULL. Borrowed from t. */
const struct fnp_elf_sym *fnp_elf_find(const struct fnp_elf_syms *t, uint64_t addr);
/* Length of name without clone suffixes (".constprop.0", ".isra.0", ".part.0", ".cold", and
 * chains of them) and without "@VERSION". */
size_t fnp_elf_base_name_len(const char *name);
/* Accepts a zeroed or failed file. */
void fnp_elf_free(struct fnp_elf_file *f);

/* dwarf.c: the one file that calls libdwarf (docs/symbols.md).
 *
 * Lazy: opening reads the unit headers and each unit's address ranges only; a unit's
 * functions are indexed when an address asked for falls in its ranges. Profiles touch a
 * fraction of a big program's units, and a unit walk costs about 0.6 us per DIE. */
struct fnp_dwarf_func {
    const char *name;    /* scope-qualified DW_AT_name ("ns::C::f"), NULL when none */
    const char *linkage; /* mangled DW_AT_linkage_name, NULL when none */
    const char *file;    /* absolute normalised decl file (else the CU's file), NULL if none */
    uint32_t line;       /* decl line, 0 when unknown */
    uint32_t id;         /* 0, 1, 2... in the order functions were indexed: stable */
};

struct fnp_dwarf;

/* Opens the DWARF of the ELF file at path (never another file: symbolize.c chooses the
 * separate debug file) and reads its unit table. Returns 0; -ENODATA (no compilation unit);
 * -ENOTSUP (split DWARF: msg says so) or -EINVAL (damaged: msg says why), where *out may
 * still be set and name what it can; -ENOMEM. Caller closes *out with fnp_dwarf_close. */
int fnp_dwarf_open(const char *path, struct fnp_dwarf **out, char *msg, size_t msg_len);
/* Tells d the line table versions elf.c read from the same file (borrowed until
 * fnp_dwarf_close): then a unit's file table costs its header, not a decoding of all its
 * rows. Without it, or for a table elf.c does not know, libdwarf decodes the table. */
void fnp_dwarf_set_lines(struct fnp_dwarf *d, const struct fnp_elf_file *elf);
/* Indexes the functions of every unit whose ranges hold one of addrs[0..n): a first, shallow
 * walk of the unit (its top level and namespaces); a second, full one (nested functions,
 * classes) only for a unit that holds an address the first walk found in no function.
 * Returns 0, -EINVAL (damage met: msg says why; what could be read is indexed) or -ENOMEM.
 */
int fnp_dwarf_prepare(struct fnp_dwarf *d, const uint64_t *addrs, size_t n, char *msg,
                      size_t msg_len);
/* The indexed function whose ranges hold addr, preferring one that starts at addr; or NULL.
 * Its name, file and line are resolved now, on first lookup. Borrowed from d until the next
 * call on d. */
const struct fnp_dwarf_func *fnp_dwarf_find(struct fnp_dwarf *d, uint64_t addr);
/* The damage a lookup met since the last report (fnp_dwarf_find resolves lazily): returns
 * it as fnp_dwarf_prepare would, once; else 0. */
int fnp_dwarf_take_error(struct fnp_dwarf *d, char *msg, size_t msg_len);
/* Units in the file (0: no DWARF) and units walked so far, for tests and benchmarks. */
void fnp_dwarf_stats(const struct fnp_dwarf *d, size_t *units, size_t *walked);
/* Accepts NULL. */
void fnp_dwarf_close(struct fnp_dwarf *d);
/* Lexically normalises path in place: "//" and "/./" collapse, "x/.." cancels ("/a/./b/../c"
 * -> "/a/c"); ".." never climbs above "/" or above the start of a relative path. */
void fnp_dwarf_normalize_path(char *path);

#endif
