/* SPDX-License-Identifier: MIT */
/*
 * PROF_DUMP_SIGNAL: a long-running program writes its profile so far when sent a signal,
 * and goes on. A handler may do almost nothing safely, so ours posts a semaphore; a
 * thread of fnprof's own, waiting on it with every signal masked (it never runs the
 * program's handlers), wakes and dumps under the control lock as fnprof_dump does. The
 * program's threads are not stopped: what they record meanwhile lands in this dump or the
 * next, and the file is written whole or not at all.
 *
 * Why a semaphore: the wake-up must hold no fd. A pipe or an eventfd is an fd of the
 * program's process: made at load, it takes the program's first free numbers (its next
 * open gets 5, not 3), and a daemon that closes every fd (closefrom, close_range) and
 * opens its own files or pipes gets those numbers back, so the handler's byte lands in the
 * program's pipe and the dump thread, its end closed, stops for good. sigwaitinfo would
 * need the signal blocked in every thread of the program, which changes its masks.
 * sem_post is async-signal-safe (POSIX), and the semaphore is a word of fnprof's memory:
 * nothing the program can close. No hook touches any of this.
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime.h"

static int dump_sig;
static sem_t wake; /* posted by the handler, waited on by the dump thread */
static int started;

/* The signal PROF_DUMP_SIGNAL names: USR2, SIGUSR2, RTMIN+3, RTMAX-1 or a number; 0 if
 * none, or one that cannot serve (uncatchable, or a fault the program must see). */
static int parse_signal(const char *s)
{
    if (strncmp(s, "SIG", 3) == 0)
        s += 3;
    char *end;
    int sig = 0;
    if (*s >= '0' && *s <= '9') {
        long v = strtol(s, &end, 10);
        sig = *end || v <= 0 || v >= NSIG ? 0 : (int)v;
    } else if (strncmp(s, "RTMIN", 5) == 0 || strncmp(s, "RTMAX", 5) == 0) {
        long off = s[5] ? strtol(s + 5, &end, 10) : 0;
        if (s[5] && *end)
            return 0;
        sig = s[3] == 'I' ? SIGRTMIN + (int)off : SIGRTMAX + (int)off;
        if (sig < SIGRTMIN || sig > SIGRTMAX)
            return 0;
    } else {
        for (int i = 1; i < NSIG && !sig; i++) {
            const char *name = sigabbrev_np(i);
            if (name && strcmp(name, s) == 0)
                sig = i;
        }
    }
    if (sig == SIGKILL || sig == SIGSTOP || sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE ||
        sig == SIGILL || sig == SIGTRAP || sig == SIGABRT || sig == SIGSYS)
        return 0;
    return sig;
}

static void on_dump_signal(int sig)
{
    (void)sig;
    int saved = errno;
    sem_post(&wake); /* EOVERFLOW: dumps are on their way already */
    errno = saved;
}

static void *dumper(void *arg)
{
    (void)arg;
    /* fnprof's own thread: its allocations are not the program's, and it has no thread
     * state of its own to attach to (runtime/memory.c). */
    fnp_mem_hold();
    for (;;) {
        if (sem_wait(&wake) != 0) {
            if (errno == EINTR)
                continue;
            return NULL;
        }
        while (sem_trywait(&wake) == 0)
            ; /* signals that came together make one dump */
        if (!__atomic_load_n(&fnp_recording, __ATOMIC_RELAXED))
            continue;
        char *path = fnp_env_output_path();
        if (path)
            fnp_control_dump(path, fnp_config.quiet);
        else
            fnp_log("out of memory; profile not written on signal");
        free(path);
    }
}

/* The semaphore and the thread; 0 or -1 (reported). */
static int start(void)
{
    if (sem_init(&wake, 0, 0) != 0) {
        fnp_log("PROF_DUMP_SIGNAL: cannot make a semaphore: %s", strerror(errno));
        return -1;
    }
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old); /* the thread starts with every signal masked */
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_t thread;
    int rc = pthread_create(&thread, &attr, dumper, NULL);
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc) {
        fnp_log("PROF_DUMP_SIGNAL: cannot start the dump thread: %s", strerror(rc));
        return -1;
    }
    pthread_setname_np(thread, "fnprof-dump");
    started = 1;
    return 0;
}

void fnp_dumpsig_init(void)
{
    dump_sig = parse_signal(fnp_config.dump_signal);
    if (!dump_sig) {
        fnp_log("PROF_DUMP_SIGNAL=%s: not a signal fnprof can dump on (a name such as USR2 "
                "or RTMIN+1, or a number; not KILL, STOP or a fault); ignored",
                fnp_config.dump_signal);
        return;
    }
    if (start())
        return;
    struct sigaction act;
    memset(&act, 0, sizeof(act));
    act.sa_handler = on_dump_signal;
    act.sa_flags = SA_RESTART;
    sigemptyset(&act.sa_mask);
    if (sigaction(dump_sig, &act, NULL) != 0)
        fnp_log("PROF_DUMP_SIGNAL: cannot install the handler: %s", strerror(errno));
}

void fnp_dumpsig_after_fork(void)
{
    if (!dump_sig || !started)
        return;
    /* The parent's thread is not in the child: the child gets its own, and a semaphore
     * made anew (the parent's may hold posts the child did not get). */
    started = 0;
    start();
}
