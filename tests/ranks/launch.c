/*
 * A launcher and its ranks, or a process and its fork, for the file names check_launch.py
 * checks. "launch N": forks N ranks, each exec'ing this program as "rank" with Open MPI's
 * rank variables set, as mpirun does; the launcher then works once itself. "rank": works
 * rank + 1 times. "fork": works once in a forked child and once in the parent.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile unsigned sink;

static void work(void)
{
    for (unsigned i = 0; i < 1000; i++)
        sink += i;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "rank") == 0) {
        int rank = atoi(getenv("OMPI_COMM_WORLD_RANK"));
        for (int i = 0; i <= rank; i++)
            work();
        return 0;
    }
    if (argc > 2 && strcmp(argv[1], "launch") == 0) {
        int n = atoi(argv[2]);
        for (int i = 0; i < n; i++) {
            if (fork() == 0) {
                char rank[16], size[16];
                snprintf(rank, sizeof(rank), "%d", i);
                snprintf(size, sizeof(size), "%d", n);
                setenv("OMPI_COMM_WORLD_RANK", rank, 1);
                setenv("OMPI_COMM_WORLD_SIZE", size, 1);
                execl("/proc/self/exe", argv[0], "rank", (char *)NULL);
                _exit(127);
            }
        }
        int status, bad = 0;
        while (wait(&status) > 0)
            bad |= !WIFEXITED(status) || WEXITSTATUS(status);
        work();
        return bad;
    }
    if (argc > 1 && strcmp(argv[1], "fork") == 0) {
        pid_t pid = fork();
        work();
        if (pid == 0)
            exit(0);
        int status;
        waitpid(pid, &status, 0);
        return 0;
    }
    fprintf(stderr, "usage: launch launch N | rank | fork\n");
    return 2;
}
/* SPDX-License-Identifier: MIT */
