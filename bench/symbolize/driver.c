/* SPDX-License-Identifier: MIT */
/*
 * The symbolization benchmark's driver: resolves the addresses listed in a file (one hex ELF
 * address a line) in one module, as the runtime does at exit: fnp_symbolizer_new, one
 * fnp_symbolizer_resolve for all of them, fnp_symbolizer_free.
 *
 *   driver BINARY ADDRS RUNS [OUT]
 *
 * Prints the median and minimum wall time of RUNS runs, in seconds, on one line; OUT, when
 * given, receives "addr<TAB>name<TAB>file<TAB>line" per address from the last run.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "symbolizer.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void on_warn(void *ctx, const char *msg)
{
    (void)ctx;
    fprintf(stderr, "fnprof: %s\n", msg);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s BINARY ADDRS RUNS [OUT]\n", argv[0]);
        return 2;
    }
    FILE *f = fopen(argv[2], "r");
    if (!f) {
        perror(argv[2]);
        return 1;
    }
    size_t n = 0, cap = 1024;
    uint64_t *addrs = malloc(cap * sizeof *addrs);
    uint64_t a;
    while (addrs && fscanf(f, "%" SCNx64, &a) == 1) {
        if (n == cap)
            addrs = realloc(addrs, (cap *= 2) * sizeof *addrs);
        if (addrs)
            addrs[n++] = a;
    }
    fclose(f);
    int runs = atoi(argv[3]);
    struct fnp_symbol *out = malloc((n ? n : 1) * sizeof *out);
    double *t = malloc((runs > 0 ? (size_t)runs : 1) * sizeof *t);
    if (!addrs || !out || !t || runs < 1)
        return 1;
    for (int r = 0; r < runs; r++) {
        double t0 = now();
        struct fnp_symbolizer *s = fnp_symbolizer_new(r == runs - 1 ? on_warn : NULL, NULL);
        if (!s || fnp_symbolizer_resolve(s, argv[1], addrs, n, out) != 0)
            return 1;
        if (r == runs - 1 && argc > 4) {
            FILE *o = fopen(argv[4], "w");
            if (!o)
                return 1;
            for (size_t i = 0; i < n; i++)
                fprintf(o, "0x%" PRIx64 "\t%s\t%s\t%u\n", addrs[i], out[i].name, out[i].file,
                        out[i].line);
            fclose(o);
        }
        fnp_symbolizer_free(s);
        t[r] = now() - t0;
    }
    qsort(t, (size_t)runs, sizeof *t, by_value);
    printf("%.4f %.4f\n", t[runs / 2], t[0]);
    free(t);
    free(out);
    free(addrs);
    return 0;
}
