/*
 * PROF_FILTER end to end (tests/filter/run_filter.py): functions a filter leaves out, called
 * in a loop, with callees of their own, between two activations of a recursive function,
 * and from another file excluded by its name. Their callees must hang from their callers
 * and every count stay exact.
 */
#include "filtered.h"

#include <stdio.h>

volatile int sink;

__attribute__((noinline)) void tiny(int i)
{
    sink += i;
}

__attribute__((noinline)) void leaf(void)
{
    sink++;
}

__attribute__((noinline)) void mid(int k)
{
    for (int i = 0; i < k; i++)
        leaf();
    tiny(k);
}

int helper(int n);

__attribute__((noinline)) int rec(int n)
{
    return n <= 0 ? 0 : helper(n);
}

/* excluded: rec's recursion through it becomes direct */
__attribute__((noinline)) int helper(int n)
{
    tiny(n);
    return rec(n - 1) + 1;
}

__attribute__((noinline)) void work(void)
{
    for (int i = 0; i < 1000; i++)
        tiny(i);
    for (int i = 0; i < 10; i++)
        mid(i);
    for (int i = 0; i < 5; i++)
        sink += rec(3);
    leaf();
}

int main(void)
{
    work();
    lib_entry(4);
    leaf();
    printf("filtered: %d\n", sink);
    return 0;
}
/* SPDX-License-Identifier: MIT */
