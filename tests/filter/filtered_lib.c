/* A file the test's filter excludes whole (SCOREP_FILE_NAMES): its function's callees
 * hang from its caller, main. */
#include "filtered.h"

__attribute__((noinline)) void lib_entry(int n)
{
    for (int i = 0; i < n; i++)
        leaf();
}
/* SPDX-License-Identifier: MIT */
