/* SPDX-License-Identifier: MIT */
/*
 * fnprof report: a profile printed the way pstats prints it, byte for byte, as
 *   pstats.Stats(FILE).sort_stats(KEY, ...).print_stats(N)[.print_callers(N)]
 *                                                          [.print_callees(N)]
 * would. Layout, rounding and the order of ties follow CPython's Lib/pstats.py (3.8-3.13
 * agree), so that tests compare the two outputs whole and users see what they know.
 *
 * Two additions, each outside pstats' text or asked for: the run's metadata (program, pid,
 * start, ...) as "key: value" lines and a blank line before it, left out with --no-meta
 * (a file without metadata, as CPython's, prints pstats' text alone); and --unit, times in
 * ms, us or ns (torch.profiler's override), the columns widened and titled with the unit.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "views.h"

#define DEFAULT_LIMIT 20
#define MAX_KEYS 16

/* The columns of pstats' sort tuples (cc, nc, tt, ct, file, line, name, stdname). */
enum field { F_PCALLS, F_NCALLS, F_TOTTIME, F_CUMTIME, F_FILE, F_LINE, F_NAME, F_STDNAME };

/* pstats' sort_arg_dict_default: its words, titles and columns. Numbers sort descending,
 * names and lines ascending. */
static const struct sort_key {
    const char *word;
    const char *title;
    unsigned char nfields;
    unsigned char fields[3];
} sort_keys[] = {
    {"cumtime", "cumulative time", 1, {F_CUMTIME}},
    {"cumulative", "cumulative time", 1, {F_CUMTIME}},
    {"tottime", "internal time", 1, {F_TOTTIME}},
    {"time", "internal time", 1, {F_TOTTIME}},
    {"ncalls", "call count", 1, {F_NCALLS}},
    {"calls", "call count", 1, {F_NCALLS}},
    {"pcalls", "primitive call count", 1, {F_PCALLS}},
    {"name", "function name", 1, {F_NAME}},
    {"file", "file name", 1, {F_FILE}},
    {"filename", "file name", 1, {F_FILE}},
    {"module", "file name", 1, {F_FILE}},
    {"line", "line number", 1, {F_LINE}},
    {"nfl", "name/file/line", 3, {F_NAME, F_FILE, F_LINE}},
    {"stdname", "standard name", 1, {F_STDNAME}},
};

#define NSORT_KEYS (sizeof(sort_keys) / sizeof(sort_keys[0]))

/* A time unit other than pstats' seconds: a value in seconds times scale, printed with
 * decimals decimals in columns of UNIT_WIDTH characters, wide enough for 999 s in ns. */
static const struct unit {
    const char *word;
    const char *name; /* in the totals line: "in T <name>" */
    double scale;
    int decimals;
} units[] = {
    {"ms", "milliseconds", 1e3, 3},
    {"us", "microseconds", 1e6, 3},
    {"ns", "nanoseconds", 1e9, 0},
};

#define UNIT_WIDTH 12

struct report {
    const struct fnp_profile *p;
    const struct unit *unit; /* NULL: seconds, in pstats' layout */
    int short_names;         /* --short-names: names by fnp_names_new, not the keys' */
    char **stdname;          /* per function: pstats' func_std_string */
    size_t *width;           /* its length in characters, as Python's len() counts */
    size_t max_width;        /* pstats' max_name_len */
    unsigned char fields[3 * MAX_KEYS];
    size_t nfields, nkeys;
    char title[MAX_KEYS * 24];
    uint32_t *order; /* functions, sorted */
    /* Edges grouped by callee (callers view) and by caller (callees view), each group
     * sorted by the other end's key; group f spans [start[f], start[f + 1]). */
    uint32_t *by_callee, *by_caller;
    size_t *callee_start, *caller_start;
};

