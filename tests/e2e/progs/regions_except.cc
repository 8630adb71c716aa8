// Regions in C++: the guard ends its region however the block is left, an exception
// included (gcc runs exit hooks while unwinding, clang does not: both must agree with
// cProfile). Mirrored by regions_except.py.
#include <cstdio>
#include <fnprof.h>

static int leaf(int x)
{
    return x * 2 + 1;
}

static int risky(int n)
{
    FNPROF_REGION("checked step");
    if (n % 3 == 0)
        throw n;
    return leaf(n);
}

static int guarded(int n)
{
    try {
        FNPROF_REGION("attempt");
        return risky(n);
    } catch (int) {
        return leaf(-n);
    }
}

int main()
{
    int s = 0;
    for (int i = 0; i < 10; i++) {
        FNPROF_REGION("iteration");
        s += guarded(i);
    }
    std::printf("%d\n", s);
    return 0;
}
/* SPDX-License-Identifier: MIT */
