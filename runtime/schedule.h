/* SPDX-License-Identifier: MIT */
/*
 * The step schedule of PROF_SCHEDULE (docs/schedule.md): which action fnprof_step()'s step
 * takes, with the rule of torch.profiler.schedule. Pure code: no globals, no allocation, no
 * system call, so the runtime may call it anywhere, the hooks' thread included. Parsing
 * writes its reason with snprintf, so it belongs to start-up, not to a signal handler.
 *
 * Self-contained on purpose: the unit test and the runtime include it without runtime.h.
 */
#ifndef FNPROF_SCHEDULE_H
#define FNPROF_SCHEDULE_H

#include <stddef.h>
#include <stdint.h>

/* torch.profiler.ProfilerAction, same order and meaning. */
enum fnp_step_action {
    FNP_STEP_NONE,            /* not recorded */
    FNP_STEP_WARMUP,          /* recorded, then discarded when the active steps begin */
    FNP_STEP_RECORD,          /* recorded, kept */
    FNP_STEP_RECORD_AND_SAVE, /* recorded, kept, and the cycle is written when it ends */
};

/*
 * skip_first steps of NONE, then cycles of wait NONE, warmup WARMUP and active recorded
 * steps, the last of them RECORD_AND_SAVE; repeat cycles, 0 for no end. Every field may
 * take any value but active 0, which fnp_schedule_parse rejects (and which
 * fnp_schedule_action answers with NONE for every step rather than divide by zero).
 */
struct fnp_schedule {
    uint64_t skip_first, wait, warmup, active, repeat;
};

/*
 * Parses "skip_first=3,wait=2,warmup=1,active=4,repeat=2": comma-separated key=value items,
 * keys in any order, each at most once, missing ones at their defaults (skip_first=0,
 * wait=0, warmup=0, active=1, repeat=0). Values are unsigned decimal numbers up to
 * UINT64_MAX; spaces and tabs around keys and values are ignored.
 *
 * Returns 0 and fills *out, or -EINVAL and leaves *out untouched, with a one-line reason
 * (no "fnprof: " prefix, no newline) copied into why, truncated to whylen bytes with its
 * NUL; why may be NULL or whylen 0. why is left untouched on success. text is borrowed for
 * the call only; NULL is taken as an empty text, which is rejected.
 */
int fnp_schedule_parse(const char *text, struct fnp_schedule *out, char *why, size_t whylen);

/*
 * The action of step (0-based: the steps before the first fnprof_step() are step 0), as
 * torch.profiler.schedule(...)(step) returns it. Exact for every uint64_t step and
 * parameter: no sum or product that can overflow.
 */
enum fnp_step_action fnp_schedule_action(const struct fnp_schedule *s, uint64_t step);

/*
 * The cycle (1, 2, ...) that step belongs to when its action is not NONE; 0 when it is.
 * A cycle's WARMUP steps carry its number too. Saturates at UINT64_MAX (reachable only with
 * a period of one step and a step near 2^64).
 */
uint64_t fnp_schedule_cycle(const struct fnp_schedule *s, uint64_t step);

/* "NONE", "WARMUP", "RECORD", "RECORD_AND_SAVE"; "INVALID" for any other value. Static. */
const char *fnp_step_action_name(enum fnp_step_action a);

#endif
