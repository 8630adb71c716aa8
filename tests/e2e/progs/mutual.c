/* Mutual recursion: is_even <-> is_odd, entered from both sides. */
#include <stdio.h>

int is_odd(unsigned n);

int is_even(unsigned n)
{
    if (n == 0)
        return 1;
    return is_odd(n - 1);
}

int is_odd(unsigned n)
{
    if (n == 0)
        return 0;
    return is_even(n - 1);
}

void run_all(void)
{
    static const unsigned values[] = {7, 10, 0, 3, 1};

    for (unsigned i = 0; i < sizeof values / sizeof values[0]; i++) {
        unsigned n = values[i];
        int even = is_even(n);
        int odd = is_odd(n);
        printf("%u even=%d odd=%d\n", n, even, odd);
    }
}

int main(void)
{
    run_all();
    return 0;
}
/* SPDX-License-Identifier: MIT */
