/* PROF_LIBCALLS's cost per library call (bench/libcalls.py): one instrumented function
 * calls lc_tiny, from libcalls_lib.so (not instrumented), N times; the function itself is
 * entered once, so the difference between configurations is the library calls'.
 *   libcalls N */
#include <stdio.h>
#include <stdlib.h>

long lc_tiny(long x);

__attribute__((noinline)) long caller(long n)
{
    long s = 0;
    for (long i = 0; i < n; i++)
        s += lc_tiny(i);
    return s;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 10000000;
    printf("%ld\n", caller(n));
    return 0;
}
/* SPDX-License-Identifier: MIT */
