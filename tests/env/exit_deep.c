/* Calls exit() three functions deep after a chdir: the profile must still appear where
 * PROF_OUTPUT named it at start, with the open calls counted, and the exit status kept. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((noinline)) void leave_now(int status)
{
    if (chdir("/"))
        perror("chdir");
    exit(status);
}

__attribute__((noinline)) void work(int n)
{
    if (n > 0)
        work(n - 1);
    else
        leave_now(3);
}

int main(void)
{
    printf("pid %d\n", (int)getpid());
    fflush(stdout);
    work(4);
    return 0;
}
/* SPDX-License-Identifier: MIT */
