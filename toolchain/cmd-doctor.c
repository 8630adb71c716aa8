/* SPDX-License-Identifier: MIT */
/*
 * fnprof doctor: what a program's profile will and will not see, before running it.
 *
 * For the executable and every shared object its loader maps at start (doctor-load.c), in
 * the loader's order: does it call the -finstrument-functions hooks, where do those calls
 * bind (doctor-elf.c reads the symbols; the binding is worked out below the way the loader
 * searches), and where would the symbolizer find its DWARF (its own lookup,
 * fnp_symbolizer_debug_info). Then what that means for the profile, in words.
 *
 * Exit status: 0 the program will be profiled, 1 it will not (nothing instrumented, hooks
 * bound to glibc's no-ops, a library missing), 2 trouble (no such program, not ELF, usage).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "doctor.h"
#include "symbolizer.h"

#define CMD "doctor"

enum role { ROLE_EXECUTABLE, ROLE_PRELOAD, ROLE_NEEDED, ROLE_LOADER };

/* Whose hooks an instrumented module's calls reach. */
enum hooks_kind { HOOKS_NONE, HOOKS_FNPROF, HOOKS_GLIBC, HOOKS_OTHER };

struct module {
    const char *name; /* as the loader listed it; the executable: the path given */
    const char *path; /* NULL: not found */
    enum role role;
    int elf_err; /* fnp_doctor_elf_read's result */
    struct fnp_doctor_elf elf;
    int instrumented; /* 1 yes, 0 no, -1 cannot tell (a stripped static program) */
    int provides;     /* defines the hooks for others (libfnprof.so, glibc) */
    int debug;        /* enum fnp_debug_where, or -errno */
    char debug_where[PATH_MAX];
    char debug_why[PATH_MAX + 128];
    const struct module *binds;     /* where its hook calls go, as started plainly */
    const struct module *binds_run; /* the same under fnprof run (NULL: not preloaded) */
};

/* The libfnprof.so fnprof run would preload, as a module of its own (not traced). gather()
 * sets its path once it finds the library; NULL: not found, or a static program. */
static struct module run_lib = {
    .name = "libfnprof.so (fnprof run)",
    .role = ROLE_PRELOAD,
    .elf = {.hook_exported = 1, .hook_defined = 1, .fnprof = 1},
    .provides = 1,
};

struct doctor {
    const char *program; /* absolute */
    struct fnp_doctor_elf exe;
    int is_static;
    int run;                        /* --run: as fnprof run starts it */
    char run_preload[PATH_MAX * 2]; /* the LD_PRELOAD fnprof run sets; "" when unknown */
    struct fnp_doctor_libs libs;
    struct module *mods;
    size_t n;
};

static void usage(FILE *out)
{
    fprintf(out, "usage: fnprof doctor [--json] [--run] [--] PROGRAM [ARGS...]\n"
                 "\n"
                 "Says, without running PROGRAM, what its profile will and will not see: the\n"
                 "executable and every shared library its loader maps at start (as ldd lists\n"
                 "them), each with\n"
                 "  - whether it is instrumented (calls __cyg_profile_func_enter), and on x86-64\n"
                 "    how many functions call it (hook call sites, in a stripped file);\n"
                 "  - which hooks those calls bind to: fnprof's (libfnprof.so, or libfnprof.a\n"
                 "    linked in), or glibc's no-op pair, which records nothing;\n"
                 "  - where its DWARF debug info is (in the file, a separate debug file found by\n"
                 "    build-id or .gnu_debuglink under PROF_DEBUG_DIR, or none);\n"
                 "then the profile's blind spots. ARGS are ignored: paste a whole command line.\n"
                 "The loader runs in trace mode, as ldd runs it: only run doctor on a program\n"
                 "you would run.\n"
                 "\n"
                 "Exit status: 0 the program will be profiled, 1 it will not, 2 trouble (no\n"
                 "such program, not an ELF file).\n"
                 "\n"
                 "Options:\n"
                 "  --run       as 'fnprof run' starts it (libfnprof.so preloaded), not as\n"
                 "              'PROF_OUTPUT=out.prof PROGRAM' would\n"
                 "  --json      the same facts as JSON on stdout\n"
                 "  -h, --help  show this help\n");
}

