/* SPDX-License-Identifier: MIT */
/*
 * fnprof-cc --filter FILE: a Score-P filter file (profile/filter.h) applied at compile time,
 * as far as the compiler can express it exactly (docs/wrappers.md, "Filters"):
 *
 * - File rules, per source file (its absolute path): a command whose every source is
 *   excluded compiles without -finstrument-functions. With gcc and several sources of which
 *   some are excluded, those are named in -finstrument-functions-exclude-file-list.
 * - Name rules, with gcc, on a command that compiles one source (-c or -S): gcc can only
 *   exclude by substring of a function's unqualified name, so the wrapper first compiles the
 *   source to a temporary object with the same flags, reads the functions it defines (the
 *   instrumented set: each instrumented function has its address taken by the hooks, so an
 *   out-of-line copy exists), asks the filter about each, and excludes an excluded function
 *   by its identifier only when that identifier occurs in no kept function's name. The
 *   others stay instrumented, and PROF_FILTER removes them at run time.
 *
 * Everything else (clang, which has no exclusion option; commands that compile and link in
 * one go) is left to the run-time filter, PROF_FILTER with the same file.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cc-wrapper.h"
#include "filter.h"

/* A source's absolute path, as the profile names files: the pattern "*\/vendor/\*" must
 * match "vendor/x.c" compiled from the project's top directory. */
static char *absolute(const char *path)
{
    char real[PATH_MAX];
    if (realpath(path, real))
        return strdup(real);
    if (path[0] == '/')
        return strdup(path);
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof(cwd)))
        return strdup(path);
    char *abs = NULL;
    if (asprintf(&abs, "%s/%s", cwd, path) < 0)
        return NULL;
    return abs;
}

static int file_excluded(const struct fnp_filter *f, const char *source)
{
    char *abs = absolute(source);
    if (!abs)
        return 0;
    /* No name: only the file rules can match (filter.c skips rules on an absent value). */
    int x = fnp_filter_excludes(f, abs, NULL, NULL);
    free(abs);
    return x;
}

typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);

/* libstdc++'s demangler, loaded only when a filter needs it: linking libstdc++ would cost
 * its start-up on every compile of a build. */
static demangle_fn demangler(void)
{
    static demangle_fn fn;
    static int tried;
    if (!tried) {
        tried = 1;
        void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
        if (h)
            fn = (demangle_fn)dlsym(h, "__cxa_demangle");
    }
    return fn;
}

/* The name as the profile shows it: demangled, without gcc's clone suffixes (".constprop.0",
 * " [clone .isra.0]"). Caller frees. */
static char *display_name(const char *sym)
{
    char *out = NULL;
    if (sym[0] == '_' && sym[1] == 'Z' && demangler()) {
        int status = 0;
        out = demangler()(sym, NULL, NULL, &status);
    }
    if (!out) {
        out = strdup(sym);
        if (out && !(sym[0] == '_' && sym[1] == 'Z'))
            out[strcspn(out, ".")] = '\0';
    }
    if (out) {
        char *clone = strstr(out, " [clone ");
        if (clone)
            *clone = '\0';
    }
    return out;
}

/* The mangled name without clone suffix, or NULL for a C name. Caller frees. */
static char *mangled_name(const char *sym)
{
    if (!(sym[0] == '_' && sym[1] == 'Z'))
        return NULL;
    char *out = strdup(sym);
    if (out)
        out[strcspn(out, ".")] = '\0';
    return out;
}

/* Backward from end-1 over a balanced group that ends with close; returns the index of its
 * opening character, or -1. */
static long skip_group_back(const char *s, long end, char open, char close)
{
    int depth = 0;
    for (long i = end - 1; i >= 0; i--) {
        if (s[i] == close)
            depth++;
        else if (s[i] == open && --depth == 0)
            return i;
    }
    return -1;
}

/* The identifier gcc's exclude-function-list can match: the function's own name without
 * scope, template arguments, parameters or return type ("ns::C<int>::get(int) const" ->
 * "get"). 0, or -1 when the name is not a plain identifier (operators, lambdas). */
