/* SPDX-License-Identifier: MIT */
/*
 * Filter files in Score-P's syntax (docs/filter.md): which functions a profile leaves out.
 *
 *   SCOREP_FILE_NAMES_BEGIN            # rules on the function's source file
 *     EXCLUDE /src/vendor/?*
 *   SCOREP_FILE_NAMES_END
 *   SCOREP_REGION_NAMES_BEGIN          # rules on its name
 *     EXCLUDE ?*
 *     INCLUDE main solve?*
 *             MANGLED _ZN3fooC?*
 *   SCOREP_REGION_NAMES_END
 *
 * Within each kind, the rules apply in order and the last one that matches decides; a
 * function nothing matches is kept. A function whose file is excluded stays excluded
 * whatever its name. Patterns are bash wildcards (fnmatch(3) without flags: a star also
 * matches '/'), case-sensitive; a name pattern matches the demangled name as the profile
 * shows it ("ns::f(int)", "f"), or the mangled one after MANGLED. Shared by the runtime
 * (PROF_FILTER), fnprof-cc --filter and fnprof suggest-filter; no state beyond the object.
 */
#ifndef FNPROF_FILTER_H
#define FNPROF_FILTER_H

#include <stddef.h>

struct fnp_filter;

/* Parses a filter file's text (len bytes, need not end in NUL). origin names it in errors.
 * Returns NULL with err set to one line ("origin:LINE: why") when the text is malformed
 * or memory ran out. */
struct fnp_filter *fnp_filter_parse(const char *text, size_t len, const char *origin, char *err,
                                    size_t errlen);
/* Reads and parses the file at path (at most 16 MB). NULL with err set on failure. */
struct fnp_filter *fnp_filter_load(const char *path, char *err, size_t errlen);

/* 1 when the filter leaves out the function (file and mangled may be NULL: unknown; rules
 * on an unknown value do not match), else 0. */
int fnp_filter_excludes(const struct fnp_filter *f, const char *file, const char *name,
                        const char *mangled);

/* Whether f has rules on files, on demangled names, on mangled names. */
int fnp_filter_has_file_rules(const struct fnp_filter *f);
int fnp_filter_has_name_rules(const struct fnp_filter *f);
int fnp_filter_has_mangled_rules(const struct fnp_filter *f);

/* Accepts NULL. */
void fnp_filter_free(struct fnp_filter *f);

/* A name pattern that matches name alone, on one line of printable ASCII: fnmatch's
 * special characters, '#', space and the first letter of a keyword escaped with a
 * backslash, every other byte outside 0x20-0x7e as "\xHH", which the parser reads back as
 * that byte. Malloc'd (caller frees); NULL when out of memory. */
char *fnp_filter_pattern(const char *name);

#endif