/* Whether the file at path starts with "#!": a script, whose interpreter is what runs. */
static bool is_script(const char *path)
{
    char head[2] = {0};
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    size_t got = fread(head, 1, 2, f);
    fclose(f);
    return got == 2 && head[0] == '#' && head[1] == '!';
}

/* Whether a listed object is one of the LD_PRELOAD entries (split at spaces and colons, as
 * the loader splits them). */
static bool in_preload(const char *preload, const struct fnp_doctor_lib *lib)
{
    if (!preload)
        return false;
    char real[PATH_MAX];
    const char *p = preload;
    while (*p) {
        size_t len = strcspn(p, " :");
        if (len) {
            char item[PATH_MAX];
            snprintf(item, sizeof item, "%.*s", (int)len, p);
            if (strcmp(item, lib->name) == 0 ||
                (lib->path && realpath(item, real) && strcmp(real, lib->path) == 0))
                return true;
        }
        p += len;
        p += strspn(p, " :");
    }
    return false;
}

static void classify(struct module *m)
{
    const struct fnp_doctor_elf *e = &m->elf;
    if (m->elf_err || !m->path) {
        m->instrumented = 0;
        return;
    }
    /* A shared object that defines the hooks and calls them from nowhere serves them to
     * others: libfnprof.so, glibc's libc.so.6. */
    if (m->role != ROLE_EXECUTABLE && e->hook_defined && e->enter_calls <= 0 &&
        !e->hook_undefined) {
        m->provides = 1;
        m->instrumented = 0;
        return;
    }
    if (e->hook_undefined || e->enter_calls > 0)
        m->instrumented = 1;
    else if (e->hook_defined)
        m->instrumented = e->enter_calls < 0 ? 1 : 0; /* not counted: it was linked in */
    else if (m->role == ROLE_EXECUTABLE && !e->dynamic && !e->has_symtab)
        m->instrumented = -1; /* a stripped static program says nothing */
    else
        m->instrumented = 0;
}

/* The first module in the loader's search order that exports the hook: the executable,
 * then the list (preloads, then needed libraries breadth first). With_run puts fnprof run's
 * preload right after the executable. */
static const struct module *global_definer(const struct doctor *d, bool with_run)
{
    if (d->n && d->mods[0].elf.hook_exported)
        return &d->mods[0];
    if (with_run)
        return &run_lib;
    for (size_t i = 1; i < d->n; i++)
        if (d->mods[i].path && !d->mods[i].elf_err && d->mods[i].elf.hook_exported)
            return &d->mods[i];
    return NULL;
}

static const struct module *binding(const struct doctor *d, const struct module *m, bool with_run)
{
    if (m->instrumented != 1)
        return NULL;
    /* The executable's own definition takes its own calls (direct calls, or the first in
     * the search order); so does a library's unexported one. */
    if (m->elf.hook_defined && (m->role == ROLE_EXECUTABLE || !m->elf.hook_exported))
        return m;
    if (d->is_static)
        return NULL;
    return global_definer(d, with_run);
}

static enum hooks_kind kind_of(const struct module *b)
{
    if (!b)
        return HOOKS_NONE;
    if (b->elf.fnprof)
        return HOOKS_FNPROF;
    if (b->elf.glibc || (b->role == ROLE_EXECUTABLE && b->elf.hook_defined))
        return HOOKS_GLIBC; /* a static program without fnprof has libc.a's no-ops */
    return HOOKS_OTHER;
}

static const char *kind_word(enum hooks_kind k)
{
    switch (k) {
    case HOOKS_FNPROF:
        return "fnprof";
    case HOOKS_GLIBC:
        return "glibc-noop";
    case HOOKS_OTHER:
        return "other";
    default:
        return NULL;
    }
}