static void usage(FILE *out)
{
    fprintf(out,
            "usage: fnprof report FILE [--sort KEY]... [--limit N] [--callers] [--callees]\n"
            "                   [--unit s|ms|us|ns] [--no-meta] [--short-names]\n"
            "       fnprof report --memory FILE [--sort KEY] [--limit N] [--exact] [--no-meta]\n"
            "                   [--short-names]\n"
            "\n"
            "Prints a pstats file as python3's pstats does: totals, then one line per\n"
            "function, ncalls shown as total/primitive when they differ. A profile that\n"
            "holds its run's metadata (program, pid, start, host, fnprof version, the\n"
            "program's own pairs) gets it first, one \"key: value\" a line (control\n"
            "characters shown as '?'), then a blank line; with --no-meta, and for files\n"
            "without metadata (CPython's), the output is pstats' text byte for byte.\n"
            "\n"
            "Options:\n"
            "  -s, --sort KEY   order by KEY, descending for numbers: cumtime (default),\n"
            "                   tottime, ncalls, pcalls, name, file; also pstats' other\n"
            "                   words (cumulative, time, calls, filename, module, line,\n"
            "                   nfl, stdname). Repeat to break ties.\n"
            "  -n, --limit N    print the first N functions (default %d; 0: all)\n"
            "      --callers    then, for each, the functions that called it\n"
            "      --callees    then, for each, the functions it called\n"
            "  -u, --unit UNIT  times in UNIT: s (default, pstats' own layout), ms, us or\n"
            "                   ns, said by the totals line and the column titles\n"
            "                   (tottime(ms), percall(ms), ...). A count-only profile's\n"
            "                   times are calls: they stay as they are, with a note\n"
            "      --no-meta    leave the metadata out\n"
            "      --short-names, --no-short-names\n"
            "                   C++ names as debuggers show them (std::string,\n"
            "                   std::vector<int>), or as the profile keys them (the\n"
            "                   default: pstats' own text)\n"
            "  -m, --memory     a memory profile (PROF_MEMORY): per function, allocations,\n"
            "                   bytes allocated (its own, and cumulative: under its calls),\n"
            "                   frees, bytes freed, the peak of its largest calling context\n"
            "                   and the bytes still live at exit, in KiB/MiB. --sort KEY:\n"
            "                   bytes (default), allocs, cumbytes, frees, freed, peak,\n"
            "                   leaked, name\n"
            "      --exact      with --memory: bytes as exact counts\n"
            "  -h, --help       show this help\n",
            DEFAULT_LIMIT);
}

/* Characters in UTF-8 text: bytes that do not continue a sequence. */
static size_t text_width(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xc0) != 0x80;
    return n;
}

/* Python's str.ljust: pads to width characters, never cuts. */
static void put_ljust(const char *s, size_t w, size_t width)
{
    fputs(s, stdout);
    for (; w < width; w++)
        putchar(' ');
}

static int cmp_u64_desc(uint64_t a, uint64_t b)
{
    return a < b ? 1 : a > b ? -1 : 0;
}

static int cmp_double_desc(double a, double b)
{
    return a < b ? 1 : a > b ? -1 : 0;
}

static int cmp_field(const struct report *r, unsigned field, uint32_t a, uint32_t b)
{
    const struct fnp_func *x = &r->p->funcs[a], *y = &r->p->funcs[b];
    switch (field) {
    case F_PCALLS:
        return cmp_u64_desc(x->st.pcalls, y->st.pcalls);
    case F_NCALLS:
        return cmp_u64_desc(x->st.ncalls, y->st.ncalls);
    case F_TOTTIME:
        return cmp_double_desc(x->st.tottime, y->st.tottime);
    case F_CUMTIME:
        return cmp_double_desc(x->st.cumtime, y->st.cumtime);
    case F_FILE:
        return strcmp(x->key.file, y->key.file); /* UTF-8 bytes sort as code points do */
    case F_LINE:
        return x->key.line < y->key.line ? -1 : x->key.line > y->key.line;
    case F_NAME:
        return strcmp(x->key.name, y->key.name);
    default:
        return strcmp(r->stdname[a], r->stdname[b]);
    }
}

static int cmp_functions(const void *a_, const void *b_, void *r_)
{
    const struct report *r = r_;
    uint32_t a = *(const uint32_t *)a_, b = *(const uint32_t *)b_;
    for (size_t i = 0; i < r->nfields; i++) {
        int c = cmp_field(r, r->fields[i], a, b);
        if (c)
            return c;
    }
    /* list.sort is stable: ties keep the file's order, which is the model's. */
    return a < b ? -1 : a > b;
}

