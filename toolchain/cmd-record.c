/* SPDX-License-Identifier: MIT */
/*
 * fnprof record --pid PID --seconds N -o OUT: a profile of a running process over a
 * window of N seconds, made with signals alone (never ptrace: nothing of the process is
 * read or written but what /proc shows its owner and fnprof's own files). The process
 * must have started armed: fnprof loaded, PROF_OUTPUT, PROF_TOGGLE_SIGNAL and
 * PROF_DUMP_SIGNAL in its environment (docs/production.md).
 *
 * The steps, each a request sigqueue'd on one of the two signals and answered in the name
 * of the runtime's signal thread (profile.h, "fnprof record's requests"):
 *   1. mark: the window starts; what was recorded before is left out of its profile;
 *   2. if recording is paused by the user (PROF_START=paused, the toggle signal,
 *      fnprof_pause), a toggle resumes it;
 *   3. N seconds, or until SIGINT, SIGTERM or SIGHUP, which end the window early;
 *   4. the toggle again, if step 2 sent it: the process is left as it was found;
 *   5. window: the runtime writes what came since the mark beside its profile
 *      (PROF_OUTPUT's file + ".window"); it is copied to OUT and removed.
 * Why the runtime cuts the window and not this command (from two dumps, one subtracted
 * from the other): only the runtime knows which calling contexts are the same ones across
 * dumps (a profile names a thread by its place among those that had calls, which changes
 * from one dump to the next) and which calls were open at the mark. Its window is the rule
 * of fnprof_reset: open calls count as calls from the mark. A mark leaves the program's
 * own resets, cycles and dumps as they were, and a second record of the same process gets
 * its own window.
 *
 * Exit status: 0 OUT written; 1 the window could not be recorded (the process ended or
 * did not answer, it recorded nothing, OUT not written); 2 usage; 3 this process cannot
 * be recorded (not running, not ours to signal, fnprof not loaded, not armed).
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

#define CMD "record"
#define EXIT_CANNOT 3
/* How long a request may take: a window's dump names every function (DWARF) in the
 * process, which takes seconds in a large program the first time. */
#define ANSWER_SECONDS 120.0

static void usage(FILE *out)
{
    fprintf(out, "usage: fnprof record --pid PID [--seconds N] -o OUT [--quiet]\n"
                 "\n"
                 "Records a running process for N seconds and writes the profile of that\n"
                 "window alone to OUT. The process must have started armed, for example\n"
                 "  PROF_OUTPUT=/var/tmp/app.prof PROF_START=paused PROF_TOGGLE_SIGNAL=USR1 \\\n"
                 "  PROF_DUMP_SIGNAL=USR2 ./app\n"
                 "(docs/production.md). Only signals reach it; it is left paused or recording\n"
                 "as it was found. Ctrl-C (SIGINT, SIGTERM, SIGHUP) ends the window early; the\n"
                 "window is still written.\n"
                 "\n"
                 "Options:\n"
                 "  -p, --pid PID      the process to record\n"
                 "  -s, --seconds N    the window's length (default 10; fractions allowed)\n"
                 "  -o, --output OUT   the profile to write\n"
                 "  -q, --quiet        no \"fnprof: record: wrote\" line\n"
                 "  -h, --help         show this help\n"
                 "\n"
                 "Exit status: 0 written, 1 the window could not be recorded, 2 usage,\n"
                 "3 the process cannot be recorded (not running, not yours, fnprof not\n"
                 "loaded or not armed).\n");
}

