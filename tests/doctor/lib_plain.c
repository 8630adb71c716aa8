/* A shared library built without instrumentation: its time is its caller's. */
int plain_work(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += i * i;
    return s;
}
/* SPDX-License-Identifier: MIT */
