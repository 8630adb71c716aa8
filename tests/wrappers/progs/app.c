/* fnprof-cc's test program: known call counts (main 1, middle 10, leaf 55) at any -O. */
#include <stdio.h>
#include <string.h>

volatile int sink;

__attribute__((noinline)) int leaf(int x)
{
    sink = x;
    return x * 3 + 1;
}

__attribute__((noinline)) int middle(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += leaf(i);
    return s;
}

int main(int argc, char **argv)
{
    int t = 0;
    for (int i = 0; i < 10; i++)
        t += middle(i + 1 + (argc > 5));
    /* A libc inline from a system header: never profiled. */
    printf("%d %zu\n", t, strlen(argv[0]) > 0 ? (size_t)1 : (size_t)0);
    return 0;
}
/* SPDX-License-Identifier: MIT */
