#include "primes.h"

int is_prime(unsigned n)
{
    if (n < 2)
        return 0;
    for (unsigned d = 2; d * d <= n; d++)
        if (n % d == 0)
            return 0;
    return 1;
}

unsigned count_primes(unsigned limit)
{
    unsigned count = 0;
    for (unsigned n = 0; n < limit; n++)
        count += (unsigned)is_prime(n);
    return count;
}
/* SPDX-License-Identifier: MIT */