struct rec {
    struct fnp_target t;
    int pidfd;      /* -1: signals by pid (a kernel without pidfd_open) */
    unsigned token; /* of the last request sent */
    sigset_t ending;
    int ended_early;
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int alive(const struct rec *r)
{
    if (r->pidfd >= 0) {
        /* readable once the process has ended, a zombie included */
        struct pollfd p = {.fd = r->pidfd, .events = POLLIN};
        return poll(&p, 1, 0) == 0;
    }
    return fnp_target_alive(r->t.pid);
}

/* Takes a signal of r->ending that came, without waiting; 1 if one did. */
static int take_ending(struct rec *r, double wait)
{
    struct timespec ts = {(time_t)wait, (long)((wait - floor(wait)) * 1e9)};
    if (sigtimedwait(&r->ending, NULL, &ts) > 0) {
        r->ended_early = 1;
        return 1;
    }
    return 0;
}

static int send_request(struct rec *r, int sig, unsigned op)
{
    r->token = r->token % FNP_LIVE_TOKEN_MASK + 1; /* never 0, which the runtime starts at */
    union sigval v = {.sival_int = (int)(FNP_LIVE_MAGIC | op << FNP_LIVE_OP_SHIFT | r->token)};
#ifdef SYS_pidfd_send_signal
    if (r->pidfd >= 0) {
        /* Through the pidfd: a pid reused by another process is never signalled. */
        siginfo_t info;
        memset(&info, 0, sizeof(info));
        info.si_signo = sig;
        info.si_code = SI_QUEUE;
        info.si_pid = getpid();
        info.si_uid = getuid();
        info.si_value = v;
        return syscall(SYS_pidfd_send_signal, r->pidfd, sig, &info, 0) == 0 ? 0 : -errno;
    }
#endif
    return sigqueue(r->t.pid, sig, v) == 0 ? 0 : -errno;
}

/* Sends a request and waits for its answer; the state after it into *state. 0, or -1 with
 * the reason said. A signal ending the window meanwhile is kept for the window's wait. */
static int request(struct rec *r, int sig, unsigned op, const char *what, char *state)
{
    int rc = send_request(r, sig, op);
    if (rc) {
        fnp_cli_error(CMD, "%d: cannot send the %s request: %s", r->t.pid, what, strerror(-rc));
        return -1;
    }
    double until = now() + ANSWER_SECONDS;
    for (;;) {
        unsigned token;
        rc = fnp_target_state(r->t.pid, state, &token);
        if (rc == 0 && token == r->token)
            return 0;
        if (!alive(r) || rc == -ESRCH) {
            fnp_cli_error(CMD, "%d ended before it answered the %s request", r->t.pid, what);
            return -1;
        }
        if (rc == -ENOENT) {
            fnp_cli_error(CMD,
                          "%d: its fnprof signal thread is gone (it started another "
                          "program, or is exiting)",
                          r->t.pid);
            return -1;
        }
        if (now() > until) {
            fnp_cli_error(CMD, "%d did not answer the %s request within %.0f s (is it stopped?)",
                          r->t.pid, what, ANSWER_SECONDS);
            return -1;
        }
        struct timespec tick = {0, 5 * 1000 * 1000};
        nanosleep(&tick, NULL);
    }
}

/* The window itself: seconds, or less (a signal of r->ending, or the process's end).
 * Returns 0, or -1 when the process ended. */
static int window(struct rec *r, double seconds, double *took)
{
    double start = now(), until = start + seconds;
    while (!r->ended_early) {
        double left = until - now();
        if (left <= 0)
            break;
        take_ending(r, left < 0.05 ? left : 0.05);
        if (!alive(r)) {
            *took = now() - start;
            return -1;
        }
    }
    *took = now() - start;
    return 0;
}

/* Calls in the profile, its synthetic root left out. */
static unsigned long long calls_of(const struct fnp_profile *p)
{
    unsigned long long n = 0;
    for (size_t i = 0; i < p->nfuncs; i++)
        if (!fnp_key_is_process(&p->funcs[i].key))
            n += p->funcs[i].st.ncalls;
    return n;
}

/* Steps 4 and 5's end: the window's file (the one of paths that changed since before)
 * copied to out and removed. Exit status. */
static int take_window(struct rec *r, char **paths, size_t npaths, const struct stat *before,
                       const char *out, double took, int quiet)
{
    const char *got = NULL;
    for (size_t i = 0; i < npaths && !got; i++) {
        struct stat st;
        if (stat(paths[i], &st) == 0 &&
            (before[i].st_ino != st.st_ino || before[i].st_dev != st.st_dev))
            got = paths[i];
    }
    if (!got) {
        fnp_cli_error(CMD,
                      "%d wrote no profile of the window to %s (no instrumented call ran "
                      "while it recorded, or it could not write there: its stderr says which)",
                      r->t.pid, paths[0]);
        return FNP_EXIT_FAILURE;
    }
    char *data = NULL;
    size_t len = 0;
    if (fnp_cli_read_file(CMD, got, &data, &len, NULL))
        return FNP_EXIT_FAILURE;
    struct fnp_profile p;
    fnp_profile_init(&p);
    char why[512];
    int rc = fnp_pstats_read(&p, data, len, why, sizeof(why));
    if (rc) {
        fnp_cli_error(CMD, "%s: not a valid profile: %s", got, rc == -EINVAL ? why : strerror(-rc));
        fnp_profile_free(&p);
        free(data);
        return FNP_EXIT_FAILURE;
    }
    rc = fnp_cli_write_file(out, data, len);
    free(data);
    if (rc) {
        fnp_cli_error(CMD, "%s: %s (the window stays in %s)", out, fnp_write_file_strerror(rc),
                      got);
        fnp_profile_free(&p);
        return FNP_EXIT_FAILURE;
    }
    if (unlink(got) != 0)
        fnp_cli_error(CMD, "%s: cannot remove: %s", got, strerror(errno));
    if (!quiet)
        fnp_cli_error(CMD, "wrote %s: %d's window of %.1f s%s (%zu functions, %llu calls)", out,
                      r->t.pid, took, r->ended_early ? ", ended early" : "", p.nfuncs,
                      calls_of(&p));
    fnp_profile_free(&p);
    return FNP_EXIT_OK;
}

static int record(struct rec *r, double seconds, const char *out, int quiet)
{
    char why[1024];
    char *paths[2];
    size_t npaths = 0;
    if (fnp_target_window_paths(&r->t, paths, &npaths, why, sizeof(why))) {
        fnp_cli_error(CMD, "%s", why);
        return FNP_EXIT_FAILURE;
    }
    char state = 0;
    unsigned shown = 0;
    fnp_target_state(r->t.pid, &state, &shown);
    r->token = (unsigned)(getpid() ^ (int)time(NULL) * 2654435761u) & FNP_LIVE_TOKEN_MASK;
    if (r->token == shown)
        r->token++;
    int status = FNP_EXIT_FAILURE, toggled = 0;
    double took = 0;
    if (request(r, r->t.dump_sig, FNP_LIVE_MARK, "mark", &state))
        goto out;
    if (state == FNP_LIVE_PAUSED) {
        if (request(r, r->t.toggle_sig, FNP_LIVE_TOGGLE, "toggle", &state))
            goto out;
        toggled = 1;
    }
    if (window(r, seconds, &took)) {
        fnp_cli_error(CMD,
                      "%d ended during the window, after %.1f s: nothing written (its own "
                      "profile at exit holds every call)",
                      r->t.pid, took);
        goto out;
    }
    if (toggled) {
        toggled = 0;
        if (request(r, r->t.toggle_sig, FNP_LIVE_TOGGLE, "toggle", &state))
            goto out;
    }
    struct stat before[2];
    for (size_t i = 0; i < npaths; i++)
        if (stat(paths[i], &before[i]) != 0)
            memset(&before[i], 0, sizeof(before[i]));
    if (request(r, r->t.dump_sig, FNP_LIVE_WINDOW, "window", &state))
        goto out;
    status = take_window(r, paths, npaths, before, out, took, quiet);
out:
    /* Never leave the process recording because of us. */
    if (toggled && alive(r))
        request(r, r->t.toggle_sig, FNP_LIVE_TOGGLE, "toggle", &state);
    while (npaths)
        free(paths[--npaths]);
    return status;
}

static int parse_pid(const char *s, int *pid)
{
    long v = fnp_decimal31(s);
    if (v <= 0)
        return -1;
    *pid = (int)v;
    return 0;
}

int fnp_cmd_record(int argc, char **argv)
{
    static const struct option opts[] = {
        {"pid", required_argument, NULL, 'p'},    {"seconds", required_argument, NULL, 's'},
        {"output", required_argument, NULL, 'o'}, {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0},
    };
    const char *out = NULL;
    int pid = 0, quiet = 0, c;
    double seconds = 10;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":p:s:o:qh", opts, NULL)) != -1) {
        switch (c) {
        case 'p':
            if (parse_pid(optarg, &pid))
                return fnp_cli_usage_error(CMD, "--pid %s: not a process id", optarg);
            break;
        case 's': {
            char *end;
            errno = 0;
            seconds = strtod(optarg, &end);
            if (errno || *end || end == optarg || !(seconds > 0) || seconds > 1e7)
                return fnp_cli_usage_error(CMD, "--seconds %s: not a positive number of seconds",
                                           optarg);
            break;
        }
        case 'o':
            out = optarg;
            break;
        case 'q':
            quiet = 1;
            break;
        case 'h':
            usage(stdout);
            return FNP_EXIT_OK;
        default: /* ':' or '?' */
            return fnp_cli_option_error(CMD, c, argv);
        }
    }
    if (optind != argc)
        return fnp_cli_usage_error(CMD, "unexpected argument '%s'", argv[optind]);
    if (!pid)
        return fnp_cli_usage_error(CMD, "no --pid");
    if (!out)
        return fnp_cli_usage_error(CMD, "no -o OUT");

    struct rec r = {.pidfd = -1};
    char why[1024];
    if (fnp_target_open(&r.t, pid, why, sizeof(why))) {
        fnp_cli_error(CMD, "%s", why);
        fnp_target_free(&r.t);
        return EXIT_CANNOT;
    }
    /* The signals that end the window are taken by sigtimedwait, never by a handler: the
     * steps after the window (the toggle back above all) still run. */
    sigemptyset(&r.ending);
    sigaddset(&r.ending, SIGINT);
    sigaddset(&r.ending, SIGTERM);
    sigaddset(&r.ending, SIGHUP);
    sigset_t old;
    sigprocmask(SIG_BLOCK, &r.ending, &old);
#ifdef SYS_pidfd_open
    r.pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
#endif
    int status = record(&r, seconds, out, quiet);
    if (r.pidfd >= 0)
        close(r.pidfd);
    fnp_target_free(&r.t);
    /* One that came after the window is taken too: the window was written, as asked. */
    while (take_ending(&r, 0))
        ;
    sigprocmask(SIG_SETMASK, &old, NULL);
    return status;
}
