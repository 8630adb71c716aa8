/*
 * A signal handler that forks while the program allocates: the fork may interrupt the
 * allocator's wrapper inside its table of live blocks, holding one of its locks. The
 * process must go on (no deadlock on its own lock), and the child too.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

static void on_alarm(int sig)
{
    (void)sig;
    pid_t pid = fork();
    if (pid == 0)
        _exit(0);
    if (pid > 0)
        waitpid(pid, NULL, 0);
}

static void churn(void)
{
    void *p[8];
    for (int i = 0; i < 8; i++)
        p[i] = malloc(40);
    for (int i = 0; i < 8; i++)
        free(p[i]);
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = {{0, 2000}, {0, 2000}};
    setitimer(ITIMER_REAL, &it, NULL);
    for (long k = 0; k < 300000; k++)
        churn();
    puts("ok");
    return 0;
}
/* SPDX-License-Identifier: MIT */
