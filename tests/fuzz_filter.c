/*
 * libFuzzer target for Score-P filter files (PROF_FILTER, fnprof-cc --filter): any bytes
 * either parse or are refused with a one-line reason naming a line; a filter that parses
 * answers for any name, and its answer does not depend on what was asked before.
 */
#include <stdint.h>
#include <string.h>

#include "filter.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[256];
    struct fnp_filter *f = fnp_filter_parse((const char *)data, size, "fuzz", err, sizeof(err));
    if (!f) {
        CHECK(strncmp(err, "fuzz:", 5) == 0 && !strchr(err, '\n'));
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
