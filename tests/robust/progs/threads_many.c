/* argv[1] threads created one after the other, each joined before the next starts, each
 * calling a tiny function three times. argv[2] (optional): a file that receives the
 * process's peak RSS (VmHWM, kB) at the end of main, so that stdout stays the same with
 * and without fnprof. With fnprof, finished threads' states are reused: the peak must not
 * grow with the number of threads (run_robust.py, case "threads_many"). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tiny(int x)
{
    return x + 1;
}

void *tiny_worker(void *arg)
{
    long v = (long)arg;
    v = tiny((int)v);
    v = tiny((int)v);
    v = tiny((int)v);
    return (void *)v;
}

long run_threads(long n)
{
    long sum = 0;
    for (long i = 0; i < n; i++) {
        pthread_t t;
        void *ret;
        int rc = pthread_create(&t, NULL, tiny_worker, (void *)(i & 0xff));
        if (rc) {
            fprintf(stderr, "pthread_create: %s\n", strerror(rc));
            exit(1);
        }
        pthread_join(t, &ret);
        sum += (long)ret;
    }
    return sum;
}

void write_peak_rss(const char *path)
{
    FILE *in = fopen("/proc/self/status", "r");
    FILE *out = fopen(path, "w");
    char line[256];
    if (!in || !out)
        exit(1);
    while (fgets(line, sizeof(line), in))
        if (strncmp(line, "VmHWM:", 6) == 0)
            fputs(line, out);
    fclose(in);
    fclose(out);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    long n = strtol(argv[1], NULL, 10);
    long sum = run_threads(n);
    printf("threads %ld sum %ld\n", n, sum);
    if (argc > 2)
        write_peak_rss(argv[2]);
    return 0;
}
/* SPDX-License-Identifier: MIT */