static const char *role_word(enum role r)
{
    static const char *const words[] = {"executable", "preload", "needed", "loader"};
    return words[r];
}

/* The file name a module is shown by: the loader's name, the executable's base name. */
static const char *shown(const struct module *m)
{
    if (m->role == ROLE_EXECUTABLE || m->name[0] == '/') {
        const char *slash = strrchr(m->name, '/');
        return slash ? slash + 1 : m->name;
    }
    return m->name;
}

/* ---- the verdict ------------------------------------------------------------------- */

struct verdict {
    bool profiles; /* some instrumented module binds to fnprof's hooks */
    int ninstr;    /* instrumented modules */
    int nfnprof;   /* of which bind to fnprof */
    int unknown;   /* a module doctor cannot tell about */
    const struct module *missing;
};

static struct verdict judge(const struct doctor *d, bool run)
{
    struct verdict v = {0};
    for (size_t i = 0; i < d->n; i++) {
        const struct module *m = &d->mods[i];
        if (!m->path && !v.missing)
            v.missing = m;
        if (m->instrumented < 0)
            v.unknown = 1;
        if (m->instrumented != 1)
            continue;
        v.ninstr++;
        if (kind_of(run ? m->binds_run : m->binds) == HOOKS_FNPROF)
            v.nfnprof++;
    }
    v.profiles = v.nfnprof > 0 && !v.missing;
    return v;
}

static void verdict_text(const struct doctor *d, const struct verdict *v, bool run, char *out,
                         size_t n)
{
    if (v->missing)
        snprintf(out, n, "the program will not start: the loader does not find %s",
                 v->missing->name);
    else if (v->unknown && !v->ninstr)
        snprintf(out, n,
                 "cannot tell: a static program stripped of its symbol table; profile it "
                 "once to see");
    else if (!v->ninstr)
        snprintf(out, n,
                 "nothing to profile: no module calls __cyg_profile_func_enter; build with "
                 "-finstrument-functions (fnprof-cc, fnprof_instrument(), pkg-config fnprof)");
    else if (v->nfnprof == 0 && d->is_static)
        snprintf(out, n,
                 "PROF_OUTPUT will write nothing: the program is static and its hooks are "
                 "glibc's no-ops; link it with libfnprof.a (pkg-config --static --libs "
                 "fnprof; fnprof run cannot preload into a static program)");
    else if (v->nfnprof == 0 && !run)
        snprintf(out, n,
                 "PROF_OUTPUT will write nothing: the hooks bind to glibc's no-ops (or "
                 "another library's); link with -lfnprof after your objects, or run under "
                 "fnprof run");
    else if (v->nfnprof == 0)
        snprintf(out, n,
                 "fnprof run will record nothing: the executable's own hooks take its calls");
    else if (v->nfnprof < v->ninstr)
        snprintf(out, n,
                 "will be profiled, but only %d of the %d instrumented modules: the others' "
                 "calls reach hooks that record nothing",
                 v->nfnprof, v->ninstr);
    else
        snprintf(out, n, "will be profiled: %d instrumented module%s, hooks from fnprof", v->ninstr,
                 v->ninstr == 1 ? "" : "s");
}

/* ---- blind spots ------------------------------------------------------------------- */

struct text {
    char **v;
    size_t n;
};

__attribute__((format(printf, 2, 3))) static void say(struct text *t, const char *fmt, ...)
{
    char *s = NULL;
    va_list ap;
    va_start(ap, fmt);
    int r = vasprintf(&s, fmt, ap);
    va_end(ap);
    char **v = r < 0 ? NULL : realloc(t->v, (t->n + 1) * sizeof *v);
    if (!v) {
        free(s);
        return;
    }
    t->v = v;
    t->v[t->n++] = s;
}

static void text_free(struct text *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->v[i]);
    free(t->v);
}

