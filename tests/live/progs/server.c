/* A server for fnprof record: it handles requests in batches (handle() calls work() twice)
 * forever, until the file argv[2] exists. fnprof record's requests arrive as signals
 * (PROF_TOGGLE_SIGNAL=USR1, PROF_DUMP_SIGNAL=USR2); the server keeps both blocked while a
 * batch runs and lets them in only between batches, then waits until fnprof's signal
 * thread shows the request done (its name changes, live_state.h). So every mark, toggle
 * and window falls between two batches, and the server knows exactly which calls came
 * while each name was shown: at each change it appends to the file argv[1] the line
 *   "<name before> <name after> handle <n> work <n>"
 * with the calls made since the last change. The calls a window holds are those made
 * while the name showed R between its mark and its window (run_live.py, case record).
 * The first line is "ready <pid>". With argv[3] ("fork"), a child forked at start serves,
 * and the parent waits for it. Prints "served <n>" at the end, the same with or without
 * fnprof. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "live_state.h"

static volatile long sum;
static unsigned long handled, worked;

__attribute__((noinline)) int work(int x)
{
    worked++;
    return x * 3 + 1;
}

__attribute__((noinline)) int handle(int x)
{
    handled++;
    return work(x) + work(x + 1);
}

static QUIET int stopped(const char *path)
{
    return access(path, F_OK) == 0;
}

/* Lets pending signals in (they run fnprof's handler on this thread), waits for fnprof's
 * thread to have done them, and logs the calls made under the name shown before. */
static QUIET int take_requests(FILE *log, const sigset_t *live)
{
    sigset_t pending, in;
    sigpending(&pending);
    sigemptyset(&in);
    for (int sig = SIGUSR1; sig <= SIGUSR2; sig++)
        if (sigismember(live, sig) && sigismember(&pending, sig))
            sigaddset(&in, sig);
    if (sigisemptyset(&in))
        return 0;
    char before[16], after[16];
    if (live_name(before))
        return -1;
    /* Only the signal pending: fnprof record sends its next request once this one is done,
     * and that one, on the other signal, must wait for the next pause between batches. */
    pthread_sigmask(SIG_UNBLOCK, &in, NULL);
    int rc = live_wait_name(before);
    pthread_sigmask(SIG_BLOCK, live, NULL);
    if (rc || live_name(after))
        return -1;
    fprintf(log, "%s %s handle %lu work %lu\n", before, after, handled, worked);
    fflush(log);
    handled = worked = 0;
    return 0;
}

void serve(FILE *log, const char *stop, const sigset_t *live)
{
    for (long batch = 0; !stopped(stop); batch++) {
        for (int i = 0; i < 200; i++)
            sum += handle(i);
        if (take_requests(log, live)) {
            printf("fnprof's signal thread did not answer\n");
            exit(3);
        }
        struct timespec ts = {0, 500000};
        nanosleep(&ts, NULL);
    }
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    sigset_t live;
    sigemptyset(&live);
    sigaddset(&live, SIGUSR1);
    sigaddset(&live, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &live, NULL);
    if (argc > 3) { /* "fork": a child serves, as in a server that forks its workers */
        pid_t child = fork();
        int status = 0;
        if (child < 0 || (child > 0 && waitpid(child, &status, 0) != child))
            return 5;
        if (child > 0)
            return WIFEXITED(status) ? WEXITSTATUS(status) : 6;
    }
    FILE *log = fopen(argv[1], "w");
    if (!log)
        return 4;
    fprintf(log, "ready %d\n", (int)getpid());
    fflush(log);
    serve(log, argv[2], &live);
    fclose(log);
    printf("served %ld\n", sum != 0 ? 1L : 0L);
    return 0;
}
/* SPDX-License-Identifier: MIT */
