/* Two static functions named "helper" (here and in same_b.c) must stay two keys. */
#include "twice.h"

static int helper(int x) /* @line helper_a */
{
    return twice(x) + 1;
}

int a_entry(int x) /* @line a_entry */
{
    return helper(x);
}
/* SPDX-License-Identifier: MIT */
