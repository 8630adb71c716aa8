/* A shared library built with fnprof-cc and loaded by a program built without it: its
 * functions are profiled with no LD_PRELOAD (the wrapper linked the runtime into it). */
volatile int lib_sink;

__attribute__((noinline)) int lib_step(int x)
{
    lib_sink = x;
    return x + 1;
}

int lib_run(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += lib_step(i);
    return s;
}
/* SPDX-License-Identifier: MIT */