/* Module names joined with ", ", those for which pick says yes; "" when none. */
static void names(const struct doctor *d,
                  bool (*pick)(const struct doctor *, const struct module *), char *out, size_t n)
{
    size_t len = 0;
    out[0] = '\0';
    for (size_t i = 0; i < d->n && len < n; i++)
        if (pick(d, &d->mods[i]))
            len +=
                (size_t)snprintf(out + len, n - len, "%s%s", len ? ", " : "", shown(&d->mods[i]));
}

static bool uninstrumented(const struct doctor *d, const struct module *m)
{
    (void)d;
    return m->path && m->instrumented == 0 && !m->elf.fnprof && m->role != ROLE_LOADER;
}

static bool lost(const struct doctor *d, const struct module *m)
{
    return m->instrumented == 1 && kind_of(d->run ? m->binds_run : m->binds) != HOOKS_FNPROF;
}

static bool no_dwarf(const struct doctor *d, const struct module *m)
{
    (void)d;
    return m->instrumented == 1 && m->debug == FNP_DEBUG_NONE;
}

static void blind_spots(const struct doctor *d, struct text *t)
{
    char list[4096];
    names(d, uninstrumented, list, sizeof list);
    if (d->is_static)
        snprintf(list, sizeof list,
                 "the C library and any other library linked in without "
                 "-finstrument-functions (they are inside the program)");
    if (list[0]) {
        say(t,
            "not instrumented: %s. Time spent in their code counts as the own time (tottime) "
            "of the instrumented function that called them; none of their functions appear.",
            list);
        say(t, "callbacks from uninstrumented code into instrumented functions (qsort's "
               "comparator, a thread's start routine, atexit and signal handlers) appear as "
               "called by the last instrumented function on the stack, or as roots.");
    }
    names(d, lost, list, sizeof list);
    if (list[0])
        say(t,
            "instrumented, but their hook calls reach code that records nothing: %s. Their "
            "functions are missing and their time goes to their callers.",
            list);
    names(d, no_dwarf, list, sizeof list);
    if (list[0])
        say(t,
            "no DWARF for %s: functions are named from the ELF symbol table, with the object "
            "file as their file and 0 as their line; static functions of a stripped file show "
            "as file+offset.",
            list);
    if (d->exe.hook_defined && d->exe.fnprof && !d->is_static && !d->exe.hook_exported)
        for (size_t i = 1; i < d->n; i++)
            if (d->mods[i].instrumented == 1) {
                say(t, "libfnprof.a is linked into the executable without exporting the "
                       "hooks: instrumented shared libraries call other hooks; link with "
                       "-lfnprof (the shared library) to profile them too.");
                break;
            }
    say(t, "functions that are inlined or built without -finstrument-functions (or excluded by "
           "a filter) count as their caller's own time.");
    if (!d->is_static)
        say(t, "libraries loaded later with dlopen are not listed here; if instrumented, their "
               "calls bind to the same hooks as the libraries above.");
}

/* ---- output ------------------------------------------------------------------------ */

static void instr_text(const struct module *m, char *out, size_t n)
{
    if (!m->path)
        snprintf(out, n, "not found");
    else if (m->elf_err)
        snprintf(out, n, "unreadable");
    else if (m->provides && m->elf.fnprof)
        snprintf(out, n, "defines hooks");
    else if (m->provides)
        snprintf(out, n, "no (no-op hooks)");
    else if (m->instrumented < 0)
        snprintf(out, n, "cannot tell");
    else if (!m->instrumented)
        snprintf(out, n, "no");
    else if (m->elf.functions > 0)
        snprintf(out, n, "yes, %ld function%s", m->elf.functions, m->elf.functions == 1 ? "" : "s");
    else if (m->elf.enter_calls > 0) /* stripped: its functions cannot be told apart */
        snprintf(out, n, "yes, %ld hook call site%s", m->elf.enter_calls,
                 m->elf.enter_calls == 1 ? "" : "s");
    else
        snprintf(out, n, "yes");
}

