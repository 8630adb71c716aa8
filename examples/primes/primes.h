/* The example's library: counting primes the slow way, so that the profile has calls to show. */
#ifndef PRIMES_H
#define PRIMES_H

int is_prime(unsigned n);
unsigned count_primes(unsigned limit);

#endif
/* SPDX-License-Identifier: MIT */
