/* What a test program needs to see fnprof's live state from inside: the name of fnprof's
 * signal thread (profile/profile.h, "fnprof record's requests"), "fnprof-" then the state
 * letter (R recording, P paused by the user, N by the schedule, E ended) and the token of
 * the request done last. Read from /proc/self/task/TID/comm as fnprof record reads it.
 * Nothing here is instrumented: waiting adds no call to the profile. */
#ifndef LIVE_STATE_H
#define LIVE_STATE_H

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define QUIET __attribute__((no_instrument_function))

/* The thread's name into name (16 bytes); 0, or -1 when there is no such thread. */
static QUIET int live_name(char *name)
{
    DIR *d = opendir("/proc/self/task");
    int rc = -1;
    struct dirent *e;
    while (d && rc && (e = readdir(d))) {
        char path[300];
        snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
        int fd = open(path, O_RDONLY);
        if (fd < 0)
            continue;
        ssize_t n = read(fd, name, 15);
        close(fd);
        if (n <= 0)
            continue;
        name[n] = 0;
        if (name[n - 1] == '\n')
            name[n - 1] = 0;
        if (strncmp(name, "fnprof-", 7) == 0)
            rc = 0;
    }
    if (d)
        closedir(d);
    return rc;
}

/* The state letter, or '?' without the thread. */
static QUIET char live_state(void)
{
    char name[16];
    return live_name(name) == 0 ? name[7] : '?';
}

static QUIET void live_nap(void)
{
    struct timespec ts = {0, 200000};
    nanosleep(&ts, NULL);
}

/* Waits until the thread's name is another than old; 0, or -1 after 30 s. */
static QUIET int live_wait_name(const char *old)
{
    for (long i = 0; i < 30L * 5000; i++) {
        char name[16];
        if (live_name(name) == 0 && strcmp(name, old) != 0)
            return 0;
        live_nap();
    }
    return -1;
}

/* Waits until the state letter is want (the program's own fnprof_pause or fnprof_resume
 * shows there a moment later); 0, or -1 after 30 s. */
static QUIET int live_wait_state(char want)
{
    for (long i = 0; i < 30L * 5000; i++) {
        if (live_state() == want)
            return 0;
        live_nap();
    }
    return -1;
}

/* Waits until the state letter is another than not; 0, or -1 after 30 s. */
static QUIET int live_wait_other(char not )
{
    for (long i = 0; i < 30L * 5000; i++) {
        if (live_state() != not )
            return 0;
        live_nap();
    }
    return -1;
}

/* Sends the process sig and waits until the state letter is another than before; the new
 * letter, or '?' after 30 s. */
static QUIET char live_toggle(int sig)
{
    /* fnprof's thread names itself once it runs: until then it has the program's name */
    if (live_wait_other('?'))
        return '?';
    char before = live_state();
    kill(getpid(), sig);
    for (long i = 0; i < 30L * 5000; i++) {
        char now = live_state();
        if (now != before && now != '?')
            return now;
        live_nap();
    }
    return '?';
}

#endif
/* SPDX-License-Identifier: MIT */