static void binds_text(const struct module *m, const struct module *b, char *out, size_t n)
{
    if (m->instrumented != 1) {
        snprintf(out, n, "-");
        return;
    }
    switch (kind_of(b)) {
    case HOOKS_FNPROF:
        snprintf(out, n, "%s (fnprof)", b == m ? "itself" : shown(b));
        break;
    case HOOKS_GLIBC:
        snprintf(out, n, "%s (glibc no-op)", b == m ? "itself" : shown(b));
        break;
    case HOOKS_OTHER:
        snprintf(out, n, "%s (not fnprof)", shown(b));
        break;
    default:
        snprintf(out, n, "nothing");
        break;
    }
}

static void debug_text(const struct module *m, char *out, size_t n)
{
    if (!m->path || m->debug < 0)
        snprintf(out, n, "-");
    else if (m->debug == FNP_DEBUG_IN_FILE)
        snprintf(out, n, "in the file%s%s", m->debug_why[0] ? "; " : "", m->debug_why);
    else if (m->debug == FNP_DEBUG_SEPARATE)
        snprintf(out, n, "%s%s%s", m->debug_where, m->debug_why[0] ? "; " : "", m->debug_why);
    else
        snprintf(out, n, "none%s%s", m->debug_why[0] ? ": " : "", m->debug_why);
}

/* What the executable is: the JSON's word, then the table's. */
static const char *const *program_kind(const struct doctor *d)
{
    static const char *const kinds[][2] = {
        {"static", "static executable"},
        {"static-pie", "static PIE executable"},
        {"pie", "PIE executable"},
        {"executable", "executable (not PIE)"},
    };
    return kinds[d->is_static ? (d->exe.pie ? 1 : 0) : (d->exe.pie ? 2 : 3)];
}

static void print_table(const struct doctor *d, const struct verdict *v, const struct verdict *vr,
                        const struct text *spots)
{
    printf("program: %s\n", d->program);
    printf("         %s%s%s\n", program_kind(d)[1], d->exe.interp ? ", loader " : "",
           d->exe.interp ? d->exe.interp_path : "");
    if (d->run)
        printf("         as fnprof run starts it: LD_PRELOAD=%s\n", d->run_preload);
    printf("\n");

    int w[3] = {6, 12, 16}; /* the headers' lengths */
    /* debug_text's longest: the file, "; ", the note */
    char instr[64], binds[PATH_MAX + 32],
        debug[sizeof d->mods[0].debug_where + sizeof d->mods[0].debug_why + 16];
    for (size_t i = 0; i < d->n; i++) {
        const struct module *m = &d->mods[i];
        instr_text(m, instr, sizeof instr);
        binds_text(m, d->run ? m->binds_run : m->binds, binds, sizeof binds);
        int l[3] = {(int)strlen(shown(m)), (int)strlen(instr), (int)strlen(binds)};
        for (int k = 0; k < 3; k++)
            if (l[k] > w[k])
                w[k] = l[k];
    }
    printf("  %-*s  %-*s  %-*s  %s\n", w[0], "module", w[1], "instrumented", w[2],
           "hook calls go to", "debug info");
    for (size_t i = 0; i < d->n; i++) {
        const struct module *m = &d->mods[i];
        instr_text(m, instr, sizeof instr);
        binds_text(m, d->run ? m->binds_run : m->binds, binds, sizeof binds);
        debug_text(m, debug, sizeof debug);
        printf("  %-*s  %-*s  %-*s  %s\n", w[0], shown(m), w[1], instr, w[2], binds, debug);
    }
    printf("\n  files:\n");
    for (size_t i = 0; i < d->n; i++)
        printf("  %-*s  %s%s\n", w[0], shown(&d->mods[i]),
               d->mods[i].path ? d->mods[i].path : "not found",
               d->mods[i].role == ROLE_PRELOAD ? " (preloaded)" : "");
    if (d->libs.error)
        printf("  the loader said: %s\n", d->libs.error);

    char line[1024];
    verdict_text(d, d->run ? vr : v, d->run, line, sizeof line);
    printf("\nverdict: %s\n", line);
    if (!d->run && !d->is_static && run_lib.path) {
        verdict_text(d, vr, true, line, sizeof line);
        printf("under fnprof run: %s\n", line);
    }
    printf("\nblind spots:\n");
    for (size_t i = 0; i < spots->n; i++)
        printf("  - %s\n", spots->v[i]);
}

