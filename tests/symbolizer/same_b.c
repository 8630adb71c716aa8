/* The other "helper": same name as in same_a.c, other file and line. */

#include "twice.h"

static int helper(int x) /* @line helper_b */
{
    return twice(x) - 1;
}

int b_entry(int x) /* @line b_entry */
{
    return helper(x) * 3;
}
/* SPDX-License-Identifier: MIT */
