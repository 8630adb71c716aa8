/*
 * A program that ends in one of the ways argv[1] names, after some calls and allocations:
 * "abort" (abort()), "quick_exit" (quick_exit(3), after a handler of its own prints a
 * line), "sigchld" (SIGCHLD ignored, then SIGTERM raised).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile void *keep;

static int work(int x)
{
    keep = malloc(64 + (size_t)x);
    return x * 13 + 5;
}

static void own_handler(void)
{
    printf("quick_exit handler\n");
    fflush(stdout);
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    int sum = 0;
    for (int i = 0; i < 100; i++)
        sum += work(i);
    printf("sum %d\n", sum);
    fflush(stdout);
    if (strcmp(argv[1], "abort") == 0)
        abort();
    if (strcmp(argv[1], "quick_exit") == 0) {
        at_quick_exit(own_handler);
        quick_exit(3);
    }
    if (strcmp(argv[1], "sigchld") == 0) {
        signal(SIGCHLD, SIG_IGN);
        raise(SIGTERM);
    }
    return 1;
}
/* SPDX-License-Identifier: MIT */