static void json_str(struct fnp_sink *s, const char *key, const char *v, bool comma)
{
    fnp_sink_printf(s, "%s\"%s\": ", comma ? ", " : "", key);
    if (v)
        fnp_json_string(s, v);
    else
        fnp_sink_puts(s, "null");
}

static void json_module_ref(struct fnp_sink *s, const char *key, const struct module *b)
{
    fnp_sink_printf(s, ", \"%s\": ", key);
    if (!b) {
        fnp_sink_puts(s, "null");
        return;
    }
    fnp_sink_puts(s, "{");
    json_str(s, "name", b == &run_lib ? "libfnprof.so" : shown(b), false);
    json_str(s, "path", b->path, true);
    json_str(s, "kind", kind_word(kind_of(b)), true);
    fnp_sink_puts(s, "}");
}

static int print_json(const struct doctor *d, const struct verdict *v, const struct verdict *vr,
                      const struct text *spots)
{
    struct fnp_sink s;
    fflush(stdout);
    if (fnp_sink_fd(&s, STDOUT_FILENO))
        return -1;
    fnp_sink_puts(&s, "{");
    json_str(&s, "program", d->program, false);
    json_str(&s, "kind", program_kind(d)[0], true);
    json_str(&s, "loader", d->exe.interp ? d->exe.interp_path : NULL, true);
    json_str(&s, "mode", d->run ? "fnprof run" : "plain", true);
    fnp_sink_puts(&s, ", \"modules\": [");
    for (size_t i = 0; i < d->n; i++) {
        const struct module *m = &d->mods[i];
        fnp_sink_puts(&s, i ? ",\n  {" : "\n  {");
        json_str(&s, "name", shown(m), false);
        json_str(&s, "path", m->path, true);
        json_str(&s, "role", role_word(m->role), true);
        fnp_sink_printf(&s, ", \"found\": %s", m->path ? "true" : "false");
        fnp_sink_printf(&s, ", \"instrumented\": %s",
                        m->instrumented < 0 ? "null"
                        : m->instrumented   ? "true"
                                            : "false");
        if (m->instrumented == 1 && m->elf.functions >= 0)
            fnp_sink_printf(&s, ", \"functions\": %ld", m->elf.functions);
        else
            fnp_sink_puts(&s, ", \"functions\": null");
        if (m->instrumented == 1 && m->elf.enter_calls >= 0)
            fnp_sink_printf(&s, ", \"hook_call_sites\": %ld", m->elf.enter_calls);
        else
            fnp_sink_puts(&s, ", \"hook_call_sites\": null");
        fnp_sink_printf(&s, ", \"defines_hooks\": %s", m->elf.hook_defined ? "true" : "false");
        json_module_ref(&s, "hooks", m->binds);
        json_module_ref(&s, "hooks_under_run", m->binds_run);
        const char *where = m->debug == FNP_DEBUG_IN_FILE    ? "in-file"
                            : m->debug == FNP_DEBUG_SEPARATE ? "separate"
                            : m->debug == FNP_DEBUG_NONE     ? "none"
                                                             : NULL;
        json_str(&s, "debug_info", m->path ? where : NULL, true);
        json_str(&s, "debug_file", m->debug > 0 ? m->debug_where : NULL, true);
        json_str(&s, "debug_note", m->debug_why[0] ? m->debug_why : NULL, true);
        fnp_sink_puts(&s, "}");
    }
    char line[1024];
    verdict_text(d, d->run ? vr : v, d->run, line, sizeof line);
    fnp_sink_printf(&s, "],\n \"will_profile\": %s",
                    (d->run ? vr : v)->profiles ? "true" : "false");
    fnp_sink_printf(&s, ", \"will_profile_under_run\": %s", vr->profiles ? "true" : "false");
    json_str(&s, "verdict", line, true);
    fnp_sink_puts(&s, ",\n \"blind_spots\": [");
    for (size_t i = 0; i < spots->n; i++) {
        fnp_sink_puts(&s, i ? ",\n  " : "\n  ");
        fnp_json_string(&s, spots->v[i]);
    }
    fnp_sink_puts(&s, "]}\n");
    int err = fnp_sink_flush(&s);
    fnp_sink_free(&s);
    return err;
}

