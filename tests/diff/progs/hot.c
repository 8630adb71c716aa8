/*
 * fnprof diff's test program: run as "hot base" and "hot new", its hot spot moves from a()
 * to b(), one function runs only in each, and call counts change by known amounts
 * (tests/diff/diff_cli.py derives the expected rows from them). Functions stay in this
 * order: ties of the same change are listed in line order.
 */
#include <string.h>

static volatile unsigned long sink;

void leaf(void)
{
    for (unsigned long i = 0; i < 20000; i++)
        sink += i;
}

void a(int n)
{
    for (int i = 0; i < n; i++)
        leaf();
}

void b(int n)
{
    for (int i = 0; i < n; i++)
        leaf();
}

void only_base(void)
{
    sink++;
}

void only_new(void)
{
    sink++;
}

void common(void)
{
    sink++;
}

int rec(int depth)
{
    return depth ? rec(depth - 1) + 1 : 0;
}

int main(int argc, char **argv)
{
    int moved = argc > 1 && !strcmp(argv[1], "new");
    a(moved ? 100 : 2000);
    b(moved ? 6000 : 200);
    if (moved)
        only_new();
    else
        only_base();
    for (int i = 0; i < (moved ? 5 : 3); i++)
        common();
    return rec(moved ? 3 : 2) == 99;
}
/* SPDX-License-Identifier: MIT */
