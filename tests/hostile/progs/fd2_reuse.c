/*
 * A program that uses fd 2 for a data file of its own: argv[1] "reuse" closes fd 2 first,
 * "closed" expects it closed at start (as a daemon may be started). It opens argv[2], which
 * gets fd 2, writes its data there and exits; everything written to that file that is not
 * its data is some guest's. It prints the fd the file got. "kill" is "reuse" ended by
 * SIGTERM, so that the profile comes from the signal path.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int work(int x)
{
    return x * 7 + 3;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    if (strcmp(argv[1], "reuse") == 0 || strcmp(argv[1], "kill") == 0)
        close(2);
    int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int sum = 0;
    for (int i = 0; i < 100; i++)
        sum += work(i);
    char line[64];
    int n = snprintf(line, sizeof(line), "data %d\n", sum);
    if (fd < 0 || write(fd, line, (size_t)n) != n)
        return 1;
    printf("fd %d\n", fd);
    fflush(stdout);
    if (strcmp(argv[1], "kill") == 0)
        raise(SIGTERM);
    return 0;
}
/* SPDX-License-Identifier: MIT */
