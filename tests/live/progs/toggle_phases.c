/* PROF_TOGGLE_SIGNAL from the program itself, between phases whose calls are known. Each
 * phase_X() calls leaf_X() N_X times; between phases main sends itself the toggle signal
 * (argv[1], a number) and waits until fnprof's state shows the flip (live_state.h), or
 * calls fnprof_resume / fnprof_pause: one pause, which the toggle flips. Then a fork: the
 * child keeps the state, toggles with a thread of its own, and writes its own profile.
 * Run with PROF_START=paused. What each profile must hold (run_live.py, case toggle):
 *   parent: phase_b/leaf_b 2000, phase_d/leaf_d 4000, phase_g/leaf_g 7000,
 *           phase_k/leaf_k 1100; the other phases nothing;
 *   child:  phase_h/leaf_h 800, phase_j/leaf_j 1000.
 * argv[1] "0": no toggle is sent, no child forked (a refused signal variable): the phases
 * between fnprof_resume and fnprof_pause are recorded. Prints the sum of the leaves' results, the
 * same with or without fnprof. Exit 3 when a toggle is not seen within 30 s. */
#include <fnprof.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "live_state.h"

static volatile long sum;

#define PHASE(x, n)                                                                                \
    __attribute__((noinline)) int leaf_##x(int i)                                                  \
    {                                                                                              \
        return i * 3 + 1;                                                                          \
    }                                                                                              \
    __attribute__((noinline)) void phase_##x(void)                                                 \
    {                                                                                              \
        for (int i = 0; i < (n); i++)                                                              \
            sum += leaf_##x(i);                                                                    \
    }

PHASE(a, 1000)
PHASE(b, 2000)
PHASE(c, 3000)
PHASE(d, 4000)
PHASE(e, 5000)
PHASE(f, 6000)
PHASE(g, 7000)
PHASE(h, 800)
PHASE(i, 900)
PHASE(j, 1000)
PHASE(k, 1100)

static int sig;

/* After the program's own pause or resume: once fnprof shows it, the next toggle flips it. */
static QUIET void shown(char want)
{
    if (sig && live_wait_state(want)) {
        printf("the state does not show %c\n", want);
        exit(3);
    }
}

static QUIET void toggle(char want)
{
    if (!sig)
        return;
    char got = live_toggle(sig);
    if (got != want) {
        printf("toggle: state %c, wanted %c\n", got, want);
        exit(3);
    }
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    sig = atoi(argv[1]);
    phase_a(); /* paused at start */
    toggle('R');
    phase_b();
    toggle('P');
    phase_c();
    fnprof_resume(); /* the program's own resume: the state the toggle flips next */
    shown('R');
    phase_d();
    toggle('P');
    phase_e();
    toggle('R');
    fnprof_pause();
    shown('P');
    phase_f();
    toggle('R');
    phase_g();
    fflush(stdout);
    pid_t child = sig ? fork() : 1; /* no toggle: no child to see it */
    if (child == 0) {
        phase_h(); /* recording, as the parent was */
        toggle('P');
        phase_i();
        toggle('R');
        phase_j();
        exit(0);
    }
    int status = 0;
    if (sig && (child < 0 || waitpid(child, &status, 0) != child || status != 0))
        return 4;
    phase_k();
    printf("sum %ld\n", sum);
    return 0;
}
/* SPDX-License-Identifier: MIT */
