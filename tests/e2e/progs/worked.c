/* The worked example of docs/pstats.md: fib(5), then a(1); a(n) calls b(n); b(n) calls a(n - 1)
 * while n > 0. cProfile: fib 15 calls, 1 primitive, fib->fib 14 calls, 2 primitive; a 2 calls,
 * 1 primitive; b 2 calls, 1 primitive; a->b 2 calls, 1 primitive; b->a 1 call, 1 primitive. */
#include <stdio.h>

int b(int n);

int fib(int n)
{
    if (n < 2)
        return n;
    return fib(n - 1) + fib(n - 2);
}

int a(int n)
{
    return 1 + b(n);
}

int b(int n)
{
    if (n > 0)
        return 10 + a(n - 1);
    return 10;
}

void run_all(void)
{
    int f = fib(5);
    int x = a(1);
    printf("fib(5) = %d, a(1) = %d\n", f, x);
}

int main(void)
{
    run_all();
    return 0;
}
/* SPDX-License-Identifier: MIT */
