/* SPDX-License-Identifier: MIT */
/*
 * The signals sent from outside a running program: PROF_DUMP_SIGNAL writes the profile so
 * far and the program goes on; PROF_TOGGLE_SIGNAL pauses recording if it runs and resumes
 * it if paused; and fnprof record's requests, carried on those two (profile.h, "fnprof
 * record's requests"). A handler may do almost nothing safely, so ours count what came
 * and post a semaphore; a thread of fnprof's own, waiting on it with every signal masked
 * (it never runs the program's handlers), wakes and does the work under the control lock
 * as fnprof_dump and fnprof_pause do. The program's threads are not stopped: what they
 * record meanwhile lands in this dump or the next, and the file is written whole or not
 * at all.
 *
 * Why a semaphore: the wake-up must hold no fd. A pipe or an eventfd is an fd of the
 * program's process: made at load, it takes the program's first free numbers (its next
 * open gets 5, not 3), and a daemon that closes every fd (closefrom, close_range) and
 * opens its own files or pipes gets those numbers back, so the handler's byte lands in the
 * program's pipe and the dump thread, its end closed, stops for good. sigwaitinfo would
 * need the signal blocked in every thread of the program, which changes its masks.
 * sem_post is async-signal-safe (POSIX), and the semaphore is a word of fnprof's memory:
 * nothing the program can close. No hook touches any of this.
 *
 * The thread answers fnprof record the same way, with nothing the program can close: its
 * own name, which it sets (prctl, no fd) after each batch of work to the state of
 * recording and the token of the last request done (profile.h); a change of state by the
 * program (fnprof_pause, a step, the exit) wakes it too, for a batch of nothing. Anyone
 * may read the name in /proc/PID/task/TID/comm; it tells no more than `ps -L` does.
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime.h"

static int dump_sig, toggle_sig;
static sem_t wake; /* posted by the handler, waited on by the worker thread */
static int started;

/* What came since the worker last looked: added by the handler, taken (exchanged with 0)
 * by the worker. token: that of fnprof record's latest request, stored after its count
 * (release), so that a worker that reads it (acquire) sees the request counted too. */
static unsigned dumps, toggles, marks, windows;
static unsigned token;

static void on_signal(int sig, siginfo_t *info, void *uctx)
{
    (void)uctx;
    int saved = errno;
    unsigned v = info && info->si_code == SI_QUEUE ? (unsigned)info->si_value.sival_int : 0;
    unsigned op = (v & FNP_LIVE_MAGIC_MASK) == FNP_LIVE_MAGIC ? (v >> FNP_LIVE_OP_SHIFT) & 0xf : 0;
    unsigned *count = sig == toggle_sig       ? &toggles
                      : op == FNP_LIVE_MARK   ? &marks
                      : op == FNP_LIVE_WINDOW ? &windows
                                              : &dumps;
    __atomic_add_fetch(count, 1, __ATOMIC_RELAXED);
    if (op)
        __atomic_store_n(&token, v & FNP_LIVE_TOKEN_MASK, __ATOMIC_RELEASE);
    sem_post(&wake); /* EOVERFLOW: the worker is on its way already */
    errno = saved;
}

/* The worker's name: the state of recording and the last request done (profile.h). */
static void publish(unsigned done)
{
    char name[16];
    snprintf(name, sizeof(name), FNP_LIVE_THREAD "%c%05x", fnp_control_state(),
             done & FNP_LIVE_TOKEN_MASK);
    pthread_setname_np(pthread_self(), name);
}

/* fnprof record's window: the dump's path with FNP_LIVE_SUFFIX. */
static void write_window(void)
{
    char *path = fnp_env_output_path(), *window = NULL;
    if (path && asprintf(&window, "%s" FNP_LIVE_SUFFIX, path) < 0)
        window = NULL;
    if (window)
        fnp_control_window(window, fnp_config.quiet);
    else
        fnp_log("out of memory; fnprof record's window not written");
    free(window);
    free(path);
}

