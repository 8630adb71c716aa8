/*
 * regions: what a named region costs next to an instrumented call (issue 13: "cost per
 * region about that of an instrumented call"). One binary, built -finstrument-functions
 * and linked with -lfnprof (it calls the library's region functions, so it links the
 * library as any program using the API does; nothing is preloaded). argv[1] picks one of
 * four loops of argv[2] iterations around the same non-inlined 3-instruction function:
 *
 *   plain   the function, not instrumented: the reference every other loop is set against
 *   call    an instrumented copy of it: one hook pair per iteration
 *   region  the uninstrumented function inside FNPROF_REGION: one region per iteration
 *   begin   the same inside fnprof_region_begin / fnprof_region_end (looked up by name)
 *
 * The loops are not instrumented themselves, so each iteration adds exactly one call pair
 * or one region to what plain does; main is, so that every mode records one call at least
 * and writes a profile.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fnprof.h"

#define NOINST __attribute__((no_instrument_function))

__attribute__((noinline, noipa)) static uint32_t tiny_call(uint32_t x)
{
    return (x ^ (x >> 7)) * 2654435761u;
}

__attribute__((noinline, noipa)) NOINST static uint32_t tiny_plain(uint32_t x)
{
    return (x ^ (x >> 7)) * 2654435761u;
}

__attribute__((noinline, noipa)) NOINST static uint32_t loop_plain(long n)
{
    uint32_t acc = 1;
    for (long i = 0; i < n; i++)
        acc = tiny_plain(acc + (uint32_t)i);
    return acc;
}

__attribute__((noinline, noipa)) NOINST static uint32_t loop_call(long n)
{
    uint32_t acc = 1;
    for (long i = 0; i < n; i++)
        acc = tiny_call(acc + (uint32_t)i);
    return acc;
}

__attribute__((noinline, noipa)) NOINST static uint32_t loop_region(long n)
{
    uint32_t acc = 1;
    for (long i = 0; i < n; i++) {
        FNPROF_REGION("step");
        acc = tiny_plain(acc + (uint32_t)i);
    }
    return acc;
}

__attribute__((noinline, noipa)) NOINST static uint32_t loop_begin(long n)
{
    uint32_t acc = 1;
    for (long i = 0; i < n; i++) {
        fnprof_region_begin("step");
        acc = tiny_plain(acc + (uint32_t)i);
        fnprof_region_end();
    }
    return acc;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "region";
    long n = argc > 2 ? atol(argv[2]) : 10000000;
    uint32_t acc;
    if (strcmp(mode, "plain") == 0)
        acc = loop_plain(n);
    else if (strcmp(mode, "call") == 0)
        acc = loop_call(n);
    else if (strcmp(mode, "region") == 0)
        acc = loop_region(n);
    else if (strcmp(mode, "begin") == 0)
        acc = loop_begin(n);
    else {
        fprintf(stderr, "usage: regions plain|call|region|begin N\n");
        return 2;
    }
    printf("regions %s: %u\n", mode, (unsigned)acc);
    return 0;
}
/* SPDX-License-Identifier: MIT */
