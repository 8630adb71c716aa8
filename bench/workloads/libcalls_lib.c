/* The library of bench/workloads/libcalls.c, built without instrumentation. */
long lc_tiny(long x)
{
    return x ^ (x >> 3);
}
/* SPDX-License-Identifier: MIT */
