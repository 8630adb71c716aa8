/* SPDX-License-Identifier: MIT */
/*
 * fnprof-cc and fnprof-c++: the compiler wrappers (docs/wrappers.md). cc-wrapper.c builds the
 * command and execs the compiler; cc-args.c reads the user's arguments the way the gcc and
 * clang drivers do, to know what the command will do (preprocess, compile, link); cc-detect.c
 * tells gcc from clang; cc-filter.c applies a filter file at compile time.
 */
#ifndef FNPROF_CC_WRAPPER_H
#define FNPROF_CC_WRAPPER_H

#include <stddef.h>
#include <sys/types.h>

/* Where system headers live on Debian: /usr/include holds libc's and libstdc++'s
 * (/usr/include/c++/12), /usr/lib/gcc gcc's own (the *intrin.h inline functions), also
 * reached as /usr/lib/gcc/<triple>/12/../../../../include/c++/12. gcc matches substrings.
 * Every gcc compile the wrapper runs gets it: the filter's first pass must instrument the
 * same functions as the real compile. */
#define FNP_CC_GCC_EXCLUDE "-finstrument-functions-exclude-file-list=/usr/include,/usr/lib/gcc"

/* What the compiler will do with the arguments, which decides what the wrapper adds. */
enum fnp_cc_mode {
    FNP_CC_PASS,       /* --version, -print-*, no input at all: add nothing */
    FNP_CC_PREPROCESS, /* -E, -M, -MM, -fsyntax-only: add nothing (-g changes -E's output) */
    FNP_CC_COMPILE,    /* -c, -S, -r, headers only: instrumentation flags, no runtime */
    FNP_CC_LINK,       /* everything else with inputs: flags and the runtime */
};

/* The instrumentation the user's own arguments ask for: the last of -finstrument-functions*
 * and -fno-instrument-functions wins, as in both drivers. */
enum fnp_cc_instr {
    FNP_CC_INSTR_UNSAID,
    FNP_CC_INSTR_ON,
    FNP_CC_INSTR_OFF,
};

struct fnp_cc_args {
    enum fnp_cc_mode mode;
    enum fnp_cc_instr instr;
    int is_static;   /* -static or -static-pie: the runtime's archive and its libraries */
    int no_stdlib;   /* -nostdlib, -nodefaultlibs, -nolibc: the user picks every library */
    size_t nsources; /* C, C++ or Objective-C sources (by -x or by suffix) */
    /* The sources' names, pointing into argv; the filter decides per source file. */
    char **sources;
    /* Object files, archives and shared objects given as inputs (.o, .a, .so, .lo), pointing
     * into argv: a link of these alone is checked for instrumented code. */
    char **objects;
    size_t nobjects;
    /* Expanded arguments (response files read), owned; freed by fnp_cc_args_free. */
    char **argv;
    size_t argc;
};

/* Reads args[0..n) (the user's arguments, without the program name): response files @file
 * are read (nested too) to classify, the arguments themselves are not changed. Returns 0, or
 * -1 with errno (ENOMEM) and *a freed. a is freed with fnp_cc_args_free. */
int fnp_cc_args_parse(char *const *args, size_t n, struct fnp_cc_args *a);
void fnp_cc_args_free(struct fnp_cc_args *a);

/* Which compiler family a command is: decides the flags that exclude system headers. */
enum fnp_cc_kind {
    FNP_CC_KIND_OTHER,
    FNP_CC_KIND_GCC,
    FNP_CC_KIND_CLANG,
};

/* The family of the compiler run as words[0..n) (FNPROF_CC split at blanks, "ccache gcc"):
 * FNPROF_CC_KIND when set, else a cached answer keyed by every word's resolved path, size and
 * mtime, else a probe (`<words> -dM -E -x c /dev/null`, looking for __clang__), cached in
 * $XDG_CACHE_HOME/fnprof (or ~/.cache/fnprof) when it can be written. Never fails: an
 * unknown compiler is FNP_CC_KIND_OTHER. *t (when not NULL) is filled from the same probe. */
struct fnp_cc_target {
    int x86_64;      /* __x86_64__ (FNPROF_CC_KIND set: the wrapper's own architecture) */
    int clang_major; /* __clang_major__, 0 for others (and with FNPROF_CC_KIND) */
};
enum fnp_cc_kind fnp_cc_detect(char *const *words, size_t n, struct fnp_cc_target *t);

/* The compile-time filter (cc-filter.c): given the filter file, the compiler and the
 * command, fills out[0..*n) with the arguments to add before the user's (malloc'd, caller
 * frees) and returns 0, or returns -1 with a message on stderr when the filter cannot be
 * read. *skip_instrument is set to 1 when the filter excludes all the command compiles:
 * compile without -finstrument-functions. */
#define FNP_CC_FILTER_MAX_ARGS 2
int fnp_cc_filter_args(const char *filter_path, char *const *cc, size_t ncc, enum fnp_cc_kind kind,
                       const struct fnp_cc_args *a, char *out[FNP_CC_FILTER_MAX_ARGS], size_t *n,
                       int *skip_instrument);

/* The names of the functions an ELF64 object file defines (STT_FUNC, local ones too), as
 * written in its symbol table (mangled). Returns 0 with *names a malloc'd array of *n
 * malloc'd strings (caller frees each and the array), or -1 when the file cannot be read or
 * is not ELF64. */
int fnp_cc_object_functions(const char *path, char ***names, size_t *n);

/* Whether the object file, archive or shared object at path calls the enter hook: 1 (its
 * bytes name __cyg_profile_func_enter: an undefined symbol's name in its string table; or,
 * built patchable, fnprof_sites or xray_instr_map: a section's name), 0 (they do not), -1
 * (unreadable, or LTO bitcode, whose calls are not in its bytes yet). */
int fnp_cc_object_instrumented(const char *path);

/* Whether the object file or archive at path holds gcc LTO objects (.gnu.lto_ sections):
 * 1, 0, or -1 when it cannot be read. */
int fnp_cc_object_lto(const char *path);

/* The flags of `--patchable` (cc-patchable.c) for a command that compiles sources or is an
 * LTO link, into out[0..*n) (static strings): 0, or -1 with one line on stderr when the
 * build cannot be patchable (not x86_64, -finstrument-functions given too, neither gcc nor
 * clang, the patchable directory missing). */
#define FNP_CC_PATCHABLE_MAX_ARGS 6
int fnp_cc_patchable_args(enum fnp_cc_kind kind, const struct fnp_cc_target *t,
                          const struct fnp_cc_args *a, char *out[FNP_CC_PATCHABLE_MAX_ARGS],
                          size_t *n);
/* Whether the command links with LTO (-flto given last, or an LTO object among the inputs):
 * then gcc compiles at the link, and needs the flags there. */
int fnp_cc_patchable_lto_link(const struct fnp_cc_args *a);

/* "fnprof: fnprof-cc: " and the message, one line on stderr. */
void fnp_cc_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Starts argv[0] (searched in PATH) with stdin and stderr on /dev/null, stdout on out_fd
 * (-1: /dev/null too). Returns its pid, or -1. The compiler runs that the wrapper reads
 * (the gcc/clang probe, the filter's first pass) go through here. */
pid_t fnp_cc_spawn(char *const *argv, int out_fd);
/* Waits for pid; 0 when it exited with status 0, else -1. */
int fnp_cc_wait(pid_t pid);

#endif
