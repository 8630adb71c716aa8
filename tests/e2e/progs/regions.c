/* Named regions among functions: a block region in a loop, a region around a recursive
 * call, begin/end spans, a region in main; mirrored by regions.py (a region is a function
 * whose code carries the region's name). */
#include <fnprof.h>
#include <stdio.h>

static int leaf(int x)
{
    return x * 3 + 1;
}

static int parse(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++) {
        FNPROF_REGION("parse item");
        s += leaf(i);
    }
    return s;
}

static int rec(int n)
{
    FNPROF_REGION("rec level");
    if (n == 0)
        return leaf(0);
    return rec(n - 1) + 1;
}

static int spans(int n)
{
    int s = 0;
    fnprof_region_begin("span");
    s += parse(n);
    fnprof_region_end();
    if (n > 1) {
        FNPROF_REGION("early");
        return s + rec(n);
    }
    return s;
}

int main(void)
{
    int s = 0;
    {
        FNPROF_REGION("load config");
        s += parse(3);
    }
    for (int k = 0; k < 4; k++)
        s += spans(k);
    s += rec(5);
    printf("%d\n", s);
    return 0;
}
/* SPDX-License-Identifier: MIT */
