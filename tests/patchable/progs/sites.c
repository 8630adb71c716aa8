/* A program whose every function is known: the patchable build's tests
 * (tests/patchable/check_patchable.py) look for each one's sites. */
#include <stdio.h>
#include <stdlib.h>

/* Kept out of line and whole: gcc's IPA would clone report() (report.constprop.0). */
#ifdef __clang__
#define KEEP __attribute__((noinline))
#else
#define KEEP __attribute__((noipa))
#endif

int lib_twice(int x);

static int KEEP square(int x)
{
    return x * x;
}

int KEEP fib(int n)
{
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

/* A tail call: its exit site sits before a jmp. */
int KEEP tail(int x)
{
    return lib_twice(x + 1);
}

KEEP __attribute__((cold)) void report(const char *what)
{
    fprintf(stderr, "%s\n", what);
}

/* gcc -O2 moves the unlikely branch to split.cold in .text.unlikely: exit sites there. */
int KEEP split(int x)
{
    if (__builtin_expect(x == 12345, 0)) {
        report("rare");
        return -1;
    }
    return x + 1;
}

/* Called by nobody: -ffunction-sections -Wl,--gc-sections drops it, and its sites too. */
int KEEP unused_function(int x)
{
    return x * 3 + 1;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 20;
    int s = 0;
    for (int i = 0; i < n; i++)
        s += square(i) + split(i);
    printf("fib %d square+split %d tail %d split %d\n", fib(n), s, tail(n), split(12345));
    return 0;
}
/* SPDX-License-Identifier: MIT */
