/* SPDX-License-Identifier: MIT */
/*
 * What PROF_LIBCALLS asks for (docs/libcalls.md, "Choosing the calls"):
 *
 *   1, all, *                     every library function that may be hooked
 *   libc.so.6:pthread_*,read;m*   items split by ';'; in each, an optional library glob
 *                                 before a single ':' (a C++ name's "::" is no split),
 *                                 then symbol globs split by ','
 *   /path/to/file                 a filter file in PROF_FILTER's syntax: file rules match
 *                                 the library's file name (libc.so.6), name rules the
 *                                 function's name; what no rule leaves out is recorded
 *
 * A value that names an existing regular file is a filter file. Globs are fnmatch(3)'s
 * without flags, matched against the library's file name and the function's name as the
 * profile shows it (demangled) or its symbol. Read once at load, on the cold path of
 * hooking only.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "filter.h"
#include "plt.h"

struct item {
    char *lib;    /* NULL: any library */
    char **names; /* symbol globs */
    size_t nnames;
};

struct fnp_lc_spec {
    int all;
    struct fnp_filter *filter;
    struct item *items;
    size_t nitems;
};

static int has_glob(const char *s)
{
    return strpbrk(s, "*?[") != NULL;
}

/* The first ':' that is not part of "::", or NULL. */
static char *lib_colon(char *s)
{
    for (char *p = strchr(s, ':'); p; p = strchr(p + 1, ':')) {
        if (p[1] == ':') {
            p++;
            continue;
        }
        if (p > s && p[-1] == ':')
            continue;
        return p;
    }
    return NULL;
}

static int add_item(struct fnp_lc_spec *s, char *text)
{
    struct item it = {0};
    char *colon = lib_colon(text);
    if (colon) {
        *colon = 0;
        it.lib = text;
        text = colon + 1;
    }
    for (char *save = NULL, *tok = strtok_r(text, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        while (*tok == ' ' || *tok == '\t')
            tok++;
        size_t len = strlen(tok);
        while (len && (tok[len - 1] == ' ' || tok[len - 1] == '\t'))
            tok[--len] = 0;
        if (!len)
            continue;
        char **grown = realloc(it.names, (it.nnames + 1) * sizeof(*grown));
        if (!grown) {
            free(it.names);
            return -ENOMEM;
        }
        it.names = grown;
        it.names[it.nnames++] = tok;
    }
    if (!it.nnames && !it.lib)
        return 0;
    struct item *items = realloc(s->items, (s->nitems + 1) * sizeof(*items));
    if (!items) {
        free(it.names);
        return -ENOMEM;
    }
    s->items = items;
    s->items[s->nitems++] = it;
    return 0;
}

int fnp_lc_spec_parse(const char *text, struct fnp_lc_spec **out, char *err, size_t errlen)
{
    struct fnp_lc_spec *s = calloc(1, sizeof(*s));
    if (!s)
        return -ENOMEM;
    struct stat st;
    if (!strcmp(text, "1") || !strcmp(text, "all") || !strcmp(text, "*")) {
        s->all = 1;
    } else if (stat(text, &st) == 0 && S_ISREG(st.st_mode)) {
        if (!(s->filter = fnp_filter_load(text, err, errlen))) {
            free(s);
            return -EINVAL;
        }
    } else {
        /* the items point into this copy, kept with the spec (never freed: read at load) */
        char *copy = strdup(text);
        if (!copy) {
            free(s);
            return -ENOMEM;
        }
        for (char *save = NULL, *tok = strtok_r(copy, ";", &save); tok;
             tok = strtok_r(NULL, ";", &save))
            if (add_item(s, tok)) {
                free(s);
                return -ENOMEM;
            }
        if (!s->nitems) {
            snprintf(err, errlen, "%s: no pattern (1 for every library call)", text);
            free(s);
            return -EINVAL;
        }
    }
    *out = s;
    return 0;
}

/*
 * 1 when the spec asks for name (mangled: its symbol) of the library lib. plumbing: a
 * function the code calls without the program's writing it (__errno_location for errno,
 * __ctype_b_loc for isalpha): asked for only by a pattern that names it exactly.
 */
int fnp_lc_spec_wants(const struct fnp_lc_spec *s, const char *lib, const char *name,
                      const char *mangled, int plumbing)
{
    if (s->all)
        return !plumbing;
    if (s->filter)
        return !plumbing && !fnp_filter_excludes(s->filter, lib, name, mangled);
    for (size_t i = 0; i < s->nitems; i++) {
        const struct item *it = &s->items[i];
        if (it->lib && fnmatch(it->lib, lib, 0) != 0)
            continue;
        if (!it->nnames)
            return !plumbing; /* "libz.so.1:" : all of it */
        for (size_t k = 0; k < it->nnames; k++) {
            const char *p = it->names[k];
            if (plumbing && has_glob(p))
                continue;
            if (fnmatch(p, name, 0) == 0 || fnmatch(p, mangled, 0) == 0)
                return 1;
        }
    }
    return 0;
}
