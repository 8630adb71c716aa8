/* SPDX-License-Identifier: MIT */
/*
 * The signals PROF_DUMP_SIGNAL and PROF_TOGGLE_SIGNAL name, read by one parser: the
 * runtime installs its handlers on what it returns, and fnprof record sends what it
 * returns, so the two never disagree on what "USR1" or "RTMIN+2" is.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"

int fnp_signal_parse(const char *s)
{
    if (!s)
        return 0;
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
    /* Uncatchable, or a fault the program must see as itself. */
    if (sig == SIGKILL || sig == SIGSTOP || sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE ||
        sig == SIGILL || sig == SIGTRAP || sig == SIGABRT || sig == SIGSYS)
        return 0;
    return sig;
}
