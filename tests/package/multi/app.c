#include <stdio.h>

int alpha_step(int x);
int gamma_twice(int x);

int main(void)
{
    int sum = 0;
    for (int i = 0; i < 7; i++)
        sum += alpha_step(i);
    for (int i = 0; i < 3; i++)
        sum += gamma_twice(i);
    printf("%d\n", sum);
    return 0;
}
/* SPDX-License-Identifier: MIT */