/* ---- the run ----------------------------------------------------------------------- */

/* Fills d->mods: the executable, then what the loader listed. Returns 0, or an exit status
 * after saying why. */
static int gather(struct doctor *d)
{
    const char *preload = getenv("LD_PRELOAD");
    static char run_path[PATH_MAX];
    /* Only --run needs the library; the plain answer does without it. */
    bool have_run =
        !d->is_static && fnp_run_library(d->run ? CMD : NULL, run_path, sizeof run_path) == 0;
    if (have_run) {
        run_lib.path = run_path;
        snprintf(d->run_preload, sizeof d->run_preload, "%s%s%s", run_path,
                 preload && *preload ? ":" : "", preload && *preload ? preload : "");
    } else if (d->run && !d->is_static) {
        return FNP_EXIT_USAGE; /* fnp_run_library said why */
    }
    if (d->exe.interp) {
        int rc = fnp_doctor_libs_load(d->exe.interp_path, d->program,
                                      d->run ? d->run_preload : NULL, &d->libs);
        if (rc) {
            fnp_cli_error(CMD, "%s: the loader cannot list its libraries: %s", d->program,
                          d->libs.error ? d->libs.error : strerror(-rc));
            return FNP_EXIT_USAGE;
        }
    }
    d->mods = calloc(d->libs.n + 1, sizeof *d->mods);
    if (!d->mods) {
        fnp_cli_error(CMD, "out of memory");
        return FNP_EXIT_FAILURE;
    }
    d->mods[0] = (struct module){
        .name = d->program, .path = d->program, .role = ROLE_EXECUTABLE, .elf = d->exe};
    d->n = 1;
    char interp_real[PATH_MAX] = "";
    if (d->exe.interp && !realpath(d->exe.interp_path, interp_real))
        snprintf(interp_real, sizeof interp_real, "%s", d->exe.interp_path);
    for (size_t i = 0; i < d->libs.n; i++) {
        const struct fnp_doctor_lib *l = &d->libs.v[i];
        struct module *m = &d->mods[d->n++];
        char real[PATH_MAX];
        m->name = l->name;
        m->path = l->path;
        if (l->path && realpath(l->path, real) && strcmp(real, interp_real) == 0)
            m->role = ROLE_LOADER;
        else if (in_preload(d->run ? d->run_preload : preload, l))
            m->role = ROLE_PRELOAD;
        else
            m->role = ROLE_NEEDED;
        if (m->path)
            m->elf_err = fnp_doctor_elf_read(m->path, &m->elf);
    }
    return 0;
}

/* Where each module's DWARF comes from, by the symbolizer's own search. */
static void find_debug(struct doctor *d)
{
    struct fnp_symbolizer *s = fnp_symbolizer_new(NULL, NULL);
    if (s && getenv("PROF_DEBUG_DIR"))
        fnp_symbolizer_set_debug_dirs(s, getenv("PROF_DEBUG_DIR"));
    for (size_t i = 0; i < d->n; i++) {
        struct module *m = &d->mods[i];
        m->debug =
            !s ? -ENOMEM
            : !m->path || m->elf_err
                ? -ENOENT
                : fnp_symbolizer_debug_info(s, m->path, m->debug_where, sizeof m->debug_where,
                                            m->debug_why, sizeof m->debug_why);
    }
    fnp_symbolizer_free(s);
}