static void *worker(void *arg)
{
    (void)arg;
    /* fnprof's own thread: its allocations are not the program's, and it has no thread
     * state of its own to attach to (runtime/memory.c). */
    fnp_mem_hold();
    unsigned done = 0;
    publish(done);
    for (;;) {
        if (sem_wait(&wake) != 0) {
            if (errno == EINTR)
                continue;
            return NULL;
        }
        while (sem_trywait(&wake) == 0)
            ; /* signals that came together make one batch */
        unsigned asked = __atomic_load_n(&token, __ATOMIC_ACQUIRE);
        unsigned t = __atomic_exchange_n(&toggles, 0, __ATOMIC_RELAXED);
        unsigned m = __atomic_exchange_n(&marks, 0, __ATOMIC_RELAXED);
        unsigned w = __atomic_exchange_n(&windows, 0, __ATOMIC_RELAXED);
        unsigned d = __atomic_exchange_n(&dumps, 0, __ATOMIC_RELAXED);
        if (__atomic_load_n(&fnp_recording, __ATOMIC_RELAXED)) {
            /* Toggles first: "pause, then dump" sent together dumps after the pause. Two
             * toggles taken together cancel, as two flips do. */
            if (t & 1)
                fnp_control_toggle();
            if (m)
                fnp_control_mark();
            if (w)
                write_window();
            if (d) {
                char *path = fnp_env_output_path();
                if (path)
                    fnp_control_dump(path, fnp_config.quiet);
                else
                    fnp_log("out of memory; profile not written on signal");
                free(path);
            }
        }
        done = asked;
        publish(done);
    }
}

/* The variable a failure to start is reported under. */
static const char *asked_by(void)
{
    return dump_sig ? "PROF_DUMP_SIGNAL" : "PROF_TOGGLE_SIGNAL";
}

/* The semaphore and the thread; 0 or -1 (reported). */
static int start(void)
{
    if (sem_init(&wake, 0, 0) != 0) {
        fnp_log("%s: cannot make a semaphore: %s", asked_by(), strerror(errno));
        return -1;
    }
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old); /* the thread starts with every signal masked */
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_t thread;
    int rc = pthread_create(&thread, &attr, worker, NULL);
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc) {
        fnp_log("%s: cannot start fnprof's signal thread: %s", asked_by(), strerror(rc));
        return -1;
    }
    __atomic_store_n(&started, 1, __ATOMIC_RELEASE);
    return 0;
}

/* The signal variable names, or 0 (unset, or refused with one line). */
static int signal_of(const char *var, const char *value)
{
    if (!value || !*value)
        return 0;
    int sig = fnp_signal_parse(value);
    if (!sig)
        fnp_log("%s=%s: not a signal fnprof can use (a name such as USR2 or RTMIN+1, or a "
                "number; not KILL, STOP or a fault); ignored",
                var, value);
    return sig;
}

static void install(int sig, const char *var)
{
    struct sigaction act;
    memset(&act, 0, sizeof(act));
    act.sa_sigaction = on_signal;
    act.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&act.sa_mask);
    if (sigaction(sig, &act, NULL) != 0)
        fnp_log("%s: cannot install the handler: %s", var, strerror(errno));
}

void fnp_dumpsig_init(void)
{
    dump_sig = signal_of("PROF_DUMP_SIGNAL", fnp_config.dump_signal);
    toggle_sig = signal_of("PROF_TOGGLE_SIGNAL", fnp_config.toggle);
    if (toggle_sig && toggle_sig == dump_sig) {
        fnp_log("PROF_TOGGLE_SIGNAL=%s: the signal of PROF_DUMP_SIGNAL=%s; one signal cannot "
                "do both: the toggle is ignored",
                fnp_config.toggle, fnp_config.dump_signal);
        toggle_sig = 0;
    }
    if ((!dump_sig && !toggle_sig) || start())
        return;
    if (dump_sig)
        install(dump_sig, "PROF_DUMP_SIGNAL");
    if (toggle_sig)
        install(toggle_sig, "PROF_TOGGLE_SIGNAL");
}

void fnp_dumpsig_notify(void)
{
    if (__atomic_load_n(&started, __ATOMIC_ACQUIRE))
        sem_post(&wake); /* a batch of nothing: the name shows the state again */
}

void fnp_dumpsig_after_fork(void)
{
    if (!started)
        return;
    /* The parent's thread is not in the child: the child gets its own, and a semaphore
     * and counts made anew (the parent's may hold requests the child did not get). */
    __atomic_store_n(&started, 0, __ATOMIC_RELAXED);
    dumps = toggles = marks = windows = token = 0;
    start();
}
