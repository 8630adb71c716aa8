/* A recursion that never repeats: a() and b() call one another or themselves argv[1] levels
 * deep, level k+1 running b when k has an odd number of bits set (the Thue-Morse word, which
 * holds no block repeated back to back, so recursion folding never applies: each level is a
 * new calling context). At the bottom, bottom() calls leaf() argv[2] times: a hot loop that
 * deep. On a thread with a 1 GiB stack. argv[3]: a file to write the peak RSS (VmHWM) to.
 * Expected (run_robust.py, case "deep_chain"): exact counts however deep, in a time and
 * memory that do not grow with the depth beyond the shadow stack's. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))

static long depth = 1000, loops;

NOINLINE long leaf(long x)
{
    return x + 1;
}

NOINLINE long bottom(void)
{
    long s = 0;
    for (long i = 0; i < loops; i++)
        s += leaf(i);
    return s;
}

NOINLINE long b(long k);

NOINLINE long a(long k)
{
    volatile long r = k < depth ? (__builtin_popcountl(k) & 1 ? b(k + 1) : a(k + 1)) : bottom();
    return r + 1;
}

NOINLINE long b(long k)
{
    volatile long r = k < depth ? (__builtin_popcountl(k) & 1 ? b(k + 1) : a(k + 1)) : bottom();
    return r + 1;
}

NOINLINE void *run(void *arg)
{
    *(long *)arg = a(1);
    return NULL;
}

NOINLINE void write_peak_rss(const char *path)
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
        depth = strtol(argv[1], NULL, 10);
    if (argc > 2)
        loops = strtol(argv[2], NULL, 10);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, (size_t)1 << 30);
    pthread_t t;
    long out;
    if (pthread_create(&t, &attr, run, &out) != 0)
        return 3;
    pthread_join(t, NULL);
    printf("chain %ld deep, %ld loops: %ld\n", depth, loops, out);
    if (argc > 3)
        write_peak_rss(argv[3]);
    return 0;
}
/* SPDX-License-Identifier: MIT */
