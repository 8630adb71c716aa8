/* The second plugin of dlopen_main.c: plugin_a.c's shape, other names, other counts. */
int b_leaf(int x)
{
    return x * 3 + 1;
}

int b_work(int i)
{
    return b_leaf(i) + b_leaf(i + 1) + b_leaf(i + 2);
}
/* SPDX-License-Identifier: MIT */
