/* SPDX-License-Identifier: MIT */
/*
 * Runs one benchmark command and reports its figures, so that they are the command's own.
 * A Python child (fork or vfork) carries the interpreter's resident set into the exec, and
 * the kernel keeps the larger high-water mark as the child's ru_maxrss: every run would
 * show at least the harness's ~18 MB. This small launcher is the parent instead.
 *
 * usage: launch [-R] [-p LIB] REPORT PROG [ARG...]
 *   -R      no address-space randomization for PROG (personality(2))
 *   -p LIB  LD_PRELOAD=LIB for PROG only (preloaded into the launcher, a hook library
 *           would write its own report at the launcher's exit)
 *   REPORT  gets one line: wall_ns maxrss_kb end_ns wait_status
 *           (CLOCK_MONOTONIC, the clock of Python's time.monotonic_ns)
 * stdin, stdout, stderr and the environment pass through unchanged.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
    int i = 1, norand = 0;
    const char *preload = NULL;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (strcmp(argv[i], "-R") == 0)
            norand = 1;
        else if (strcmp(argv[i], "-p") == 0 && i + 1 < argc)
            preload = argv[++i];
        else
            break;
    }
    if (argc - i < 2) {
        fprintf(stderr, "usage: launch [-R] [-p LIB] REPORT PROG [ARG...]\n");
        return 2;
    }
    const char *report = argv[i++];
    long long t0 = now_ns();
    pid_t pid = fork();
    if (pid < 0) {
        perror("launch: fork");
        return 2;
    }
    if (pid == 0) {
        if (norand && personality(personality(0xffffffff) | ADDR_NO_RANDOMIZE) == -1)
            _exit(127);
        if (preload && setenv("LD_PRELOAD", preload, 1) != 0)
            _exit(127);
        execv(argv[i], argv + i);
        _exit(127);
    }
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0) {
        perror("launch: wait4");
        return 2;
    }
    long long t1 = now_ns();
    FILE *f = fopen(report, "w");
    if (!f || fprintf(f, "%lld %ld %lld %d\n", t1 - t0, ru.ru_maxrss, t1, status) < 0 ||
        fclose(f) != 0) {
        perror("launch: report");
        return 2;
    }
    return 0;
}
