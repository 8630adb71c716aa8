/* For fnprof-cc --filter: helper_* are excluded by name, keep_* are kept; "keep_helper_x"
 * contains an excluded identifier and must stay instrumented (exact, not by substring). */
volatile int sink;

__attribute__((noinline)) int helper_add(int x)
{
    sink = x;
    return x + 1;
}

__attribute__((noinline)) int helper_mul(int x)
{
    sink = x;
    return x * 2;
}

__attribute__((noinline)) int helper_x(int x)
{
    sink = x;
    return x - 1;
}

__attribute__((noinline)) int keep_helper_x(int x)
{
    return helper_x(x) + 1;
}

__attribute__((noinline)) int keep_work(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += helper_add(i) + helper_mul(i) + keep_helper_x(i);
    return s;
}

int main(void)
{
    return keep_work(5) == 0;
}
/* SPDX-License-Identifier: MIT */
