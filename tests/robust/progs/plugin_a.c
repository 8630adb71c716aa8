/* A plugin dlopen'd, called and dlclose'd twice by dlopen_main.c. plugin_b.c has the same
 * shape, so that when it is loaded where this one was, its functions sit at the same
 * addresses as these. */
int a_leaf(int x)
{
    return x * 2 + 1;
}

int a_work(int i)
{
    return a_leaf(i) + a_leaf(i + 1);
}
/* SPDX-License-Identifier: MIT */