static int cmp_by_callee(const void *a_, const void *b_, void *p_)
{
    const struct fnp_profile *p = p_;
    const struct fnp_edge *x = &p->edges[*(const uint32_t *)a_];
    const struct fnp_edge *y = &p->edges[*(const uint32_t *)b_];
    if (x->callee != y->callee)
        return x->callee < y->callee ? -1 : 1;
    return fnp_key_cmp(&p->funcs[x->caller].key, &p->funcs[y->caller].key);
}

static int cmp_by_caller(const void *a_, const void *b_, void *p_)
{
    const struct fnp_profile *p = p_;
    const struct fnp_edge *x = &p->edges[*(const uint32_t *)a_];
    const struct fnp_edge *y = &p->edges[*(const uint32_t *)b_];
    if (x->caller != y->caller)
        return x->caller < y->caller ? -1 : 1;
    return fnp_key_cmp(&p->funcs[x->callee].key, &p->funcs[y->callee].key);
}

/* Edge indices grouped by one end: sorted, then the start of each function's group. */
static int group_edges(const struct fnp_profile *p, int by_callee, uint32_t **order, size_t **start)
{
    *order = malloc((p->nedges + 1) * sizeof(**order));
    *start = calloc(p->nfuncs + 1, sizeof(**start));
    if (!*order || !*start)
        return -1;
    for (size_t i = 0; i < p->nedges; i++)
        (*order)[i] = (uint32_t)i;
    qsort_r(*order, p->nedges, sizeof(**order), by_callee ? cmp_by_callee : cmp_by_caller,
            (void *)p);
    size_t e = 0;
    for (size_t f = 0; f < p->nfuncs; f++) {
        (*start)[f] = e;
        while (e < p->nedges &&
               (by_callee ? p->edges[(*order)[e]].callee : p->edges[(*order)[e]].caller) == f)
            e++;
    }
    (*start)[p->nfuncs] = e;
    return 0;
}

/* time.ctime(): asctime's layout in local time, without its newline. */
static void print_file_line(const char *path, const struct stat *st)
{
    static const char wday[][4] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
    static const char mon[][4] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                  "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    struct tm tm;
    time_t t = st->st_mtime;
    tzset();
    if (!localtime_r(&t, &tm)) {
        printf("%s\n\n", path);
        return;
    }
    printf("%s %s%3d %.2d:%.2d:%.2d %d    %s\n\n", wday[tm.tm_wday % 7], mon[tm.tm_mon % 12],
           tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, 1900 + tm.tm_year, path);
}

/* The run's metadata, before pstats' text: one "key: value" a line, then a blank line. */
static void print_meta(const struct fnp_profile *p)
{
    if (!p->nmeta)
        return;
    for (size_t i = 0; i < p->nmeta; i++) {
        fnp_cli_put_text(stdout, p->meta[i].key);
        fputs(": ", stdout);
        fnp_cli_put_text(stdout, p->meta[i].value);
        putchar('\n');
    }
    putchar('\n');
}

/* A time column: pstats' " %8.3f" in seconds, else the unit's. */
static void put_time(const struct report *r, double seconds)
{
    if (r->unit)
        printf("%*.*f ", UNIT_WIDTH, r->unit->decimals, seconds * r->unit->scale);
    else
        printf("%8.3f ", seconds);
}

/* A column title: pstats' words in seconds, else the word and the unit. */
static void put_title(const struct report *r, const char *word)
{
    char buf[32];
    if (r->unit) {
        snprintf(buf, sizeof(buf), "%s(%s)", word, r->unit->word);
        printf(" %*s", UNIT_WIDTH, buf);
    } else {
        printf(" %8s", word);
    }
}