int fnp_cmd_doctor(int argc, char **argv)
{
    static const struct option opts[] = {
        {"json", no_argument, NULL, 'j'},
        {"run", no_argument, NULL, 'r'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct doctor d = {0};
    int json = 0, c;
    opterr = 0;
    /* '+': options end at PROGRAM, whose own options are its business. */
    while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
        switch (c) {
        case 'j':
            json = 1;
            break;
        case 'r':
            d.run = 1;
            break;
        case 'h':
            usage(stdout);
            return FNP_EXIT_OK;
        default:
            if (optopt)
                return fnp_cli_usage_error(CMD, "unknown option '-%c'", optopt);
            return fnp_cli_usage_error(CMD, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind == argc)
        return fnp_cli_usage_error(CMD, "no program given");

    char program[PATH_MAX];
    int err = fnp_cli_which(argv[optind], program);
    /* A bare name that PATH lacks but the current directory has: the user meant that file
     * (doctor only reads it), though a shell, and fnprof run, would not find it. */
    struct stat st;
    if (err == -ENOENT && !strchr(argv[optind], '/') && stat(argv[optind], &st) == 0 &&
        S_ISREG(st.st_mode) && realpath(argv[optind], program)) {
        fprintf(stderr,
                "fnprof: %s: %s: not in PATH; reading ./%s, the file in this directory (run "
                "it as ./%s)\n",
                CMD, argv[optind], argv[optind], argv[optind]);
        err = 0;
    }
    if (err) {
        fnp_cli_error(CMD, "%s: %s", argv[optind], strerror(-err));
        return FNP_EXIT_USAGE;
    }
    d.program = program;
    err = fnp_doctor_elf_read(program, &d.exe);
    if (err == -ENOEXEC) {
        if (is_script(program))
            fnp_cli_error(CMD, "%s: a script, not an ELF file: give doctor the program it runs",
                          argv[optind]);
        else
            fnp_cli_error(CMD, "%s: not an ELF file", argv[optind]);
        return FNP_EXIT_USAGE;
    }
    if (err) {
        fnp_cli_error(CMD, "%s: %s", argv[optind], strerror(-err));
        return FNP_EXIT_USAGE;
    }
    if (!d.exe.executable) {
        fnp_cli_error(CMD,
                      "%s: a shared library, not a program: give doctor a program that "
                      "loads it",
                      argv[optind]);
        return FNP_EXIT_USAGE;
    }
    d.is_static = !d.exe.interp;
    if (d.is_static && d.run) {
        fnp_cli_error(CMD, "%s: a static program: fnprof run cannot preload into it", argv[optind]);
        return FNP_EXIT_FAILURE;
    }

    int rc = gather(&d);
    if (!rc) {
        for (size_t i = 0; i < d.n; i++)
            classify(&d.mods[i]);
        /* Under --run the traced list holds the preload itself; else fnprof run's is put
         * where the loader would put it, right after the executable. */
        for (size_t i = 0; i < d.n; i++) {
            struct module *m = &d.mods[i];
            m->binds = binding(&d, m, false);
            m->binds_run = d.run ? m->binds : run_lib.path ? binding(&d, m, true) : NULL;
        }
        find_debug(&d);
        struct verdict v = judge(&d, false), vr = judge(&d, true);
        struct text spots = {0};
        blind_spots(&d, &spots);
        if (json) {
            if (print_json(&d, &v, &vr, &spots)) {
                fnp_cli_error(CMD, "standard output: %s", strerror(errno));
                rc = FNP_EXIT_FAILURE;
            }
        } else {
            print_table(&d, &v, &vr, &spots);
        }
        text_free(&spots);
        if (!rc)
            rc = (d.run ? vr : v).profiles ? FNP_EXIT_OK : FNP_EXIT_FAILURE;
    }
    free(d.mods);
    fnp_doctor_libs_free(&d.libs);
    return rc;
}
