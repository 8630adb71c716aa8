/* The coverage test's program: main calls an instrumented function and a library built
 * without instrumentation (libplain.so), where nearly all the time goes. */
#include <stdio.h>

long plain_work(long n);

__attribute__((noinline)) long small(long n)
{
    return n * 3;
}

int main(void)
{
    long s = small(5) + plain_work(30000000);
    printf("app: %ld\n", s);
    return 0;
}
/* SPDX-License-Identifier: MIT */
