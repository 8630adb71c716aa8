/* SPDX-License-Identifier: MIT */
/*
 * fnprof-cc and fnprof-c++ (one source, built twice): drop-in compilers for CC and CXX that
 * build with fnprof's instrumentation and link its runtime. docs/wrappers.md has every rule.
 *
 *   fnprof-cc [--filter FILE | --patchable] <the compiler's arguments>
 *
 * The compiler is $FNPROF_CC (fnprof-c++: $FNPROF_CXX), split at blanks ("ccache gcc"),
 * default cc (c++). The wrapper adds its flags around the user's arguments and execs the
 * compiler: no process stays between make and the compiler, so exit status, stdout and
 * stderr are the compiler's own.
 *   compile: -g and -finstrument-functions (clang: -finstrument-functions-after-inlining)
 *            before the user's arguments, so that -g0, -g3 or -fno-instrument-functions
 *            given by the user win; gcc also gets the system-header exclusion list.
 *   link:    the runtime after the user's arguments, wrapped in --no-as-needed, so that no
 *            ordering or --as-needed drops it (issue 14, item 7).
 *   --version, -print-*, -E, -M, -MM, -fsyntax-only, no input: nothing added.
 *   --patchable: patchable sites in place of -finstrument-functions (cc-patchable.c,
 *            docs/patchable.md); the link is the same.
 */
#include "cc-wrapper.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "libdir.h"

#ifndef FNPROF_STATIC_LIBS
#error "the build passes FNPROF_STATIC_LIBS, what libfnprof.a needs after it (fnprof.pc)"
#endif

#ifdef FNPROF_CC_CXX
#define SELF "fnprof-c++"
#define COMPILER_VAR "FNPROF_CXX"
#define DEFAULT_COMPILER "c++"
#else
#define SELF "fnprof-cc"
#define COMPILER_VAR "FNPROF_CC"
#define DEFAULT_COMPILER "cc"
#endif

/* Set in the compiler's environment: a wrapper that finds it set was started by the compiler
 * it started, which means FNPROF_CC names the wrapper (or a script running it): a loop. */
#define LOOP_VAR "FNPROF_CC_WRAPPED"

extern char **environ;

void fnp_cc_error(const char *fmt, ...)
{
    /* Built whole, then written once: one line even when make runs compilers in parallel. */
    char line[1024];
    int n = snprintf(line, sizeof(line), "fnprof: %s: ", SELF);
    va_list ap;
    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < sizeof(line))
        n += vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n >= sizeof(line) - 1)
        n = (int)sizeof(line) - 2;
    line[n++] = '\n';
    ssize_t w = write(2, line, (size_t)n);
    (void)w;
}

pid_t fnp_cc_spawn(char *const *argv, int out_fd)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    if (out_fd >= 0)
        posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
    else
        posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    return rc == 0 ? pid : -1;
}