/* print_stats' header: the file, "top level" functions, the totals. */
static void print_header(const struct report *r, const char *path, const struct stat *st)
{
    const struct fnp_profile *p = r->p;
    print_file_line(path, st);
    /* pstats lists functions called from ("jprofile", 0, "profiler"), a root old
     * profilers made up; in the file's order here, where Python's is a set's. */
    for (size_t i = 0; i < p->nedges; i++) {
        const struct fnp_key *k = &p->funcs[p->edges[i].caller].key;
        if (!strcmp(k->file, "jprofile") && k->line == 0 && !strcmp(k->name, "profiler"))
            printf("         %s\n", p->funcs[p->edges[i].callee].key.name);
    }
    unsigned __int128 total = 0, prim = 0;
    double tt = 0;
    for (size_t i = 0; i < p->nfuncs; i++) {
        total += p->funcs[i].st.ncalls;
        prim += p->funcs[i].st.pcalls;
        tt += p->funcs[i].st.tottime; /* in the file's order, as Python adds them */
    }
    char b1[48], b2[48];
    printf("         %s function calls ", fnp_cli_u128(total, b1, sizeof(b1)));
    if (total != prim)
        printf("(%s primitive calls) ", fnp_cli_u128(prim, b2, sizeof(b2)));
    if (r->unit)
        printf("in %.*f %s\n\n", r->unit->decimals, tt * r->unit->scale, r->unit->name);
    else
        printf("in %.3f seconds\n\n", tt);
}

/* get_print_list: the order and restriction lines; returns how many functions to list
 * and sets the name column's width. */
static size_t print_list_header(const struct report *r, size_t limit, size_t *width)
{
    size_t n = r->p->nfuncs, count = n;
    printf("   Ordered by: %s\n", r->title);
    if (limit && limit < n) {
        printf("   List reduced from %zu to %zu due to restriction <%zu>\n", n, limit, limit);
        count = limit;
    }
    putchar('\n');
    *width = r->max_width;
    if (count < n) {
        *width = 0;
        for (size_t i = 0; i < count; i++)
            if (r->width[r->order[i]] > *width)
                *width = r->width[r->order[i]];
    }
    *width += 2;
    return count;
}

static void print_stats(const struct report *r, size_t limit)
{
    size_t width;
    size_t count = print_list_header(r, limit, &width);
    /* Per call: pstats' quotient in seconds, then converted to the unit. */
    int blank = r->unit ? UNIT_WIDTH : 8;
    printf("   ncalls");
    put_title(r, "tottime");
    put_title(r, "percall");
    put_title(r, "cumtime");
    put_title(r, "percall");
    printf(" filename:lineno(function)\n");
    for (size_t i = 0; i < count; i++) {
        uint32_t f = r->order[i];
        const struct fnp_stats *st = &r->p->funcs[f].st;
        char calls[48];
        if (st->ncalls != st->pcalls)
            snprintf(calls, sizeof(calls), "%" PRIu64 "/%" PRIu64, st->ncalls, st->pcalls);
        else
            snprintf(calls, sizeof(calls), "%" PRIu64, st->ncalls);
        printf("%9s ", calls);
        put_time(r, st->tottime);
        if (st->ncalls)
            put_time(r, st->tottime / (double)st->ncalls);
        else
            printf("%*s ", blank, "");
        put_time(r, st->cumtime);
        if (st->pcalls)
            put_time(r, st->cumtime / (double)st->pcalls);
        else
            printf("%*s ", blank, "");
        printf("%s\n", r->stdname[f]);
    }
    printf("\n\n");
}

/* print_callers / print_callees: each listed function, then the other end of its edges,
 * one per line, sorted by key. */
