/* The program exec_parent.c starts. Exit status 3, so that the parent's output shows it
 * went through unchanged. */
#include <stdio.h>

int child_b(int x)
{
    return x * x;
}

int child_a(int x)
{
    return child_b(x) + 1;
}

int main(void)
{
    int sum = 0;
    for (int i = 0; i < 4; i++)
        sum += child_a(i);
    printf("child: sum %d\n", sum);
    return 3;
}
/* SPDX-License-Identifier: MIT */
