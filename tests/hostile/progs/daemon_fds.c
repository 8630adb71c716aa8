/*
 * A daemon's start: it notes the first fd it gets, closes every fd (close_range), reopens
 * 0, 1 and 2 on /dev/null, makes a pipe and writes "hello" into it. With argv[2] "signal"
 * it then sends itself SIGUSR2 (PROF_DUMP_SIGNAL=USR2; "toggle": SIGUSR1 first,
 * PROF_TOGGLE_SIGNAL=USR1) and waits, at most argv[4] seconds,
 * for the profile argv[3] to appear. It reads back what its pipe holds and writes the fds
 * it got, what it read and whether the profile appeared to the file argv[1]: without a
 * guest, "first 3, pipe 3 4, read 'hello', result 5".
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int work(int x)
{
    return x * 5 + 2;
}

int main(int argc, char **argv)
{
    if (argc != 5)
        return 2;
    int first = open("/dev/null", O_RDONLY);
    int sum = 0;
    for (int i = 0; i < 100; i++)
        sum += work(i);
    if (close_range(0, ~0U, 0) != 0)
        return 3;
    for (int i = 0; i < 3; i++)
        if (open("/dev/null", O_RDWR) != i)
            return 4;
    int p[2];
    if (pipe(p) != 0 || write(p[1], "hello", 5) != 5)
        return 5;
    int dumped = -1;
    if (strcmp(argv[2], "signal") == 0 || strcmp(argv[2], "toggle") == 0) {
        if (argv[2][0] == 't')
            kill(getpid(), SIGUSR1); /* PROF_TOGGLE_SIGNAL=USR1 too: a pause, then the dump */
        kill(getpid(), SIGUSR2);
        struct timespec tick = {0, 10000000};
        struct stat st;
        dumped = 0;
        for (long i = 0; i < 100L * atoi(argv[4]) && !dumped; i++) {
            dumped = stat(argv[3], &st) == 0;
            if (!dumped)
                nanosleep(&tick, NULL);
        }
        for (int i = 0; i < 50; i++) /* a late byte has time to come */
            nanosleep(&tick, NULL);
    }
    char got[64] = "";
    fcntl(p[0], F_SETFL, O_NONBLOCK);
    ssize_t n = read(p[0], got, sizeof(got) - 1);
    got[n > 0 ? n : 0] = 0;
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    char line[256];
    int len = snprintf(line, sizeof(line), "first %d, pipe %d %d, read '%s', result %d, sum %d\n",
                       first, p[0], p[1], got, fd, sum);
    if (fd < 0 || write(fd, line, (size_t)len) != len)
        return 6;
    if (dumped == 0)
        return 7;
    return 0;
}
/* SPDX-License-Identifier: MIT */
