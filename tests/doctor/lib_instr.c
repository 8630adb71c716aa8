/* A shared library built with -finstrument-functions: two functions. */
static int step(int x)
{
    return x + 2;
}

int instr_work(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += step(i);
    return s;
}
/* SPDX-License-Identifier: MIT */
