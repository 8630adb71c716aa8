/* SPDX-License-Identifier: MIT */
/*
 * PROF_DUMP_SIGNAL: a long-running program writes its profile so far when sent a signal,
 * and goes on. A handler may do almost nothing safely, so ours writes one byte to a pipe;
 * a thread of fnprof's own, blocked on the pipe's other end with every signal masked (it
 * never runs the program's handlers), wakes and dumps under the control lock as
 * fnprof_dump does. The program's threads are not stopped: what they record meanwhile
 * lands in this dump or the next, and the file is written whole or not at all.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime.h"

static int dump_sig;
static int pipe_fds[2] = {-1, -1};

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
    char b = 'd';
    ssize_t w = write(pipe_fds[1], &b, 1); /* a full pipe: a dump is on its way already */
    (void)w;
    errno = saved;
}

static void *dumper(void *arg)
{
    (void)arg;
    /* fnprof's own thread: its allocations are not the program's, and it has no thread
     * state of its own to attach to (runtime/memory.c). */
    fnp_mem_hold();
    int fd = pipe_fds[0];
    for (;;) {
        char buf[64];
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return NULL;
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

/* The pipe and the thread; 0 or -1 (reported). */
static int start(void)
{
    if (pipe2(pipe_fds, O_CLOEXEC) != 0 || fcntl(pipe_fds[1], F_SETFL, O_NONBLOCK) != 0) {
        fnp_log("PROF_DUMP_SIGNAL: cannot make a pipe: %s", strerror(errno));
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
    if (!dump_sig || pipe_fds[0] < 0)
        return;
    /* The parent's pipe would wake the parent's thread: the child gets its own. The
     * handler may run in between and write to the old one, which nobody reads here. */
    int old[2] = {pipe_fds[0], pipe_fds[1]};
    if (start() == 0) {
        close(old[0]);
        close(old[1]);
    }
}