static void print_calls(const struct report *r, size_t limit, int callers)
{
    const struct fnp_profile *p = r->p;
    size_t width;
    size_t count = print_list_header(r, limit, &width);
    put_ljust("Function ", 9, width);
    printf("%s\n", callers ? "was called by..." : "called...");
    if (p->nedges) {
        printf("%*s    ncalls", (int)width, "");
        put_title(r, "tottime");
        put_title(r, "cumtime");
        putchar('\n');
    }
    const uint32_t *order = callers ? r->by_callee : r->by_caller;
    const size_t *start = callers ? r->callee_start : r->caller_start;
    for (size_t i = 0; i < count; i++) {
        uint32_t f = r->order[i];
        put_ljust(r->stdname[f], r->width[f], width);
        printf("%s ", callers ? "<-" : "->");
        if (start[f] == start[f + 1])
            putchar('\n');
        for (size_t e = start[f]; e < start[f + 1]; e++) {
            const struct fnp_edge *ed = &p->edges[order[e]];
            uint32_t other = callers ? ed->caller : ed->callee;
            char calls[48];
            if (ed->st.ncalls != ed->st.pcalls)
                snprintf(calls, sizeof(calls), "%" PRIu64 "/%" PRIu64, ed->st.ncalls,
                         ed->st.pcalls);
            else
                snprintf(calls, sizeof(calls), "%" PRIu64, ed->st.ncalls);
            /* Later lines start under the first one's numbers: width + 1 spaces, and two
             * more columns for the count than the first line's 7. */
            if (e > start[f])
                printf("%*s", (int)width + 1, "");
            printf("%*s ", e > start[f] ? 9 : 7, calls);
            put_time(r, ed->st.tottime);
            put_time(r, ed->st.cumtime);
            printf(" %s\n", r->stdname[other]);
        }
    }
    printf("\n\n");
}

/* Returns 0, or -1 for an unknown word (the caller took at most MAX_KEYS words). */
static int add_sort_key(struct report *r, const char *word)
{
    for (size_t i = 0; i < NSORT_KEYS; i++) {
        if (strcmp(word, sort_keys[i].word))
            continue;
        r->nkeys++;
        memcpy(r->fields + r->nfields, sort_keys[i].fields, sort_keys[i].nfields);
        r->nfields += sort_keys[i].nfields;
        if (r->title[0])
            strcat(r->title, ", ");
        strcat(r->title, sort_keys[i].title);
        return 0;
    }
    return -1;
}

static void report_free(struct report *r)
{
    if (r->stdname)
        for (size_t i = 0; i < r->p->nfuncs; i++)
            free(r->stdname[i]);
    free(r->stdname);
    free(r->width);
    free(r->order);
    free(r->by_callee);
    free(r->by_caller);
    free(r->callee_start);
    free(r->caller_start);
}

static int report_prepare(struct report *r)
{
    const struct fnp_profile *p = r->p;
    size_t n = p->nfuncs;
    r->stdname = calloc(n + 1, sizeof(*r->stdname));
    r->width = calloc(n + 1, sizeof(*r->width));
    r->order = malloc((n + 1) * sizeof(*r->order));
    if (!r->stdname || !r->width || !r->order)
        return -1;
    /* file:line stands beside each name: fnp_names_new keeps two functions apart there */
    char **names = r->short_names ? fnp_names_new(p) : NULL;
    if (r->short_names && !names)
        return -1;
    for (size_t i = 0; i < n; i++) {
        struct fnp_key k = p->funcs[i].key;
        if (names)
            k.name = names[i];
        r->stdname[i] = fnp_cli_std_string(&k);
        if (!r->stdname[i]) {
            fnp_labels_free(names, n);
            return -1;
        }
        r->width[i] = text_width(r->stdname[i]);
        if (r->width[i] > r->max_width)
            r->max_width = r->width[i];
        r->order[i] = (uint32_t)i;
    }
    fnp_labels_free(names, n);
    qsort_r(r->order, n, sizeof(*r->order), cmp_functions, r);
    if (group_edges(p, 1, &r->by_callee, &r->callee_start) ||
        group_edges(p, 0, &r->by_caller, &r->caller_start))
        return -1;
    return 0;
}

/* "s" is pstats' layout (*out NULL). Returns 0, or -1 for an unknown word. */
static int parse_unit(const char *word, const struct unit **out)
{
    *out = NULL;
    if (!strcmp(word, "s"))
        return 0;
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
        if (!strcmp(word, units[i].word)) {
            *out = &units[i];
            return 0;
        }
    return -1;
}

/* ---- --memory: a memory profile's table (PROF_MEMORY, docs/memory.md) ----------------- */

/* One function's memory columns, summed over its calling contexts (own values: what the
 * function allocated itself), but cum, its cumulative bytes (pstats' cumtime), and peak,
 * the largest peak of one of its contexts. */
