// Exceptions and longjmp across pauses and resumes: a call recorded, then a pause, then a
// throw (or longjmp) through frames entered while paused, caught where recording resumes;
// and the reverse, a call entered while paused in which recording resumes before the throw.
// docs/controls.md's rules give the counts (run_runtime.py: toggle):
//   rec_outer, rec_mid: ROUNDS each (entered while recording); paused_inner: 0;
//   resumed_inner: ROUNDS, hanging from the root (nothing recorded below it);
//   after_catch: 2 * ROUNDS, from rec_outer (ROUNDS) and from the root (ROUNDS: its caller
//   paused_outer was entered while paused).
// Each kind runs once with a C++ exception and once with longjmp.
#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "fnprof.h"
#include "rt_common.h"

static volatile long sink;
static std::jmp_buf env;

NOINLINE int paused_inner(int n, bool jump)
{
    if (jump)
        std::longjmp(env, 1);
    throw std::runtime_error("paused");
}

NOINLINE int rec_mid(int n, bool jump)
{
    fnprof_pause();
    int r = paused_inner(n, jump);
    KEEP(r);
    return r;
}

NOINLINE int after_catch(int n)
{
    int r = n + 1;
    KEEP(r);
    return r;
}

NOINLINE int rec_outer(int n, bool jump)
{
    int r = 0;
    if (jump) {
        if (setjmp(env) == 0)
            r = rec_mid(n, jump);
    } else {
        try {
            r = rec_mid(n, jump);
        } catch (const std::exception &) {
        }
    }
    fnprof_resume();
    r += after_catch(n);
    KEEP(r);
    return r;
}

NOINLINE int resumed_inner(int n, bool jump)
{
    if (jump)
        std::longjmp(env, 1);
    throw std::runtime_error("resumed");
}

NOINLINE int paused_mid(int n, bool jump)
{
    fnprof_resume();
    int r = resumed_inner(n, jump);
    KEEP(r);
    return r;
}

NOINLINE int paused_outer(int n, bool jump)
{
    int r = 0;
    if (jump) {
        if (setjmp(env) == 0)
            r = paused_mid(n, jump);
    } else {
        try {
            r = paused_mid(n, jump);
        } catch (const std::exception &) {
        }
    }
    r += after_catch(n);
    KEEP(r);
    return r;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? std::atoi(argv[1]) : 100;
    long s = 0;
    for (int i = 0; i < rounds; i++) {
        bool jump = i % 2;
        s += rec_outer(i, jump); // recording on entry, on again at the end
        fnprof_pause();
        s += paused_outer(i, jump); // paused on entry, recording from paused_mid on
    }
    sink += s;
    std::printf("%ld\n", (long)sink);
    return 0;
}
// SPDX-License-Identifier: MIT
