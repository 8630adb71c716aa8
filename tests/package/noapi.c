/* A program that calls nothing of fnprof's API: only its hooks tie it to the runtime, so a
 * link that drops libfnprof loses the profile silently. */
#include <stdio.h>

int square(int x)
{
    return x * x;
}

int main(void)
{
    int sum = 0;
    for (int i = 0; i < 10; i++)
        sum += square(i);
    printf("%d\n", sum);
    return 0;
}
/* SPDX-License-Identifier: MIT */
