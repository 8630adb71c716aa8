/* The library half of sites.c: linked in, or a -fPIC shared library. */
int __attribute__((noinline)) lib_twice(int x)
{
    return 2 * x;
}
/* SPDX-License-Identifier: MIT */