static int identifier(const char *name, char *out, size_t n)
{
    long end = (long)strlen(name);
    const char *paren = strrchr(name, ')');
    if (paren) {
        end = skip_group_back(name, (long)(paren - name) + 1, '(', ')');
        if (end < 0)
            return -1;
    }
    if (end > 0 && name[end - 1] == '>') {
        end = skip_group_back(name, end, '<', '>');
        if (end < 0)
            return -1;
    }
    long start = end;
    while (start > 0 && name[start - 1] != ':' && name[start - 1] != ' ')
        start--;
    long len = end - start;
    if (len <= 0 || (size_t)len >= n)
        return -1;
    memcpy(out, name + start, (size_t)len);
    out[len] = '\0';
    const char *p = out[0] == '~' ? out + 1 : out;
    if (!(*p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')))
        return -1;
    for (; *p; p++)
        if (!(*p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
              (*p >= '0' && *p <= '9')))
            return -1;
    return strncmp(out, "operator", 8) == 0 ? -1 : 0;
}

/* The user's arguments for the first pass: the same compile, into a scratch object, without
 * outputs that belong to the real compile (dependency files) or that hide the code (LTO). */
static char **first_pass_argv(char *const *cc, size_t ncc, const struct fnp_cc_args *a,
                              const char *object)
{
    char **v = calloc(ncc + a->argc + 8, sizeof(*v));
    if (!v)
        return NULL;
    size_t n = 0;
    for (size_t i = 0; i < ncc; i++)
        v[n++] = cc[i];
    v[n++] = "-finstrument-functions";
    v[n++] = FNP_CC_GCC_EXCLUDE;
    for (size_t i = 0; i < a->argc; i++) {
        char *s = a->argv[i];
        if (strcmp(s, "-o") == 0 || strcmp(s, "-MF") == 0 || strcmp(s, "-MT") == 0 ||
            strcmp(s, "-MQ") == 0) {
            i++;
            continue;
        }
        if (strncmp(s, "-o", 2) == 0 || strncmp(s, "-MF", 3) == 0 || strncmp(s, "-MT", 3) == 0 ||
            strncmp(s, "-MQ", 3) == 0 || strcmp(s, "-MD") == 0 || strcmp(s, "-MMD") == 0 ||
            strcmp(s, "-MP") == 0 || strncmp(s, "-flto", 5) == 0 ||
            strncmp(s, "-save-temps", 11) == 0)
            continue;
        v[n++] = strcmp(s, "-S") == 0 ? "-c" : s;
    }
    v[n++] = "-c";
    v[n++] = "-fno-lto";
    v[n++] = "-o";
    v[n++] = (char *)object;
    v[n] = NULL;
    return v;
}

/* Appends item to the comma-separated *list (of length *len); 0, or -1 when memory ran
 * out (the list stays as it was). */
static int list_add(char **list, size_t *len, const char *item)
{
    char *grown = realloc(*list, *len + strlen(item) + 2);
    if (!grown)
        return -1;
    *list = grown;
    *len += (size_t)sprintf(grown + *len, "%s%s", *len ? "," : "", item);
    return 0;
}

/* Removes the scratch directory and what the first pass left in it (.o, .dwo, .su). */
static void remove_dir(const char *dir)
{
    static const char *const names[] = {"pass1.o", "pass1.dwo", "pass1.su", "pass1.ci"};
    char path[PATH_MAX];
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        /* a cut path would name some other file: never unlinked */
        int k = snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        if (k > 0 && (size_t)k < sizeof(path))
            unlink(path);
    }
    rmdir(dir);
}

/* The -finstrument-functions-exclude-function-list value for one source, or NULL when no
 * excluded function can be named exactly (or the first pass failed: the real compile will
 * then say why). *all is set when every function is excluded. Caller frees. */
static char *function_list(const struct fnp_filter *f, char *const *cc, size_t ncc,
                           const struct fnp_cc_args *a, int *all)
{
    *all = 0;
    const char *tmp = getenv("TMPDIR");
    char dir[PATH_MAX], object[PATH_MAX + 16];
    /* Room for the first pass's file names (remove_dir) inside PATH_MAX: a TMPDIR too long
     * for them gets no first pass, as a failed one (the real compile goes on). */
    int k = snprintf(dir, sizeof(dir), "%s/fnprof-cc-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (k < 0 || (size_t)k >= sizeof(dir) - 16 || !mkdtemp(dir))
        return NULL;
    snprintf(object, sizeof(object), "%s/pass1.o", dir);
    char **argv = first_pass_argv(cc, ncc, a, object);
    char **syms = NULL;
    size_t nsyms = 0;
    pid_t pid = argv ? fnp_cc_spawn(argv, -1) : -1;
    int ok =
        pid >= 0 && fnp_cc_wait(pid) == 0 && fnp_cc_object_functions(object, &syms, &nsyms) == 0;
    free(argv);
    remove_dir(dir);
    if (!ok)
        return NULL;

    char *source = absolute(a->sources[0]);
    char **names = calloc(nsyms + 1, sizeof(*names));
    char *excluded = calloc(nsyms + 1, 1);
    size_t nexcluded = 0;
    for (size_t i = 0; names && excluded && source && i < nsyms; i++) {
        names[i] = display_name(syms[i]);
        char *mangled = mangled_name(syms[i]);
        if (names[i] && fnp_filter_excludes(f, source, names[i], mangled)) {
            excluded[i] = 1;
            nexcluded++;
        }
        free(mangled);
    }
    *all = nsyms > 0 && nexcluded == nsyms;

    /* An identifier is safe when it is no substring of any kept function's name: gcc
     * compares it with the kept function's (shorter) printable name, whose identifiers all
     * appear in the full name. */
    char *list = NULL;
    size_t len = 0;
    for (size_t i = 0; names && excluded && !*all && i < nsyms; i++) {
        char id[512];
        if (!excluded[i] || !names[i] || identifier(names[i], id, sizeof(id)) < 0)
            continue;
        int safe = 1;
        for (size_t j = 0; j < nsyms && safe; j++)
            if (!excluded[j] && (!names[j] || strstr(names[j], id)))
                safe = 0;
        if (!safe || (list && strstr(list, id))) /* already named, or by a longer one */
            continue;
        if (list_add(&list, &len, id) < 0)
            break;
    }
    for (size_t i = 0; i < nsyms; i++) {
        free(syms[i]);
        if (names)
            free(names[i]);
    }
    free(syms);
    free(names);
    free(excluded);
    free(source);
    return list;
}

int fnp_cc_filter_args(const char *filter_path, char *const *cc, size_t ncc, enum fnp_cc_kind kind,
                       const struct fnp_cc_args *a, char *out[FNP_CC_FILTER_MAX_ARGS], size_t *n,
                       int *skip_instrument)
{
    *skip_instrument = 0;
    *n = 0;
    char err[512];
    struct fnp_filter *f = fnp_filter_load(filter_path, err, sizeof(err));
    if (!f) {
        fnp_cc_error("--filter: %s", err);
        return -1;
    }

    /* File rules: per source. */
    size_t nexcluded = 0;
    char *files = NULL;
    size_t flen = 0;
    for (size_t i = 0; fnp_filter_has_file_rules(f) && i < a->nsources; i++) {
        if (!file_excluded(f, a->sources[i]))
            continue;
        nexcluded++;
        /* gcc splits the list at commas: such a name cannot be listed. */
        if (!strchr(a->sources[i], ',') && list_add(&files, &flen, a->sources[i]) < 0)
            break;
    }
    if (a->nsources > 0 && nexcluded == a->nsources) {
        *skip_instrument = 1;
    } else if (files && kind == FNP_CC_KIND_GCC) {
        if (asprintf(&out[*n], "-finstrument-functions-exclude-file-list=%s", files) >= 0)
            (*n)++;
    }
    free(files);

    /* Name rules: gcc, one source compiled (not linked) in this command. */
    if (!*skip_instrument && kind == FNP_CC_KIND_GCC && fnp_filter_has_name_rules(f) &&
        a->mode == FNP_CC_COMPILE && a->nsources == 1) {
        int all = 0;
        char *list = function_list(f, cc, ncc, a, &all);
        if (all) {
            *skip_instrument = 1;
        } else if (list) {
            if (asprintf(&out[*n], "-finstrument-functions-exclude-function-list=%s", list) >= 0)
                (*n)++;
        }
        free(list);
    }
    fnp_filter_free(f);
    return 0;
}
