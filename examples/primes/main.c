/*
 * A small project built by make (Makefile) or CMake (CMakeLists.txt), as a user's own would
 * be: the README profiles it by each route. Prints how many primes lie below the limit.
 */
#include <stdio.h>
#include <stdlib.h>

#include "primes.h"

int main(int argc, char **argv)
{
    unsigned limit = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 100000;
    printf("%u primes below %u\n", count_primes(limit), limit);
    return 0;
}
/* SPDX-License-Identifier: MIT */
