/* fnprof doctor's subject: main and three functions, so that -O0 -finstrument-functions
 * gives four call sites of the enter hook. With -DWITH_LIBS it also calls into two shared
 * libraries, one instrumented (lib_instr.c) and one not (lib_plain.c). */
#include <stdio.h>
#include <stdlib.h>

#ifdef WITH_LIBS
int instr_work(int n);
int plain_work(int n);
#endif

static int leaf(int x)
{
    return x * 3 + 1;
}

static int middle(int x)
{
    return leaf(x) + leaf(x + 1);
}

int outer(int n)
{
    int sum = 0;
    for (int i = 0; i < n; i++)
        sum += middle(i);
    return sum;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 3;
    int sum = outer(n);
#ifdef WITH_LIBS
    sum += instr_work(n) + plain_work(n);
#endif
    printf("%d\n", sum);
    return 0;
}
/* SPDX-License-Identifier: MIT */
