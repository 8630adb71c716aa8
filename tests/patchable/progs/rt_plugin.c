/* The patchable library rt_dlopen loads after start. */
#include "rt_common.h"

NOINLINE int plugin_inner(int x)
{
    int r = x * 3;
    KEEP(r);
    return r;
}

NOINLINE int plugin_entry(int x)
{
    int r = plugin_inner(x);
    KEEP(r);
    r += plugin_inner(r);
    KEEP(r);
    return r;
}
/* SPDX-License-Identifier: MIT */