struct mem_row {
    uint32_t func;
    uint64_t allocs, bytes, cum, frees, freed, peak;
};

/* Bytes still live at exit. A file's freed bytes may exceed its bytes (a hostile file, or
 * sums that wrapped): then none, not a wrapped count. */
static uint64_t leaked(const struct mem_row *r)
{
    return r->bytes > r->freed ? r->bytes - r->freed : 0;
}

enum mem_field { M_ALLOCS, M_BYTES, M_CUM, M_FREES, M_FREED, M_PEAK, M_LEAKED, M_NAME };

static const struct mem_sort {
    const char *word;
    enum mem_field field;
    const char *title;
} mem_sorts[] = {
    {"allocs", M_ALLOCS, "allocations"},        {"bytes", M_BYTES, "bytes allocated"},
    {"cumbytes", M_CUM, "cumulative bytes"},    {"frees", M_FREES, "frees"},
    {"freed", M_FREED, "bytes freed"},          {"peak", M_PEAK, "peak"},
    {"leaked", M_LEAKED, "bytes live at exit"}, {"name", M_NAME, "function name"},
};

static uint64_t mem_value(const struct mem_row *r, enum mem_field f)
{
    switch (f) {
    case M_ALLOCS:
        return r->allocs;
    case M_BYTES:
        return r->bytes;
    case M_CUM:
        return r->cum;
    case M_FREES:
        return r->frees;
    case M_FREED:
        return r->freed;
    case M_PEAK:
        return r->peak;
    case M_LEAKED:
        return leaked(r);
    default:
        return 0;
    }
}

struct mem_order {
    const struct fnp_profile *p;
    const struct mem_sort *by;
};

static int cmp_mem_rows(const void *a_, const void *b_, void *o_)
{
    const struct mem_row *a = a_, *b = b_;
    const struct mem_order *o = o_;
    if (o->by->field != M_NAME) {
        int c = cmp_u64_desc(mem_value(a, o->by->field), mem_value(b, o->by->field));
        if (c)
            return c;
    }
    /* ties, and --sort name: by function key, as sorted() orders the tuples */
    return fnp_key_cmp(&o->p->funcs[a->func].key, &o->p->funcs[b->func].key);
}

/* Bytes for people: "900 B", "8.1 KiB", "3.4 MiB" (binary units, as heaptrack's), or
 * exact; in buf, which 32 bytes hold. */
