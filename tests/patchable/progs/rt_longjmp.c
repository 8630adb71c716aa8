/* longjmp through patched frames: the frames it leaves never run their exits, and the
 * shadow stack is cut where setjmp was called (interpose.c); recursion between the two,
 * and a function that goes on calling after the jump. */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>

#include "rt_common.h"

static volatile long sink;

NOINLINE int jumper(jmp_buf *env, int n)
{
    if (n % 3 == 0)
        longjmp(*env, 1);
    int r = n;
    KEEP(r);
    return r;
}

NOINLINE int deep(jmp_buf *env, int n, int k)
{
    if (k == 0) {
        int r = jumper(env, n);
        KEEP(r);
        return r;
    }
    int r = deep(env, n, k - 1);
    KEEP(r);
    return r + 1;
}

NOINLINE int after(int n)
{
    int r = n * 2;
    KEEP(r);
    return r;
}

NOINLINE int catcher(int n)
{
    jmp_buf env;
    volatile int s = 0;
    if (setjmp(env) == 0)
        s += deep(&env, n, n % 5);
    else
        s += after(n);
    s += after(s);
    return s;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 300;
    long s = 0;
    for (int i = 0; i < n; i++)
        s += catcher(i);
    sink += s;
    printf("%ld\n", (long)sink);
    return 0;
}
/* SPDX-License-Identifier: MIT */
