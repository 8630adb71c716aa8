/* qsort calling back into instrumented code: the comparisons nest under qsort. Each round
 * also leaves a sort by longjmp from inside the callback (the 5th comparison), and one
 * thread ends by pthread_exit from inside a callback. The program counts its comparisons
 * and prints them: the test expects exactly those under qsort, the calls made after the
 * jump under the function that made them, and no exit left unmatched. */
#include <execinfo.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define ROUNDS 5000 /* more than a thread's records (plt.h): none may leak */
#define N 40

static jmp_buf back;
static long compared, jumped_at;
static int unwound; /* backtrace() from the first comparison got back to sort_all */

void sort_all(void);

/* An unwinder walks out of the callback through qsort (and, with PROF_LIBCALLS, through
 * the trampolines of qsort and of backtrace itself) to the function that called qsort. */
static void walk(void)
{
    void *frames[64];
    int n = backtrace(frames, 64);
    for (int i = 0; i < n; i++)
        if ((char *)frames[i] > (char *)sort_all && (char *)frames[i] < (char *)sort_all + 256)
            unwound = 1;
}

static int by_value(const void *a, const void *b)
{
    if (++compared == 1)
        walk();
    return *(const int *)a - *(const int *)b;
}

static int jumping(const void *a, const void *b)
{
    if (++jumped_at == 5)
        longjmp(back, 1);
    return *(const int *)a - *(const int *)b;
}

static int exiting(const void *a, const void *b)
{
    static int seen;
    if (++seen == 3)
        pthread_exit(NULL);
    return *(const int *)a - *(const int *)b;
}

static void fill(int *v)
{
    for (int i = 0; i < N; i++)
        v[i] = (i * 7919) % N;
}

void sort_all(void)
{
    int v[N];
    fill(v);
    qsort(v, N, sizeof(int), by_value);
}

void sort_and_leave(void)
{
    int v[N];
    fill(v);
    jumped_at = 0;
    if (setjmp(back) == 0)
        qsort(v, N, sizeof(int), jumping);
    /* after the jump: a library call of this function's own */
    if (getpid() <= 0)
        abort();
}

static void *sort_and_end(void *arg)
{
    int v[N];
    (void)arg;
    fill(v);
    qsort(v, N, sizeof(int), exiting);
    return NULL;
}

int main(void)
{
    for (int r = 0; r < ROUNDS; r++) {
        sort_all();
        sort_and_leave();
    }
    pthread_t t;
    pthread_create(&t, NULL, sort_and_end, NULL);
    pthread_join(t, NULL);
    printf("rounds %d compared %ld unwound %d\n", ROUNDS, compared, unwound);
    return 0;
}
/* SPDX-License-Identifier: MIT */