int fnp_cc_wait(pid_t pid)
{
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* The compiler command: $FNPROF_CC split at blanks (no quoting, as make splits CC). */
static char **compiler_words(size_t *n)
{
    const char *value = getenv(COMPILER_VAR);
    if (!value || strspn(value, " \t") == strlen(value))
        value = DEFAULT_COMPILER;
    char *copy = strdup(value);
    char **words = calloc(strlen(value) / 2 + 2, sizeof(*words));
    if (!copy || !words) {
        free(copy);
        free(words);
        return NULL;
    }
    *n = 0;
    for (char *save = NULL, *w = strtok_r(copy, " \t", &save); w; w = strtok_r(NULL, " \t", &save))
        words[(*n)++] = w;
    return words; /* the strings live in copy, kept until exec */
}

/* The runtime's directory: where `fnprof run` finds libfnprof.so (libdir.c). */
static int find_libdir(char *out, size_t n)
{
    char lib[PATH_MAX], why[PATH_MAX + 128];
    if (fnp_runtime_file("libfnprof.so", lib, sizeof(lib), why, sizeof(why))) {
        fnp_cc_error("%s", why);
        return -1;
    }
    *strrchr(lib, '/') = '\0'; /* realpath's answer is absolute */
    snprintf(out, n, "%s", lib);
    return 0;
}

/*
 * A link of objects none of which calls the hooks makes a program whose own functions are
 * never recorded, and the wrapper is the last to see it: the objects were compiled without it (a
 * Makefile's own compiler variable, such as Open MPI's examples' $(MPICC), or a CFLAGS that dropped
 * the flag). Said in one line; the link goes on as asked. Only when every object could be read: an
 * unreadable one is the linker's to report, LTO bitcode holds no calls yet.
 */
static void check_objects(const struct fnp_cc_args *a)
{
    for (size_t i = 0; i < a->nobjects; i++)
        if (fnp_cc_object_instrumented(a->objects[i]) != 0)
            return;
    if (a->nobjects)
        fnp_cc_error("none of the objects linked calls the profiling hooks (compiled without "
                     "%s or -finstrument-functions: by a Makefile's own compiler variable, such "
                     "as $(MPICC)?): their functions will not be in the profile",
                     SELF);
}

struct cmd {
    char **v;
    size_t n;
};

static void add(struct cmd *c, char *s)
{
    c->v[c->n++] = s;
}

static void usage(void)
{
    printf("usage: %s [--filter FILE | --patchable] COMPILER-ARGUMENTS...\n"
           "\n"
           "Runs $%s (default %s) with fnprof's instrumentation: -g -finstrument-functions\n"
           "when compiling (system headers excluded), the fnprof runtime when linking.\n"
           "Everything else is the compiler's: its options, output and exit status.\n"
           "\n"
           "  --filter FILE   a Score-P filter file applied at compile time where the\n"
           "                  compiler allows (docs/wrappers.md)\n"
           "  --patchable     no-op sites at function entries and returns instead of\n"
           "                  hooks, patched when the program records (docs/patchable.md)\n"
           "  --fnprof-help   this help (--help is the compiler's)\n",
           SELF, COMPILER_VAR, DEFAULT_COMPILER);
}

int main(int argc, char **argv)
{
    if (getenv(LOOP_VAR)) {
        fnp_cc_error("%s runs %s again (a loop): set it to the real compiler", COMPILER_VAR, SELF);
        return 1;
    }

    /* Our own options come out; every other argument stays, in its order. */
    const char *filter = NULL;
    int patchable = 0;
    char **user = calloc((size_t)argc + 1, sizeof(*user));
    if (!user)
        return 1;
    size_t nuser = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--filter") == 0) {
            if (i + 1 == argc) {
                fnp_cc_error("--filter needs a file");
                return 2;
            }
            filter = argv[++i];
        } else if (strncmp(argv[i], "--filter=", 9) == 0) {
            filter = argv[i] + 9;
        } else if (strcmp(argv[i], "--patchable") == 0) {
            patchable = 1;
        } else if (strcmp(argv[i], "--fnprof-help") == 0) {
            usage();
            return 0;
        } else {
            user[nuser++] = argv[i];
        }
    }

    size_t ncc;
    char **cc = compiler_words(&ncc);
    struct fnp_cc_args a;
    if (!cc || fnp_cc_args_parse(user, nuser, &a) < 0) {
        fnp_cc_error("%s", strerror(ENOMEM));
        return 1;
    }

    if (patchable && filter) {
        fnp_cc_error("--filter applies to -finstrument-functions builds, not --patchable");
        return 2;
    }
    int instrument = a.mode >= FNP_CC_COMPILE && a.nsources > 0 && a.instr != FNP_CC_INSTR_OFF;
    /* gcc's LTO link compiles: the patchable flags go there too (cc-patchable.c). */
    int lto_link =
        patchable && !instrument && a.instr != FNP_CC_INSTR_OFF && fnp_cc_patchable_lto_link(&a);
    struct fnp_cc_target target = {0};
    enum fnp_cc_kind kind =
        instrument || lto_link ? fnp_cc_detect(cc, ncc, &target) : FNP_CC_KIND_OTHER;
    size_t nfilter = 0;
    char *filter_args[FNP_CC_FILTER_MAX_ARGS];
    int filter_skips = 0;
    if (instrument && filter &&
        fnp_cc_filter_args(filter, cc, ncc, kind, &a, filter_args, &nfilter, &filter_skips) < 0)
        return 1;
    size_t npatch = 0;
    char *patch_args[FNP_CC_PATCHABLE_MAX_ARGS];
    if (((instrument && patchable) || lto_link) &&
        fnp_cc_patchable_args(kind, &target, &a, patch_args, &npatch) < 0)
        return 1;

    /* The compiler, ours, the user's, the runtime's (a dozen at most). */
    struct cmd c = {calloc(ncc + nfilter + npatch + nuser + 32, sizeof(char *)), 0};
    if (!c.v)
        return 1;
    for (size_t i = 0; i < ncc; i++)
        add(&c, cc[i]);
    if (lto_link) {
        for (size_t i = 0; i < npatch; i++)
            add(&c, patch_args[i]);
    } else if (instrument && patchable) {
        add(&c, "-g");
        for (size_t i = 0; i < npatch; i++)
            add(&c, patch_args[i]);
    } else if (instrument) {
        add(&c, "-g");
        if (a.instr == FNP_CC_INSTR_UNSAID && !filter_skips)
            add(&c, kind == FNP_CC_KIND_CLANG ? "-finstrument-functions-after-inlining"
                                              : "-finstrument-functions");
        if (kind == FNP_CC_KIND_GCC)
            add(&c, FNP_CC_GCC_EXCLUDE);
        for (size_t i = 0; i < nfilter; i++)
            add(&c, filter_args[i]);
    }
    char libdir[PATH_MAX], lflag[PATH_MAX + 8];
    for (size_t i = 0; i < nuser; i++)
        add(&c, user[i]);
    if (a.mode == FNP_CC_LINK && !a.no_stdlib && !a.nsources && a.instr != FNP_CC_INSTR_OFF &&
        !patchable)
        check_objects(&a);
    if (a.mode == FNP_CC_LINK && !a.no_stdlib) {
        if (find_libdir(libdir, sizeof(libdir)) < 0)
            return 1;
        snprintf(lflag, sizeof(lflag), "-L%s", libdir);
        add(&c, lflag);
        if (a.is_static) {
            /* libfnprof.a and what it needs, as `pkg-config --static --libs fnprof`. */
            add(&c, "-lfnprof");
            static char static_libs[] = FNPROF_STATIC_LIBS;
            for (char *save = NULL, *w = strtok_r(static_libs, " ", &save); w;
                 w = strtok_r(NULL, " ", &save))
                add(&c, w);
        } else {
            /* -Xlinker pairs: a comma in the path would split a -Wl, list. */
            add(&c, "-Xlinker");
            add(&c, "-rpath");
            add(&c, "-Xlinker");
            add(&c, libdir);
            add(&c, "-Wl,--push-state,--no-as-needed");
            add(&c, "-lfnprof");
            add(&c, "-Wl,--pop-state");
        }
    }
    c.v[c.n] = NULL;

    if (getenv("FNPROF_CC_VERBOSE")) {
        /* One line, what runs: for build logs and the tests. */
        char line[8192];
        size_t len = 0;
        for (size_t i = 0; i < c.n && len < sizeof(line) - 2; i++) {
            int w = snprintf(line + len, sizeof(line) - len, "%s%s", i ? " " : "", c.v[i]);
            if (w < 0)
                break;
            len += (size_t)w;
        }
        fnp_cc_error("runs: %s", line);
    }

    setenv(LOOP_VAR, "1", 1);
    execvp(c.v[0], c.v);
    int err = errno;
    fnp_cc_error("%s (%s=%s): %s", c.v[0], COMPILER_VAR,
                 getenv(COMPILER_VAR) ? getenv(COMPILER_VAR) : "", strerror(err));
    return err == ENOENT ? 127 : 126;
}
