/* fnprof doctor's count of functions: gcc and clang instrument a function's body where it is
 * inlined too, so each inlined copy of step() adds a call site of the enter hook to its
 * caller. Five functions hold the call sites (one, two, three, main, and step itself, kept
 * out of line because the hook is passed its address), eleven sites in all: one, two and
 * three their own and two of step's each, main and step their own. */
#include <stdio.h>

static inline __attribute__((always_inline)) int step(int x)
{
    return x * 3 + 1;
}

__attribute__((noinline)) int one(int x)
{
    return step(x) + step(x + 1);
}

__attribute__((noinline)) int two(int x)
{
    return step(x) - step(x - 1);
}

__attribute__((noinline)) int three(int x)
{
    return step(x) ^ step(x + 2);
}

int main(void)
{
    printf("%d\n", one(1) + two(2) + three(3));
    return 0;
}
/* SPDX-License-Identifier: MIT */
