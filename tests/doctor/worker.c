/* fnprof run's subject: calls work() as many times as its first argument says, so that a
 * merged profile's count is the sum over the processes. */
#include <stdlib.h>

static volatile int sink;

void work(int i)
{
    sink += i;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1;
    for (int i = 0; i < n; i++)
        work(i);
    return argc > 2 ? atoi(argv[2]) : 0;
}
/* SPDX-License-Identifier: MIT */
