/* A small program for the file cases (case_files_*.py): a few instrumented calls, one
 * line of its own on stdout, an exit status chosen by argv[1] (default 3, so that a status
 * changed by fnprof shows), and with argv[2] = "kill" it ends by the signal SIGTERM that
 * it sends itself, after the calls (the runtime then writes the raw snapshot); "segv":
 * by a SIGSEGV the kernel raises (a store through a null pointer). With argv[2] =
 * "malloc" it also allocates (for PROF_MEMORY). */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile unsigned long sink;
static volatile uintptr_t sink_zero; /* 0, unknown to the compiler */

void leaf(unsigned long i)
{
    sink += i;
}

void work(int n)
{
    for (int i = 0; i < n; i++)
        leaf((unsigned long)i);
}

int main(int argc, char **argv)
{
    int status = argc > 1 ? atoi(argv[1]) : 3;
    const char *how = argc > 2 ? argv[2] : "";
    work(1000);
    if (strcmp(how, "malloc") == 0)
        for (int i = 0; i < 10; i++)
            free(malloc(100 + (size_t)i));
    printf("files_work: done\n");
    fflush(stdout);
    if (strcmp(how, "kill") == 0)
        raise(SIGTERM);
    if (strcmp(how, "segv") == 0)
        *(volatile int *)(uintptr_t)sink_zero = 1;
    return status;
}
/* SPDX-License-Identifier: MIT */
