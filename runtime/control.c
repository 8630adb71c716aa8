/* SPDX-License-Identifier: MIT */
/*
 * The controls a program or its environment has over recording: pause and resume
 * (fnprof_pause, PROF_START=paused), the step schedule (PROF_SCHEDULE, fnprof_step), resets
 * (fnprof_reset) and every dump but the crash path's. They all meet here because they all
 * decide two things under one lock: the mode bits of fnp_recording, which the hooks read,
 * and the baseline a dump subtracts (snapshot.c).
 *
 * Paused, fnp_recording holds FNP_ON | FNP_ON_PAUSED and no other mode bit, so that every
 * hook pair takes its cold path, where an enter pushes a ghost (runtime.h) and an exit pops
 * one or closes a call that was open when the pause began. What that means for the
 * numbers is in docs/controls.md.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"
#include "schedule.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* Written under lock. */
static uint64_t modes;    /* FNP_ON and the clock's and trace's bits: recording's own */
static int user_paused;   /* fnprof_pause, PROF_START=paused */
static int schedule_none; /* the schedule's current step is NONE */
static int have_schedule;
static struct fnp_schedule schedule;
static uint64_t step;
static uint64_t cycles_written;
static struct fnp_baseline base; /* what a dump leaves out; empty: nothing */
static int have_base;
/* Set once fnp_control_init has run (an armed run, or an interpreter's start): only then
 * are the lock's fork handlers registered. Before, the controls do nothing and take no
 * lock, so that a program linked with fnprof and run plain cannot leave the lock held in
 * a child forked while another thread pauses. */
static int ready;
/* fnprof record's mark (dumpsig.c): what a window dump leaves out. Apart from base, so that
 * the program's resets and cycles and a record's windows never cut each other's. */
static struct fnp_baseline window;
static int have_window;
static int ended; /* the exit dump has run */

uint64_t fnp_control_modes(void)
{
    return user_paused || schedule_none ? FNP_ON | FNP_ON_PAUSED : modes;
}

uint64_t fnp_control_running_modes(void)
{
    return modes;
}

/* Sets fnp_recording's mode bits, keeping the module generation; never revives it once
 * the exit dump has cleared it. A patchable build's sites follow (patch.c). */
static void apply(void)
{
    uint64_t want = fnp_control_modes();
    uint64_t rec = __atomic_load_n(&fnp_recording, __ATOMIC_RELAXED);
    while (rec && !__atomic_compare_exchange_n(&fnp_recording, &rec, (rec & ~FNP_ON_BITS) | want, 1,
                                               __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
        ;
    fnp_patch_sync();
}

void fnp_control_init(uint64_t recording_modes)
{
    __atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
    modes = recording_modes;
    const char *start = fnp_config.start;
    if (start && *start) {
        if (strcmp(start, "paused") == 0)
            user_paused = 1;
        else if (strcmp(start, "running") != 0)
            fnp_log("PROF_START=%s: expected 'paused' or 'running'; running", start);
    }
    if (fnp_config.schedule && *fnp_config.schedule) {
        char why[160];
        if (fnp_schedule_parse(fnp_config.schedule, &schedule, why, sizeof(why)) == 0) {
            have_schedule = 1;
            schedule_none = fnp_schedule_action(&schedule, 0) == FNP_STEP_NONE;
        } else {
            fnp_log("PROF_SCHEDULE=%s: %s; recording every step", fnp_config.schedule, why);
        }
    }
}

static int dump_locked(const char *path, uint64_t cycle, int quiet, int reset)
{
    struct fnp_baseline next = {0};
    struct fnp_dump_opts o = {.quiet = quiet,
                              .cycle = cycle,
                              .since = have_base ? &base : NULL,
                              .next = reset ? &next : NULL};
    int rc = fnp_dump(path, &o);
    if (reset && o.next_taken) {
        fnp_baseline_free(&base);
        base = next;
        have_base = 1;
    } else {
        fnp_baseline_free(&next);
    }
    return rc;
}

/* *into becomes what every thread recorded so far; 0 or -ENOMEM (*into unchanged). */
static int baseline_locked(struct fnp_baseline *into, int *have)
{
    struct fnp_baseline next = {0};
    struct fnp_snapshot s;
    int rc = fnp_snapshot_take(&s, fnp_clock_now(), NULL, &next);
    if (rc == 0) {
        fnp_baseline_free(into);
        *into = next;
        *have = 1;
    } else {
        fnp_baseline_free(&next);
    }
    fnp_snapshot_free(&s);
    return rc;
}

static void reset_locked(void)
{
    if (baseline_locked(&base, &have_base))
        fnp_log("out of memory: fnprof_reset did not clear the profile");
}

/* A cycle's file: %n in PROF_OUTPUT, else ".cycle<n>" appended (env.c). */
static int cycle_dump_locked(uint64_t cycle, int reset)
{
    char *path = fnp_env_path(fnp_config.output, cycle);
    if (!path) {
        fnp_log("out of memory; cycle %llu not written", (unsigned long long)cycle);
        return -ENOMEM;
    }
    int rc = dump_locked(path, cycle, fnp_config.quiet, reset);
    if (rc == 0)
        cycles_written++;
    free(path);
    return rc;
}

/* The program's threads call these; a thread cancelled inside one (a dump writes, a
 * cancellation point) would leave the lock held and every later dump, and the exit's,
 * waiting for ever: cancellation waits until the lock is released. What is allocated
 * under the lock (snapshots, baselines, file names) is fnprof's, not the program's. */
static int lock_control(void)
{
    int cancel;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
    pthread_mutex_lock(&lock);
    fnp_mem_hold();
    return cancel;
}

static void unlock_control(int cancel)
{
    fnp_mem_release();
    pthread_mutex_unlock(&lock);
    pthread_setcancelstate(cancel, NULL);
    if (cancel == PTHREAD_CANCEL_ENABLE)
        pthread_testcancel(); /* a cancel that came meanwhile acts now, the lock released */
}

void fnp_control_pause(int paused)
{
    if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE))
        return;
    int cancel = lock_control();
    user_paused = paused;
    apply();
    unlock_control(cancel);
    fnp_dumpsig_notify();
}

