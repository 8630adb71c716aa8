/* libplugin.so: instrumented, dlopen'd by calls.c after fnprof hooked the objects loaded
 * at start: its library calls are found when its first function runs. */
#include <unistd.h>

long lk_add(long a, long b);

static long sink;

void plugin_run(void)
{
    for (int i = 0; i < 7; i++)
        sink += lk_add(i, 4);
    sink += getpid() > 0;
}
/* SPDX-License-Identifier: MIT */
