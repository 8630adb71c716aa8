/* fnprof_pause and fnprof_resume on one thread, in the way argv[1] names:
 *   around      main calls a() 3 times, pauses, 5 times, resumes, 2 times
 *   inside      main pauses and calls outer(), which calls mid(), which resumes: the calls
 *               mid() and outer() make after that are recorded, as calls of main
 *   recursion   rec(6) recurses to rec(0); rec(4) pauses, rec(2) resumes
 *   started     run with PROF_START=paused: main resumes after two calls of before()
 * Expected (run_robust.py, case "pause"): exactly the calls made while recording, each
 * under the nearest recorded call below it on the stack. */
#include <fnprof.h>
#include <stdio.h>
#include <string.h>

static volatile int sink;

int leaf(int x)
{
    sink += x;
    return x + 1;
}

int a(int x)
{
    return leaf(x) + leaf(x + 1);
}

int inner(int x)
{
    return leaf(x);
}

int mid(int x)
{
    int r = leaf(x); /* paused: not recorded */
    fnprof_resume();
    for (int i = 0; i < 3; i++)
        r += inner(i);
    return r;
}

int outer(int x)
{
    int r = leaf(x) + mid(x); /* leaf: paused; mid: entered paused */
    return r + inner(x);      /* after the resume: main -> inner */
}

int tail(int n)
{
    return n * 2;
}

/* Pauses on entering rec(4) and resumes in rec(2), so rec(3) and rec(2) are not recorded
 * but what they call after the resume is, under rec(4). */
int rec(int n)
{
    if (n == 4)
        fnprof_pause();
    int r = leaf(n);
    if (n == 2)
        fnprof_resume();
    if (n > 0)
        r += rec(n - 1);
    return r + tail(n);
}

int before(int x)
{
    return leaf(x);
}

int work(int x)
{
    return leaf(x) + leaf(x * 2);
}

int after(int x)
{
    return x - 1;
}

int main(int argc, char **argv)
{
    const char *how = argc > 1 ? argv[1] : "";
    int r = 0;
    if (!strcmp(how, "around")) {
        for (int i = 0; i < 3; i++)
            r += a(i);
        fnprof_pause();
        for (int i = 0; i < 5; i++)
            r += a(i);
        fnprof_resume();
        for (int i = 0; i < 2; i++)
            r += a(i);
    } else if (!strcmp(how, "inside")) {
        fnprof_pause();
        r += outer(7);
        r += after(r);
    } else if (!strcmp(how, "recursion")) {
        r += rec(6);
        r += after(r);
    } else if (!strcmp(how, "started")) {
        r += before(1) + before(2);
        fnprof_resume();
        for (int i = 0; i < 3; i++)
            r += work(i);
        r += after(r);
    } else {
        return 2;
    }
    printf("%s %d\n", how, r);
    return 0;
}
/* SPDX-License-Identifier: MIT */
