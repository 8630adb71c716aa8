/* Three-way recursion step_a -> step_b -> step_c -> step_a, entered at each of the three. */
#include <stdio.h>

int step_b(int n);
int step_c(int n);

int step_a(int n)
{
    return 1 + step_b(n);
}

int step_b(int n)
{
    return 2 * step_c(n);
}

int step_c(int n)
{
    if (n <= 0)
        return 1;
    return 3 + step_a(n - 1);
}

void run_all(void)
{
    int a = step_a(4);
    int b = step_b(2);
    int c = step_c(3);
    int d = step_c(0);
    printf("step_a(4) = %d\n", a);
    printf("step_b(2) = %d\n", b);
    printf("step_c(3) = %d\n", c);
    printf("step_c(0) = %d\n", d);
}

int main(void)
{
    run_all();
    return 0;
}
/* SPDX-License-Identifier: MIT */