static const char *bytes_text(char *buf, size_t len, uint64_t v, int exact)
{
    static const char *const unit[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (exact || v < 1024) {
        snprintf(buf, len, exact ? "%llu" : "%llu B", (unsigned long long)v);
        return buf;
    }
    double d = (double)v / 1024;
    size_t u = 0;
    while (d >= 1024 && u + 1 < sizeof(unit) / sizeof(unit[0])) {
        d /= 1024;
        u++;
    }
    snprintf(buf, len, "%.1f %s", d, unit[u]);
    return buf;
}

/* A column of bytes, 12 wide, right-aligned. */
static void put_amount(uint64_t v, int exact)
{
    char buf[32];
    printf(" %12s", bytes_text(buf, sizeof(buf), v, exact));
}

/* The table of fnprof report --memory, of a profile with memory columns. Returns an exit
 * status. */
static int print_memory(const struct fnp_profile *p, const char *path, const struct stat *st,
                        const struct mem_sort *by, size_t limit, int exact, int short_names)
{
    uint64_t *self = malloc((p->ntree ? p->ntree : 1) * sizeof(*self));
    struct mem_row *rows = calloc(p->nfuncs ? p->nfuncs : 1, sizeof(*rows));
    uint8_t *has = calloc(p->nfuncs ? p->nfuncs : 1, 1);
    char **names = short_names ? fnp_names_new(p) : NULL;
    if (!self || !rows || !has || (short_names && !names)) {
        free(self);
        free(rows);
        free(has);
        fnp_labels_free(names, p->nfuncs);
        fnp_cli_error("report", "%s: out of memory", path);
        return FNP_EXIT_FAILURE;
    }
    fnp_tree_values(p, self, NULL);
    struct mem_row total = {0};
    for (size_t i = 0; i < p->ntree; i++) {
        const struct fnp_mem_node *m = &p->mem[i];
        struct mem_row *r = &rows[p->tree[i].func];
        has[p->tree[i].func] = 1;
        r->allocs += m->allocs;
        r->bytes += self[i];
        r->frees += m->frees;
        r->freed += m->freed;
        if (m->peak > r->peak)
            r->peak = m->peak;
        total.allocs += m->allocs;
        total.bytes += self[i];
        total.frees += m->frees;
        total.freed += m->freed;
    }
    size_t n = 0;
    for (size_t f = 0; f < p->nfuncs; f++) {
        if (!has[f])
            continue; /* a function of the dict alone (a merge label): no context */
        rows[n] = rows[f];
        rows[n].func = (uint32_t)f;
        double cum = p->funcs[f].st.cumtime;
        rows[n].cum = cum > 0 && cum < 1.8e19 ? (uint64_t)(cum + 0.5) : 0;
        n++;
    }
    struct mem_order order = {p, by};
    qsort_r(rows, n, sizeof(*rows), cmp_mem_rows, &order);
    print_file_line(path, st);
    char all[32], live[32];
    printf("         %llu allocations of %s%s in %zu functions; %llu blocks live at exit, %s%s\n\n",
           (unsigned long long)total.allocs, bytes_text(all, sizeof(all), total.bytes, exact),
           exact ? " bytes" : "", n, (unsigned long long)(total.allocs - total.frees),
           bytes_text(live, sizeof(live), leaked(&total), exact), exact ? " bytes" : "");
    printf("   Ordered by: %s\n", by->title);
    size_t shown = limit && limit < n ? limit : n;
    if (shown < n)
        printf("   List reduced from %zu to %zu due to restriction <%zu>\n", n, shown, limit);
    printf("\n");
    printf("%10s %12s %12s %10s %12s %12s %12s filename:lineno(function)\n", "allocs", "bytes",
           "cumbytes", "frees", "freed", "peak", "leaked");
    for (size_t i = 0; i < shown; i++) {
        const struct mem_row *r = &rows[i];
        printf("%10llu", (unsigned long long)r->allocs);
        put_amount(r->bytes, exact);
        put_amount(r->cum, exact);
        printf(" %10llu", (unsigned long long)r->frees);
        put_amount(r->freed, exact);
        put_amount(r->peak, exact);
        put_amount(leaked(r), exact);
        putchar(' ');
        struct fnp_key k = p->funcs[r->func].key;
        if (names)
            k.name = names[r->func];
        fnp_cli_put_function(stdout, &k);
        putchar('\n');
    }
    printf("\n");
    fnp_labels_free(names, p->nfuncs);
    free(self);
    free(rows);
    free(has);
    return FNP_EXIT_OK;
}

static int parse_mem_sort(const char *word, const struct mem_sort **out)
{
    for (size_t i = 0; i < sizeof(mem_sorts) / sizeof(mem_sorts[0]); i++)
        if (!strcmp(word, mem_sorts[i].word)) {
            *out = &mem_sorts[i];
            return 0;
        }
    return -1;
}

int fnp_cmd_report(int argc, char **argv)
{
    static const struct option opts[] = {
        {"sort", required_argument, NULL, 's'},     {"limit", required_argument, NULL, 'n'},
        {"callers", no_argument, NULL, 'C'},        {"callees", no_argument, NULL, 'E'},
        {"unit", required_argument, NULL, 'u'},     {"no-meta", no_argument, NULL, 'M'},
        {"memory", no_argument, NULL, 'm'},         {"exact", no_argument, NULL, 'X'},
        {"help", no_argument, NULL, 'h'},           {"short-names", no_argument, NULL, 'S'},
        {"no-short-names", no_argument, NULL, 'N'}, {NULL, 0, NULL, 0},
    };
    const char *sorts[MAX_KEYS];
    size_t nsorts = 0;
    int memory = 0, exact = 0;
    struct report r = {0};
    size_t limit = DEFAULT_LIMIT;
    int callers = 0, callees = 0, meta = 1, c;
    const struct unit *unit = NULL;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":s:n:u:mh", opts, NULL)) != -1) {
        switch (c) {
        case 'm':
            memory = 1;
            break;
        case 'X':
            exact = 1;
            break;
        case 'S':
        case 'N':
            r.short_names = c == 'S';
            break;
        case 's':
            /* judged once the options are read: --memory has keys of its own */
            if (nsorts == MAX_KEYS)
                return fnp_cli_usage_error("report", "more than %d sort keys", MAX_KEYS);
            sorts[nsorts++] = optarg;
            break;
        case 'n':
            if (fnp_cli_parse_limit(optarg, &limit))
                return fnp_cli_usage_error("report", "--limit wants a count, not '%s'", optarg);
            break;
        case 'C':
            callers = 1;
            break;
        case 'E':
            callees = 1;
            break;
        case 'u':
            if (parse_unit(optarg, &unit))
                return fnp_cli_usage_error("report", "--unit wants s, ms, us or ns, not '%s'",
                                           optarg);
            break;
        case 'M':
            meta = 0;
            break;
        case 'h':
            usage(stdout);
            return FNP_EXIT_OK;
        default: /* ':' or '?' */
            return fnp_cli_option_error("report", c, argv);
        }
    }
    if (optind == argc)
        return fnp_cli_usage_error("report", "no profile given");
    if (argc - optind > 1)
        return fnp_cli_usage_error("report", "one profile at a time (fnprof merge adds them)");
    const struct mem_sort *mem_by = &mem_sorts[1];
    if (memory && nsorts > 1)
        return fnp_cli_usage_error("report", "--memory sorts by one key");
    if (memory && nsorts && parse_mem_sort(sorts[0], &mem_by))
        return fnp_cli_usage_error("report",
                                   "--memory sorts by bytes, allocs, cumbytes, frees, freed, "
                                   "peak, leaked or name, not '%s'",
                                   sorts[0]);
    if (!memory && exact)
        return fnp_cli_usage_error("report", "--exact goes with --memory");
    for (size_t i = 0; !memory && i < nsorts; i++)
        if (add_sort_key(&r, sorts[i]))
            return fnp_cli_usage_error("report", "unknown sort key '%s'", sorts[i]);
    if (!r.nfields)
        add_sort_key(&r, "cumtime");
    const char *path = argv[optind];
    if (memory && (callers || callees || unit))
        return fnp_cli_usage_error("report", "--memory prints its own table: no --callers, "
                                             "--callees or --unit");

    struct fnp_profile p;
    struct stat st;
    fnp_profile_init(&p);
    if (fnp_cli_load("report", path, &p, &st))
        return FNP_EXIT_FAILURE;
    r.p = &p;
    if (memory) {
        int status = FNP_EXIT_FAILURE;
        if (!p.mem) {
            fnp_cli_error("report",
                          "%s: not a memory profile (no memory columns: a profile "
                          "written with PROF_MEMORY has them)",
                          path);
        } else {
            if (meta)
                print_meta(&p);
            status = print_memory(&p, path, &st, mem_by, limit, exact, r.short_names);
        }
        fnp_profile_free(&p);
        return status;
    }
    if (unit && p.tree_kind == FNP_TREE_CALLS) {
        /* docs: a count-only run's "seconds" are calls; ms of calls would mean nothing. */
        fnp_cli_error("report",
                      "%s: note: a count-only profile, whose times are calls: "
                      "--unit %s ignored",
                      path, unit->word);
        unit = NULL;
    }
    r.unit = unit;
    int rc = FNP_EXIT_OK;
    if (report_prepare(&r)) {
        fnp_cli_error("report", "%s: out of memory", path);
        rc = FNP_EXIT_FAILURE;
    } else {
        if (meta)
            print_meta(&p);
        print_header(&r, path, &st);
        print_stats(&r, limit);
        if (callers)
            print_calls(&r, limit, 1);
        if (callees)
            print_calls(&r, limit, 0);
    }
    report_free(&r);
    fnp_profile_free(&p);
    return rc;
}
