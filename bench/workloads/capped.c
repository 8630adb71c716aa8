/*
 * capped: past PROF_MAX_NODES (the harness runs it with PROF_MAX_NODES=100). a() and b()
 * recurse d levels (default 300), level k + 1 running b when k has an odd number of bits set
 * (the Thue-Morse word: no block repeats back to back, so no recursion folds and every
 * level is a new calling context), and at the bottom a loop makes n calls (default
 * 20,000,000) of a 3-instruction function: every one a call below a merged one. Calls =
 * n + d + a few.
 */
#include <stdio.h>
#include <stdlib.h>

static long depth = 300, calls = 20000000;

__attribute__((noinline, noipa)) static long leaf(long x)
{
    __asm__ volatile("" : "+r"(x));
    return x + 1;
}

__attribute__((noinline, noipa)) static long bottom(void)
{
    long s = 0;
    for (long i = 0; i < calls; i++)
        s = leaf(s);
    return s;
}

__attribute__((noinline, noipa)) static long b(long k);

__attribute__((noinline, noipa)) static long a(long k)
{
    long r = k < depth ? (__builtin_popcountl(k) & 1 ? b(k + 1) : a(k + 1)) : bottom();
    __asm__ volatile("" : "+r"(r)); /* no tail call in the base build */
    return r;
}

__attribute__((noinline, noipa)) static long b(long k)
{
    long r = k < depth ? (__builtin_popcountl(k) & 1 ? b(k + 1) : a(k + 1)) : bottom();
    __asm__ volatile("" : "+r"(r));
    return r;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        calls = atol(argv[1]);
    if (argc > 2)
        depth = atol(argv[2]);
    printf("capped %ld calls %ld deep: %ld\n", calls, depth, a(1));
    return 0;
}
/* SPDX-License-Identifier: MIT */
