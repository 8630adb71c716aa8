/* Built without -finstrument-functions: the runtime cannot see inside. */
__attribute__((noinline)) long plain_work(long n)
{
    volatile long acc = 0;
    for (long i = 0; i < n; i++)
        acc += i ^ (acc >> 3);
    return acc;
}
/* SPDX-License-Identifier: MIT */
