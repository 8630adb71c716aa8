#include "comdat.hh"

int __attribute__((noinline)) tu1(int x)
{
    return shared_inline(x) + twice(x) + int(twice(1.5));
}

/* Called by nobody: gone with --gc-sections, sites too. */
int __attribute__((noinline)) unused_tu1(int x)
{
    return shared_inline(x + 1);
}
/* SPDX-License-Identifier: MIT */
