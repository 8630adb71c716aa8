/* Recursion 1,000,000 deep (argv[1], default), on a thread with a 1 GiB stack: rec() down
 * to the bottom, then ping() <-> pong() as deep. argv[2]: a file to write the peak RSS
 * (VmHWM) to. Expected (run_robust.py, case "deep"): exact counts, and fnprof's peak RSS
 * a few MB over the plain build's (recursion folds into a few nodes). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long depth = 1000000;

int leaf(void)
{
    return 1;
}

long rec(long n)
{
    volatile long r = n ? rec(n - 1) : leaf();
    return r + 1;
}

long pong(long n);

long ping(long n)
{
    volatile long r = n ? pong(n - 1) : 0;
    return r + 1;
}

long pong(long n)
{
    volatile long r = n ? ping(n - 1) : 0;
    return r + 1;
}

void *run(void *arg)
{
    long *out = arg;
    out[0] = rec(depth);
    out[1] = ping(depth);
    return NULL;
}

void write_peak_rss(const char *path)
{
    FILE *in = fopen("/proc/self/status", "r"), *out = fopen(path, "w");
    char line[256];
    while (in && out && fgets(line, sizeof(line), in))
        if (strncmp(line, "VmHWM:", 6) == 0)
            fputs(line, out);
    if (in)
        fclose(in);
    if (out)
        fclose(out);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        depth = atol(argv[1]);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, (size_t)1 << 30);
    pthread_t t;
    long out[2];
    if (pthread_create(&t, &attr, run, out) != 0)
        return 3;
    pthread_join(t, NULL);
    printf("rec %ld, ping %ld\n", out[0], out[1]);
    if (argc > 2)
        write_peak_rss(argv[2]);
    return 0;
}
/* SPDX-License-Identifier: MIT */
