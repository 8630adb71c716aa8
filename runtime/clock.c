/* SPDX-License-Identifier: MIT */
/*
 * The clock behind every timestamp. rdtsc where the TSC is invariant (constant rate, runs
 * in every C-state): about 23 ns a read on these KVM guests, no syscall, no vDSO page.
 * Otherwise clock_gettime(CLOCK_MONOTONIC). Ticks are calibrated against CLOCK_MONOTONIC
 * over the whole run (first reading at load, second at the dump), so there is no
 * calibration spin at start-up and the rate is as exact as the run is long.
 * PROF_TIMER=none takes no timestamp at all (count-only mode).
 *
 * PROF_COMPENSATE=1 orders the reads: a fence before each (everything the program did
 * before it is done) and after it (nothing after it has begun). Unordered, the processor
 * runs the hooks beside the work around them, so what a hook pair adds depends on that
 * work: from nothing (a callee of dependent arithmetic hides it whole) to all of it (back
 * to back calls), which no single calibrated cost can take off. Ordered, the time between
 * two reads is the time of what ran between them, and the calibration's cost adds up
 * (docs/compensation.md has the figures). The fences make each pair cost 2.5-3 times as
 * much, so only a run that asks for compensation pays them.
 */
#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "runtime.h"

int fnp_clock_kind = FNP_CLOCK_MONOTONIC;

static uint64_t start_ticks, start_ns;

static int tsc_invariant(void)
{
#if defined(__x86_64__)
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000000, &a, &b, &c, &d) || a < 0x80000007)
        return 0;
    __get_cpuid(0x80000007, &a, &b, &c, &d);
    return (d >> 8) & 1; /* Invariant TSC */
#else
    return 0;
#endif
}

void fnp_clock_init(const char *want, int ordered)
{
    if (want && strcmp(want, "none") == 0) {
        fnp_clock_kind = FNP_CLOCK_NONE;
        return;
    }
    int tsc = tsc_invariant();
    if (want && strcmp(want, "monotonic") == 0)
        tsc = 0;
    else if (want && strcmp(want, "tsc") == 0 && !tsc)
        fnp_log("PROF_TIMER=tsc: this CPU has no invariant TSC; using CLOCK_MONOTONIC");
    else if (want && *want && strcmp(want, "auto") != 0 && strcmp(want, "tsc") != 0)
        fnp_log("PROF_TIMER=%s: unknown timer (auto, tsc, monotonic, none); using auto", want);
    if (ordered)
        fnp_clock_kind = tsc ? FNP_CLOCK_TSC_ORDERED : FNP_CLOCK_MONOTONIC_ORDERED;
    else
        fnp_clock_kind = tsc ? FNP_CLOCK_TSC : FNP_CLOCK_MONOTONIC;
    start_ns = fnp_clock_monotonic_ns();
    start_ticks = fnp_clock_now();
}

double fnp_clock_tick_seconds(void)
{
    if (fnp_clock_kind == FNP_CLOCK_NONE)
        return 1.0;
    if (fnp_clock_kind == FNP_CLOCK_MONOTONIC || fnp_clock_kind == FNP_CLOCK_MONOTONIC_ORDERED)
        return 1e-9;
    uint64_t ticks = fnp_clock_now() - start_ticks;
    uint64_t ns = fnp_clock_monotonic_ns() - start_ns;
    if (ticks == 0 || ns == 0)
        return 1e-9;
    return (double)ns * 1e-9 / (double)ticks;
}

uint64_t fnp_clock_mode(void)
{
    switch (fnp_clock_kind) {
    case FNP_CLOCK_TSC:
        return 0;
    case FNP_CLOCK_NONE:
        return FNP_ON_COUNT;
    case FNP_CLOCK_TSC_ORDERED:
        return FNP_ON_ORDERED;
    default:
        return FNP_ON_CLOCK_CALL;
    }
}

const char *fnp_clock_name(void)
{
    static const char *const names[] = {"tsc", "monotonic", "none", "tsc", "monotonic"};
    return names[fnp_clock_kind];
}

int fnp_clock_ordered(void)
{
    return fnp_clock_kind == FNP_CLOCK_TSC_ORDERED || fnp_clock_kind == FNP_CLOCK_MONOTONIC_ORDERED;
}

uint64_t fnp_clock_origin(void)
{
    return start_ticks;
}
