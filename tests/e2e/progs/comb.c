/* Call paths that explode: walk(d) calls four functions, each of which walks d - 1, so
 * there are 4^d distinct paths. Run with a small PROF_MAX_NODES, it checks that merging
 * contexts beyond the cap keeps every count exact. */
#include <stdio.h>

static long total;

void walk(int d);

void north(int d)
{
    total += 1;
    walk(d - 1);
}

void east(int d)
{
    total += 2;
    walk(d - 1);
}

void south(int d)
{
    total += 3;
    walk(d - 1);
}

void west(int d)
{
    total += 4;
    walk(d - 1);
    if (d % 3 == 0)
        north(d - 1); /* north inside west: recursion of another shape */
}

void walk(int d)
{
    if (d <= 0)
        return;
    north(d);
    east(d);
    south(d);
    west(d);
}

int main(void)
{
    walk(7);
    printf("total %ld\n", total);
    return 0;
}
/* SPDX-License-Identifier: MIT */
