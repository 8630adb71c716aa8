/* Direct recursion. cProfile: fib 16722 calls, 2 primitive; fib->fib 16720 calls, 4 primitive
 * (the two children of each outermost fib); run_all->fib 2 calls, 2 primitive. */
#include <stdio.h>

long fib(int n)
{
    if (n < 2)
        return n;
    return fib(n - 1) + fib(n - 2);
}

void run_all(void)
{
    long first = fib(18);
    long second = fib(18);
    printf("fib(18) = %ld\n", first);
    printf("fib(18) = %ld\n", second);
}

int main(void)
{
    run_all();
    return 0;
}
/* SPDX-License-Identifier: MIT */
