/* SPDX-License-Identifier: MIT */
/*
 * A program killed by a signal still leaves its profile, then dies by that same signal.
 *
 * Only signals whose action is the default one at load get a handler; a program's own
 * handlers are never replaced, and a program that installs one later simply replaces
 * ours. The handler cannot name functions (malloc, libdwarf and the loader's lock are off
 * limits in a signal handler), so it writes a raw snapshot with write(2) alone, then runs
 * `fnprof symbolize` on it in a new process (vfork + execve, both async-signal-safe) and
 * waits for it. Then the default action is restored and the signal raised again: the exit
 * status the shell sees is unchanged, and a core dump is still made where one would be.
 * Without the fnprof command, the raw snapshot stays, and one line says how to convert it.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime.h"

/* Ended by these, by default: terminations first, then the ones that dump core. */
#define SIG(name)                                                                                  \
    {                                                                                              \
        name, #name                                                                                \
    }
static const struct {
    int sig;
    const char *name; /* for messages */
} caught[] = {SIG(SIGHUP),  SIG(SIGINT),  SIG(SIGPIPE), SIG(SIGTERM), SIG(SIGALRM), SIG(SIGUSR1),
              SIG(SIGUSR2), SIG(SIGXCPU), SIG(SIGXFSZ), SIG(SIGQUIT), SIG(SIGILL),  SIG(SIGTRAP),
              SIG(SIGABRT), SIG(SIGBUS),  SIG(SIGFPE),  SIG(SIGSEGV), SIG(SIGSYS)};
#define NCAUGHT (sizeof(caught) / sizeof(caught[0]))

/* Filled outside any handler (at load and in a forked child): the handler formats nothing. */
static char out_path[PATH_MAX], raw_path[PATH_MAX + 8], tmp_path[PATH_MAX + 32];
static char tool_path[PATH_MAX];
static int handling_tid;
/* The other files of a run, for the line that says they are lost (filled as out_path). */
static char mem_path[PATH_MAX], trace_path[PATH_MAX];
/* The exit dump (fnp_signals_exit_begin, _end): the thread writing it, and the first
 * signal that came meanwhile, which the process dies by once the dump is written; -1 once
 * it is. */
static int exit_tid, exit_pending;
static int memory_on; /* PROF_MEMORY is being recorded (at load) */
static char altstack[64 * 1024];

extern char **environ;

/* The real sigaction and signal (interposed below), looked up at load. */
typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
typedef void (*handler_fn)(int);
typedef handler_fn (*signal_fn)(int, handler_fn);
static sigaction_fn real_sigaction;
static signal_fn real_signal;

static size_t cat(char *dst, size_t cap, size_t at, const char *s)
{
    while (*s && at + 1 < cap)
        dst[at++] = *s++;
    dst[at] = 0;
    return at;
}

static void say(const char *a, const char *b, const char *c, const char *d)
{
    char line[3 * PATH_MAX];
    size_t n = cat(line, sizeof(line) - 1, 0, "fnprof: ");
    n = cat(line, sizeof(line) - 1, n, a);
    n = cat(line, sizeof(line) - 1, n, b);
    n = cat(line, sizeof(line) - 1, n, c);
    n = cat(line, sizeof(line) - 1, n, d);
    line[n++] = '\n';
    int fd = fnp_log_fd(); /* the program's own file, if fd 2 is no longer stderr */
    ssize_t w = fd < 0 ? 0 : write(fd, line, n);
    (void)w;
}

/* The signal's name, for messages: "SIGTERM". */
static const char *signame(int sig)
{
    for (size_t i = 0; i < NCAUGHT; i++)
        if (caught[i].sig == sig)
            return caught[i].name;
    return "a signal";
}

/* Runs `fnprof symbolize --remove-raw -o OUT RAW` and waits; 0 when it wrote OUT. The
 * child gets the environment without LD_PRELOAD and PROF_*: it must not profile itself. */
