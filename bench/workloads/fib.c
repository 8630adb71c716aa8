/* fib: naive recursion, one function, shallow stack (depth n), calls = 2*fib(n+1) - 1. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline, noipa)) static long fib(int n)
{
    if (n < 2)
        return n;
    long r = fib(n - 1) + fib(n - 2);
    /* Keeps gcc from turning one of the two calls into a loop (tail recursion with an
     * accumulator) in the uninstrumented build only: base and instrumented builds must
     * make the same calls. */
    __asm__ volatile("" : "+r"(r));
    return r;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 32;
    printf("fib(%d) = %ld\n", n, fib(n));
    return 0;
}
/* SPDX-License-Identifier: MIT */
