/*
 * Named regions, then death by a signal while one is still open: the raw snapshot the
 * signal handler writes must name them (case_signal_names_regions.py).
 * Usage: signal_regions SIGNAL_NUMBER
 */
#include <signal.h>
#include <stdlib.h>

#include "fnprof.h"

static volatile unsigned sink;

static void step(unsigned i)
{
    fnprof_region_begin("parse_step");
    sink += i;
    fnprof_region_end();
}

int main(int argc, char **argv)
{
    int sig = argc > 1 ? atoi(argv[1]) : SIGTERM;
    fnprof_region_begin("outer_loop");
    for (unsigned i = 0; i < 1000; i++)
        step(i);
    raise(sig); /* outer_loop is still open */
    fnprof_region_end();
    return 0;
}
/* SPDX-License-Identifier: MIT */
