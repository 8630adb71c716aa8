/* Two processes that each make a profile (a parent and the child it forks and waits for),
 * so that `fnprof run -o` merges two files into its output. */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile unsigned long sink;

void leaf(unsigned long i)
{
    sink += i;
}

int main(void)
{
    pid_t pid = fork();
    for (unsigned long i = 0; i < 100; i++)
        leaf(i);
    if (pid == 0)
        return 0;
    waitpid(pid, NULL, 0);
    printf("files_fork_work: done\n");
    return 0;
}
/* SPDX-License-Identifier: MIT */
