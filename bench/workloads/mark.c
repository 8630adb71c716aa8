/*
 * Linked into every workload build (base, instrumented, -pg), compiled without
 * instrumentation. BENCH_MARK=<path>: the CLOCK_MONOTONIC time, in ns, at which the program
 * finished its own work is written there.
 *
 * The constructor of the executable runs after glibc registered the loader's destructor
 * pass (_dl_fini) with __cxa_atexit, so the handler registered here runs after every
 * atexit handler the program registers itself and before _dl_fini, which runs
 * libfnprof.so's exit dump. bench/run reads "wait4 returned" minus this mark as the tail
 * of a run; a profiler's exit cost is its tail minus the tail of the same binary without
 * it.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LOCAL __attribute__((no_instrument_function))

static const char *mark_path;

static LOCAL void mark(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    char buf[32];
    int n = snprintf(buf, sizeof(buf), "%lld\n", (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
    int fd = open(mark_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
        if (write(fd, buf, (size_t)n) < 0)
            perror("bench mark");
        close(fd);
    }
}

__attribute__((constructor)) static LOCAL void mark_init(void)
{
    mark_path = getenv("BENCH_MARK");
    if (mark_path && *mark_path)
        atexit(mark);
}
/* SPDX-License-Identifier: MIT */