static int symbolize_raw(void)
{
    if (!tool_path[0] || access(tool_path, X_OK) != 0)
        return -1;
    static char *envp[256];
    size_t n = 0;
    for (char **e = environ; e && *e && n + 1 < sizeof(envp) / sizeof(envp[0]); e++)
        if (strncmp(*e, "LD_PRELOAD=", 11) != 0 &&
            (strncmp(*e, "PROF_", 5) != 0 || strncmp(*e, "PROF_DEBUG_DIR=", 15) == 0))
            envp[n++] = *e;
    envp[n] = NULL;
    char *argv[10], **a = argv;
    *a++ = tool_path;
    *a++ = "symbolize";
    *a++ = "--remove-raw";
    if (fnp_config.quiet)
        *a++ = "--quiet";
    *a++ = "-o";
    *a++ = out_path;
    if (fnp_ring && trace_path[0]) { /* the flight recording's calls are in the snapshot */
        *a++ = "--trace";
        *a++ = trace_path;
    }
    *a++ = raw_path;
    *a = NULL;
    /* The command's messages go where fnprof's would, and nowhere else: fd 2 when it is
     * still the file it was at load, else /dev/null (fd 2 may be a file of the program's,
     * or closed, and the command's first open would take it). */
    int quiet_child = fnp_log_fd() < 0;
    /* A program that ignores SIGCHLD (SIG_IGN, or SA_NOCLDWAIT) has the kernel reap its
     * children: waitpid would fail with ECHILD, and the outcome be unknown. The default
     * action, which ignores the signal too but keeps the child to be waited for, stands in
     * while the command runs (the process is dying: no child of its own misses a reap). */
    struct sigaction chld, dfl = {.sa_handler = SIG_DFL};
    int restore = real_sigaction && real_sigaction(SIGCHLD, NULL, &chld) == 0 &&
                  (chld.sa_handler == SIG_IGN || (chld.sa_flags & SA_NOCLDWAIT));
    if (restore)
        real_sigaction(SIGCHLD, &dfl, NULL);
    pid_t pid = vfork();
    if (pid == 0) {
        if (quiet_child) {
            int null = open("/dev/null", O_WRONLY);
            if (null >= 0 && null != 2) {
                dup2(null, 2);
                close(null);
            }
        }
        execve(tool_path, argv, envp);
        _exit(127);
    }
    int status = 0, rc = pid < 0 ? -1 : 0;
    while (pid > 0 && waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            /* Reaped by another (a handler of the program's on another thread): the
             * command removes the raw snapshot only once the profile is written. */
            rc = access(raw_path, F_OK) != 0 && errno == ENOENT ? 1 : -1;
            break;
        }
    if (restore)
        real_sigaction(SIGCHLD, &chld, NULL);
    if (rc)
        return rc > 0 ? 0 : -1;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* Whether raw_path may be renamed over: nothing there, a regular file (an earlier
 * snapshot) or a symlink (the rename replaces the link, never what it points at). A FIFO
 * or a device there is left alone. */
static int raw_renamable(void)
{
    struct stat st;
    if (lstat(raw_path, &st) != 0)
        return errno == ENOENT;
    return S_ISREG(st.st_mode) || S_ISLNK(st.st_mode);
}

static void dump_raw(int sig)
{
    uint64_t now = fnp_clock_now();
    double tick_seconds = fnp_clock_tick_seconds();
    /* A write past RLIMIT_FSIZE fails with EFBIG, its SIGXFSZ taken back (the handler
     * runs with every signal blocked already; the guard restores that mask). */
    struct fnp_write_guard g;
    fnp_write_guard_begin(&g);
    /* A fresh name nobody could plant a symlink at (O_EXCL, random letters). */
    int fd = fnp_file_create_temp(AT_FDCWD, tmp_path);
    if (fd < 0) {
        fnp_write_guard_end(&g);
        say(signame(sig), ": cannot write the raw snapshot ", tmp_path, "");
        return;
    }
    int rc = fnp_raw_write(fd, now, tick_seconds);
    if (close(fd) != 0 && rc == 0)
        rc = -errno;
    fnp_write_guard_end(&g);
    if (rc != 0 || !raw_renamable() || rename(tmp_path, raw_path) != 0) {
        unlink(tmp_path);
        say(signame(sig), ": cannot write the raw snapshot ", raw_path, "");
        return;
    }
    if (symbolize_raw() != 0)
        say(signame(sig), ": raw snapshot in ", raw_path,
            fnp_ring ? "; `fnprof symbolize --trace FILE` on it makes the profile and the "
                       "flight recording"
                     : "; `fnprof symbolize` on it makes the profile");
}

/* A fault the kernel raised in the thread (not one sent by kill or raise): the thread
 * cannot go on, and the fault happens again when the handler returns. */
static int kernel_fault(int sig, const siginfo_t *info)
{
    return info && info->si_code > 0 &&
           (sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL);
}

/* Ends the process by sig, as its default action would have: restored, then raised again
 * in this thread (a kernel fault happens again by itself when the handler returns). */
static void die_by(int sig, const siginfo_t *info, int self)
{
    struct sigaction dfl = {.sa_handler = SIG_DFL};
    sigaction(sig, &dfl, NULL);
    if (kernel_fault(sig, info))
        return;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    syscall(SYS_tgkill, getpid(), self, sig);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}

/* What a death by signal leaves unwritten: the memory profile and the trace are made at
 * exit only (they need the symbolizer and the heap, which a handler may not use). */
static void say_lost(int sig)
{
    if (mem_path[0])
        say(signame(sig), ": PROF_MEMORY is written at exit only: ", mem_path, " not written");
    if (trace_path[0] && fnp_tracing && !fnp_streaming && !fnp_ring)
        say(signame(sig), ": PROF_TRACE is written at exit only: ", trace_path, " not written");
}

/* A signal during the exit dump; returns 1 when the handler is done with it (deferred). */
static int during_exit_dump(int sig, const siginfo_t *info, int self)
{
    int none = 0;
    if (!kernel_fault(sig, info) && __atomic_compare_exchange_n(&exit_pending, &none, sig, 0,
                                                                __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return 1; /* the dump goes on; the process dies by sig at its end */
    if (none < 0)
        return 0; /* the dump is written: the ordinary path ends the process */
    /* A fault (this thread cannot go on, and its core must show where it was), or a
     * second signal before the dump is written (whoever sends it insists): now. */
    say(signame(sig), " while the profiles were being written at exit: those not yet written ",
        "are lost", "");
    fnp_write_file_abandon(); /* the half-written one's temporary goes with them */
    die_by(sig, info, self);
    return 1;
}

static void on_signal(int sig, siginfo_t *info, void *uctx)
{
    (void)uctx;
    int saved = errno;
    int self = (int)syscall(SYS_gettid), none = 0;
    if (__atomic_load_n(&exit_tid, __ATOMIC_ACQUIRE) && during_exit_dump(sig, info, self)) {
        errno = saved;
        return;
    }
    if (!__atomic_compare_exchange_n(&handling_tid, &none, self, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE) &&
        none != self) {
        /* Another thread is writing the profile and will end the process: wait for it. */
        for (;;)
            pause();
    }
    struct sigaction dfl = {.sa_handler = SIG_DFL};
    sigaction(sig, &dfl, NULL);
    if (none == 0 && __atomic_exchange_n(&fnp_recording, 0, __ATOMIC_ACQ_REL)) {
        if (out_path[0])
            dump_raw(sig);
        fnp_stream_on_fatal(); /* the streamed trace: its writer thread ends it */
        say_lost(sig);
    }
    errno = saved;
    die_by(sig, info, self);
}

void fnp_signals_exit_begin(void)
{
    __atomic_store_n(&exit_tid, (int)syscall(SYS_gettid), __ATOMIC_RELEASE);
}

void fnp_signals_exit_end(void)
{
    int sig = __atomic_exchange_n(&exit_pending, -1, __ATOMIC_ACQ_REL);
    if (sig > 0)
        die_by(sig, NULL, (int)syscall(SYS_gettid));
}

void fnp_signals_after_fork(void)
{
    /* The parent's threads, one of which may have been handling a signal or writing the
     * exit dump, are not the child's. */
    __atomic_store_n(&handling_tid, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&exit_tid, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&exit_pending, 0, __ATOMIC_RELAXED);
}

/*
 * sigaction and signal, interposed so that the program sees what it would see without
 * fnprof: where our handler stands in for the default action, it reads SIG_DFL (a program
 * that installs its own handler only over SIG_DFL, as Python's does for SIGINT, behaves
 * the same). The real functions are looked up at load, before any handler can run.
 */

static int ours(const struct sigaction *act)
{
    return (act->sa_flags & SA_SIGINFO) && act->sa_sigaction == on_signal;
}

__attribute__((visibility("default"))) int sigaction(int sig, const struct sigaction *act,
                                                     struct sigaction *old)
{
    if (!real_sigaction)
        real_sigaction = (sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
    int rc = real_sigaction(sig, act, old);
    if (rc == 0 && old && ours(old)) {
        memset(old, 0, sizeof(*old));
        old->sa_handler = SIG_DFL;
    }
    return rc;
}

__attribute__((visibility("default"))) handler_fn signal(int sig, handler_fn handler)
{
    if (!real_signal)
        real_signal = (signal_fn)dlsym(RTLD_NEXT, "signal");
    handler_fn prev = real_signal(sig, handler);
    return prev == (handler_fn)(void (*)(void))on_signal ? SIG_DFL : prev;
}

/* dst gets fnp_env_path(pattern) when it fits, else "". */
static void fill(char *dst, size_t cap, const char *pattern)
{
    char *path = fnp_env_path(pattern, 0);
    dst[0] = 0;
    if (path && strlen(path) < cap)
        strcpy(dst, path);
    free(path);
}

void fnp_signals_paths(void)
{
    fill(mem_path, sizeof(mem_path), memory_on ? fnp_config.memory : NULL);
    fill(trace_path, sizeof(trace_path), fnp_config.output ? fnp_config.trace : NULL);
    char *path = fnp_env_output_path();
    out_path[0] = 0;
    if (!path || strlen(path) >= sizeof(out_path)) {
        free(path);
        return;
    }
    strcpy(out_path, path);
    free(path);
    snprintf(raw_path, sizeof(raw_path), "%s.raw", out_path);
    /* fnp_file_create_temp draws the X's when the handler runs. */
    snprintf(tmp_path, sizeof(tmp_path), "%s.raw.fnprof-XXXXXX", out_path);
}

void fnp_signals_init(const char *tool, int memory)
{
    real_sigaction = (sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
    real_signal = (signal_fn)dlsym(RTLD_NEXT, "signal");
    if (tool && strlen(tool) < sizeof(tool_path))
        strcpy(tool_path, tool);
    memory_on = memory;
    fnp_signals_paths();
    /* A memory profile alone: the handler only says that it is lost. */
    if (!out_path[0] && !mem_path[0])
        return;
    /* Stack overflow in deep recursion must not keep the handler from running. Only when
     * the program has no alternate stack of its own; it may set one later. */
    stack_t old;
    if (sigaltstack(NULL, &old) == 0 && (old.ss_flags & SS_DISABLE)) {
        stack_t ss = {.ss_sp = altstack, .ss_size = sizeof(altstack)};
        sigaltstack(&ss, NULL);
    }
    for (size_t i = 0; i < NCAUGHT; i++) {
        struct sigaction old_act, act;
        if (!real_sigaction || real_sigaction(caught[i].sig, NULL, &old_act) != 0 ||
            old_act.sa_handler != SIG_DFL || (old_act.sa_flags & SA_SIGINFO))
            continue;
        memset(&act, 0, sizeof(act));
        act.sa_sigaction = on_signal;
        act.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
        sigfillset(&act.sa_mask);
        real_sigaction(caught[i].sig, &act, NULL);
    }
}
