/* SPDX-License-Identifier: MIT */
/*
 * Preloaded beside a benchmark's program by bench/compensate.py: at exit (an atexit handler
 * registered before the program's own, so it runs after them, next to workloads/mark.c's),
 * writes the time the process spent waiting for a processor so far (the second field of
 * /proc/self/schedstat, ns) to $BENCH_RUNDELAY. On a shared machine that time is in the
 * run's wall time and in every interval its profile measured, and it is no part of what
 * either build of the program costs: the benchmark takes it off both.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void note(void)
{
    const char *out = getenv("BENCH_RUNDELAY");
    if (!out || !*out)
        return;
    char buf[128];
    int fd = open("/proc/self/schedstat", O_RDONLY);
    ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
    if (fd >= 0)
        close(fd);
    if (n <= 0)
        return;
    buf[n] = 0;
    unsigned long long cpu, wait;
    if (sscanf(buf, "%llu %llu", &cpu, &wait) != 2)
        return;
    FILE *f = fopen(out, "w");
    if (f) {
        fprintf(f, "%llu\n", wait);
        fclose(f);
    }
}

__attribute__((constructor)) static void init(void)
{
    atexit(note);
}
