/* A function called both recursively and not: measure is called from run_all directly, from
 * inside walk's recursion and by itself; measure(3) calls walk again, so walk is entered from
 * run_all (primitive), from walk and from measure (nested in walk, or not). */
#include <stdio.h>

int measure(int n);

int walk(int n)
{
    int s = measure(n % 4);
    if (n > 0)
        s += walk(n - 1);
    return s;
}

int measure(int n)
{
    if (n <= 0)
        return 1;
    int s = n + measure(n - 1);
    if (n == 3)
        s += walk(1);
    return s;
}

void run_all(void)
{
    int a = measure(3);
    int b = walk(5);
    int c = measure(2);
    int d = walk(0);
    printf("%d %d %d %d\n", a, b, c, d);
}

int main(void)
{
    run_all();
    return 0;
}
/* SPDX-License-Identifier: MIT */
