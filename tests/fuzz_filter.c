/*
 * libFuzzer target for Score-P filter files (PROF_FILTER, fnprof-cc --filter): any bytes
 * either parse or are refused with a one-line reason naming a line, of printable
 * characters only; a filter that parses answers for any name, and its answer does not
 * depend on what was asked before. The same bytes taken as a name: the pattern
 * suggest-filter writes for it (fnp_filter_pattern) is printable ASCII and matches it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filter.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void pattern_matches_its_name(const uint8_t *data, size_t size)
{
    char name[512];
    size_t n = size < sizeof(name) - 1 ? size : sizeof(name) - 1;
    memcpy(name, data, n);
    name[n] = 0;
    char *pattern = fnp_filter_pattern(name);
    CHECK(pattern);
    for (const char *c = pattern; *c; c++)
        CHECK((unsigned char)*c >= 0x20 && (unsigned char)*c < 0x7f);
    static const char head[] = "SCOREP_REGION_NAMES_BEGIN\nEXCLUDE ";
    static const char tail[] = "\nSCOREP_REGION_NAMES_END\n";
    char text[sizeof(head) + 4 * sizeof(name) + sizeof(tail)];
    snprintf(text, sizeof(text), "%s%s%s", head, pattern, tail);
    char err[256];
    struct fnp_filter *f = fnp_filter_parse(text, strlen(text), "fuzz", err, sizeof(err));
    if (*name) {
        CHECK(f && fnp_filter_excludes(f, NULL, name, NULL) == 1);
    } else {
        CHECK(!f); /* an empty name gives no pattern: EXCLUDE without one */
    }
    fnp_filter_free(f);
    free(pattern);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pattern_matches_its_name(data, size);
    char err[256];
    struct fnp_filter *f = fnp_filter_parse((const char *)data, size, "fuzz", err, sizeof(err));
    if (!f) {
        CHECK(strncmp(err, "fuzz:", 5) == 0);
        for (const char *c = err; *c; c++)
            CHECK((unsigned char)*c >= 0x20 && *c != 0x7f);
        return 0;
    }
    static const char *const names[] = {"main", "ns::f(int)", "operator[](unsigned long)",
                                        "",     "a b",        "*"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        int a = fnp_filter_excludes(f, "/src/a.c", names[i], names[i]);
        CHECK(a == 0 || a == 1);
        CHECK(fnp_filter_excludes(f, "/src/a.c", names[i], names[i]) == a);
        CHECK(fnp_filter_excludes(f, NULL, names[i], NULL) <= 1);
    }
    fnp_filter_free(f);
    return 0;
}
/* SPDX-License-Identifier: MIT */
