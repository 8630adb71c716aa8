/* Several callers of one function: leaf is called from run_all, alpha, beta and gamma, a
 * different number of times each; alpha calls beta, beta calls gamma. */
#include <stdio.h>

static int leaf(int x)
{
    return x * 2 + 1;
}

static int gamma_(int x)
{
    return leaf(x) + 1;
}

static int beta(int x)
{
    int s = leaf(x);
    s += leaf(x + 1);
    s += gamma_(x);
    return s;
}

static int alpha(int x)
{
    int s = 0;
    for (int i = 0; i < 3; i++)
        s += leaf(x + i);
    s += beta(x);
    return s;
}

void run_all(void)
{
    int a = alpha(1);
    int b = beta(2);
    int g = gamma_(3);
    int l = leaf(4);
    int a2 = alpha(5);
    printf("%d %d %d %d %d\n", a, b, g, l, a2);
}

int main(void)
{
    run_all();
    return 0;
}
/* SPDX-License-Identifier: MIT */
