/* The fuzz targets' assertion: a property a read promises, checked in every build type
 * (assert() would vanish under NDEBUG); a failure aborts, which libFuzzer reports. */
#ifndef FNPROF_FUZZ_CHECK_H
#define FNPROF_FUZZ_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);               \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

#endif
/* SPDX-License-Identifier: MIT */
