/* Ends by a signal, in the way argv[1] names, from inside nested instrumented calls:
 *   term, int   kill(getpid(), SIGTERM / SIGINT): dies by it
 *   alarm       alarm(1), then calls leaf() until SIGALRM arrives, in the middle of them
 *   segv        a null-pointer store (the kernel's SIGSEGV): dies by it, core as usual
 *   abort       abort(): dies by SIGABRT
 *   own         its own SIGTERM handler: it must run (fnprof's must not replace it), and
 *               before installing it the program must see SIG_DFL, as without fnprof
 *   ignored     SIGTERM, which the test ignores before exec: nothing happens
 * Expected (run_robust.py, case "signals"): exit status as without fnprof, and a profile
 * with main, work, 10 calls of leaf (at least 1000 for alarm), work's frame closed at the
 * signal. */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t handled;

static void on_term(int sig)
{
    (void)sig;
    handled = 1;
}

int leaf(int x)
{
    return x + 1;
}

int work(const char *how)
{
    volatile int s = 0;
    for (int i = 0; i < 10; i++)
        s += leaf(i);
    if (!strcmp(how, "term") || !strcmp(how, "own") || !strcmp(how, "ignored"))
        kill(getpid(), SIGTERM);
    else if (!strcmp(how, "int"))
        kill(getpid(), SIGINT);
    else if (!strcmp(how, "segv"))
        *(volatile int *)(uintptr_t)s = 0;
    else if (!strcmp(how, "abort"))
        abort();
    else if (!strcmp(how, "alarm")) {
        alarm(1);
        for (;;)
            s += leaf(s);
    }
    return s;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    printf("start %s\n", argv[1]);
    fflush(stdout);
    if (!strcmp(argv[1], "own")) {
        struct sigaction old, act = {.sa_handler = on_term};
        sigaction(SIGTERM, NULL, &old);
        printf("SIGTERM was %s\n", old.sa_handler == SIG_DFL ? "default" : "not default");
        sigemptyset(&act.sa_mask);
        sigaction(SIGTERM, &act, NULL);
    }
    work(argv[1]);
    printf("end, handled %d\n", (int)handled);
    return 0;
}
/* SPDX-License-Identifier: MIT */
