/* Metadata from the program: fnprof_add_metadata("model", ...) twice (the last value
 * stays) and ("batch", "32"). Expected (run_robust.py, case "meta"): the profile's trailer
 * holds program, pid, start, host, fnprof and clock, then model=resnet and batch=32; the
 * counts are exact. */
#include <fnprof.h>
#include <stdio.h>

int leaf(int x)
{
    return x + 11;
}

int work(int x)
{
    return leaf(x) + leaf(x + 1);
}

int main(void)
{
    int bad = fnprof_add_metadata("model", "alexnet");
    bad |= fnprof_add_metadata("batch", "32");
    bad |= fnprof_add_metadata("model", "resnet");
    int r = 0;
    for (int i = 0; i < 4; i++)
        r += work(i);
    printf("meta %d %s\n", r, bad ? "refused" : "accepted");
    return 0;
}
/* SPDX-License-Identifier: MIT */