/* Reads the user pause, then sets the other state through fnp_control_pause, the path
 * fnprof_pause and fnprof_resume take (and whatever pausing does besides the mode bits). A
 * program's own fnprof_pause between the two is not lost: it is the state flipped, or the
 * state set after; either way one user pause, as the program's calls alone would leave. */
int fnp_control_toggle(void)
{
    int cancel = lock_control();
    int paused = !user_paused;
    unlock_control(cancel);
    fnp_control_pause(paused);
    return paused;
}

char fnp_control_state(void)
{
    int cancel = lock_control();
    char c = ended           ? FNP_LIVE_ENDED
             : user_paused   ? FNP_LIVE_PAUSED
             : schedule_none ? FNP_LIVE_SCHEDULED
                             : FNP_LIVE_RECORDING;
    unlock_control(cancel);
    return c;
}

void fnp_control_mark(void)
{
    int cancel = lock_control();
    if (__atomic_load_n(&fnp_recording, __ATOMIC_RELAXED) && baseline_locked(&window, &have_window))
        fnp_log("out of memory: fnprof record's window did not start");
    unlock_control(cancel);
}

int fnp_control_window(const char *path, int quiet)
{
    int cancel = lock_control();
    struct fnp_dump_opts o = {.quiet = quiet, .since = have_window ? &window : NULL};
    int rc = fnp_dump(path, &o);
    unlock_control(cancel);
    return rc;
}

void fnp_control_step(void)
{
    if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE)) {
        __atomic_fetch_add(&step, 1, __ATOMIC_RELAXED);
        return;
    }
    int cancel = lock_control();
    if (!__atomic_load_n(&fnp_recording, __ATOMIC_RELAXED) || !have_schedule) {
        step++;
        unlock_control(cancel);
        return;
    }
    enum fnp_step_action was = fnp_schedule_action(&schedule, step);
    enum fnp_step_action now = fnp_schedule_action(&schedule, step + 1);
    if (was == FNP_STEP_RECORD_AND_SAVE)
        cycle_dump_locked(fnp_schedule_cycle(&schedule, step), 1);
    step++;
    /* Recording starts afresh where a cycle's warmup or its active steps begin: what came
     * before (the warmup, or calls of NONE steps still open) is not the cycle's. A saved
     * cycle's dump took its baseline already. */
    if ((now == FNP_STEP_WARMUP && was != FNP_STEP_WARMUP) ||
        ((now == FNP_STEP_RECORD || now == FNP_STEP_RECORD_AND_SAVE) && was != FNP_STEP_RECORD &&
         was != FNP_STEP_RECORD_AND_SAVE))
        reset_locked();
    schedule_none = now == FNP_STEP_NONE;
    apply();
    unlock_control(cancel);
    fnp_dumpsig_notify();
}

void fnp_control_reset(void)
{
    if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE))
        return;
    int cancel = lock_control();
    if (__atomic_load_n(&fnp_recording, __ATOMIC_RELAXED))
        reset_locked();
    unlock_control(cancel);
}

int fnp_control_dump(const char *path, int quiet)
{
    if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE))
        return -ENODATA; /* nothing was ever recorded */
    int cancel = lock_control();
    int rc = dump_locked(path, 0, quiet, 0);
    if (fnp_ring)
        fnp_trace_dump(quiet); /* the flight recording too (PROF_TRACE_LAST) */
    unlock_control(cancel);
    return rc;
}

void fnp_control_exit(void)
{
    int cancel = lock_control();
    if (!__atomic_exchange_n(&fnp_recording, 0, __ATOMIC_ACQ_REL)) {
        unlock_control(cancel);
        return;
    }
    ended = 1;
    if (have_schedule) {
        enum fnp_step_action a = fnp_schedule_action(&schedule, step);
        if (a == FNP_STEP_RECORD || a == FNP_STEP_RECORD_AND_SAVE)
            cycle_dump_locked(fnp_schedule_cycle(&schedule, step), 0);
        else if (cycles_written == 0)
            fnp_log("PROF_SCHEDULE: the program ended at step %llu (%s) before any active "
                    "step: no profile written",
                    (unsigned long long)step, fnp_step_action_name(a));
    } else {
        char *path = fnp_env_path(fnp_config.output, 0);
        if (path)
            dump_locked(path, 0, fnp_config.quiet, 0);
        else
            fnp_log("out of memory; profile not written");
        free(path);
    }
    fnp_trace_finish();
    unlock_control(cancel);
    fnp_dumpsig_notify();
}

uint64_t fnp_control_steps(void)
{
    return step;
}

/* fork: the lock must not be held by a thread that does not exist in the child. */
static void before_fork(void)
{
    pthread_mutex_lock(&lock);
}

static void after_fork(void)
{
    pthread_mutex_unlock(&lock);
}

static void after_fork_child(void)
{
    /* The parent's baseline names the parent's nodes: the child's tree is new. */
    fnp_baseline_free(&base);
    have_base = 0;
    fnp_baseline_free(&window);
    have_window = 0;
    pthread_mutex_unlock(&lock);
}

void fnp_control_atfork(void)
{
    pthread_atfork(before_fork, after_fork, after_fork_child);
}
