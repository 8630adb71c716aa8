/* SPDX-License-Identifier: MIT */
/*
 * Runs one benchmark command and reports its figures, so that they are the command's own.
 * A Python child (fork or vfork) carries the interpreter's resident set into the exec, and
 * the kernel keeps the larger high-water mark as the child's ru_maxrss: every run would
 * show at least the harness's ~18 MB. This small launcher is the parent instead.
 *
 * usage: launch [-R] [-p LIB] [-s SIG:MS] REPORT PROG [ARG...]
 *   -R      no address-space randomization for PROG (personality(2))
 *   -s SIG:MS  signal SIG (a number) to PROG every MS milliseconds from a side process,
 *           once PROG catches it (its /proc status lists SIG as caught; never before,
 *           when SIG would still kill it) and while it still does (bench/harness.py's
 *           toggling rows: PROF_TOGGLE_SIGNAL)
 *   -p LIB  LD_PRELOAD=LIB for PROG only (preloaded into the launcher, a hook library
 *           would write its own report at the launcher's exit)
 *   REPORT  gets one line: wall_ns maxrss_kb end_ns wait_status signals_sent cpu_ns
 *           (CLOCK_MONOTONIC, the clock of Python's time.monotonic_ns; cpu: PROG's user +
 *           system time, which other jobs on a busy machine move less than the wall time)
 * stdin, stdout, stderr and the environment pass through unchanged.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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

/* Whether pid's /proc status lists sig among the caught signals (SigCgt, a hex mask). */
static int catches(pid_t pid, int sig)
{
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    int caught = 0;
    while (fgets(line, sizeof(line), f))
        if (strncmp(line, "SigCgt:", 7) == 0) {
            caught = (int)((strtoull(line + 7, NULL, 16) >> (sig - 1)) & 1);
            break;
        }
    fclose(f);
    return caught;
}

/* The side process of -s: runs until killed, or until pid no longer catches sig. */
static void signaller(pid_t pid, int sig, long ms, long *sent)
{
    struct timespec poll = {0, 1000000}, period = {ms / 1000, (ms % 1000) * 1000000};
    while (!catches(pid, sig)) {
        if (kill(pid, 0) != 0)
            _exit(0);
        nanosleep(&poll, NULL);
    }
    for (;;) {
        nanosleep(&period, NULL);
        if (!catches(pid, sig) || kill(pid, sig) != 0)
            _exit(0);
        __atomic_add_fetch(sent, 1, __ATOMIC_RELAXED);
    }
}

int main(int argc, char **argv)
{
    int i = 1, norand = 0, sig = 0;
    long ms = 0;
    const char *preload = NULL;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (strcmp(argv[i], "-R") == 0)
            norand = 1;
        else if (strcmp(argv[i], "-p") == 0 && i + 1 < argc)
            preload = argv[++i];
        else if (strcmp(argv[i], "-s") == 0 && i + 1 < argc) {
            if (sscanf(argv[++i], "%d:%ld", &sig, &ms) != 2 || sig < 1 || sig > 64 || ms < 1)
                argc = 0; /* the usage line below */
        } else
            break;
    }
    if (argc - i < 2) {
        fprintf(stderr, "usage: launch [-R] [-p LIB] [-s SIG:MS] REPORT PROG [ARG...]\n");
        return 2;
    }
    const char *report = argv[i++];
    long *sent =
        mmap(NULL, sizeof(long), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sent == MAP_FAILED) {
        perror("launch: mmap");
        return 2;
    }
    *sent = 0;
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
    pid_t side = -1;
    if (sig) {
        side = fork();
        if (side < 0) {
            perror("launch: fork");
            return 2;
        }
        if (side == 0)
            signaller(pid, sig, ms, sent);
    }
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0) {
        perror("launch: wait4");
        return 2;
    }
    long long t1 = now_ns();
    if (side > 0) {
        kill(side, SIGKILL);
        waitpid(side, NULL, 0);
    }
    long long cpu = (long long)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000LL +
                    (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000LL;
    FILE *f = fopen(report, "w");
    if (!f ||
        fprintf(f, "%lld %ld %lld %d %ld %lld\n", t1 - t0, ru.ru_maxrss, t1, status, *sent, cpu) <
            0 ||
        fclose(f) != 0) {
        perror("launch: report");
        return 2;
    }
    return 0;
}
