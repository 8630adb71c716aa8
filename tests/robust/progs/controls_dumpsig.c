/* Dumps on a signal while threads run. WORKERS threads each call work() PHASES * ROUNDS
 * times. With argv[1] = D > 0 (at most PHASES - 1; run with PROF_DUMP_SIGNAL=USR2), main
 * sends itself SIGUSR2 D times from request_dump(): the k-th time once every worker has
 * finished k phases, and a worker starts phase k + 1 only once the k-th signal is sent, so
 * dump k is taken while the workers make the calls of phase k + 1 (or wait for it). After
 * each signal main waits until the file at PROF_OUTPUT is replaced (fnprof writes a new
 * file and renames it) and links it to argv[2]/dump<k>.prof. What the program prints does
 * not depend on D. Expected (run_robust.py, case "dumpsig"): dump k holds between k and
 * k + 1 phases of work() per worker and k calls of request_dump(); the exit profile every
 * call, exactly. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define WORKERS 2
#define PHASES 4
#define ROUNDS 20000

static int dumps;
static int progress[WORKERS]; /* phases finished, by each worker */
static int sent;              /* signals sent by main */
static unsigned long results[WORKERS];

/* Helpers of the waits: not instrumented, so that waiting adds no calls. */
#define QUIET __attribute__((no_instrument_function))

static QUIET void pause_a_little(void)
{
    struct timespec ts = {0, 200000};
    nanosleep(&ts, NULL);
}

int leaf(int x)
{
    return x ^ 0x5a;
}

int work(int x)
{
    return leaf(x) + 1;
}

void *worker(void *arg)
{
    long i = (long)arg;
    unsigned long sum = 0;
    for (int p = 0; p < PHASES; p++) {
        for (int j = 0; j < ROUNDS; j++)
            sum += (unsigned long)work(j);
        __atomic_store_n(&progress[i], p + 1, __ATOMIC_RELEASE);
        while (p < dumps && __atomic_load_n(&sent, __ATOMIC_ACQUIRE) < p + 1)
            pause_a_little();
    }
    results[i] = sum;
    return NULL;
}

static QUIET double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* 0 once the file at path is another than old (inode; 0: none yet), -1 after 60 s. */
static QUIET int wait_replaced(const char *path, ino_t old, ino_t *now_ino)
{
    struct stat st;
    double until = now() + 60;
    while (stat(path, &st) != 0 || st.st_ino == old) {
        if (now() > until)
            return -1;
        pause_a_little();
    }
    *now_ino = st.st_ino;
    return 0;
}

int request_dump(int k, const char *path, const char *copies, ino_t *ino)
{
    for (int i = 0; i < WORKERS; i++)
        while (__atomic_load_n(&progress[i], __ATOMIC_ACQUIRE) < k)
            pause_a_little();
    __atomic_store_n(&sent, k, __ATOMIC_RELEASE);
    kill(getpid(), SIGUSR2);
    if (wait_replaced(path, *ino, ino) != 0) {
        printf("dump %d: %s not written within 60 s\n", k, path);
        return -1;
    }
    char copy[4096];
    snprintf(copy, sizeof(copy), "%s/dump%d.prof", copies, k);
    if (link(path, copy) != 0) {
        printf("dump %d: cannot link %s to %s\n", k, path, copy);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    dumps = (int)strtol(argv[1], NULL, 10);
    const char *path = getenv("PROF_OUTPUT");
    if (dumps < 0 || dumps >= PHASES || (dumps && (argc < 3 || !path)))
        return 2;
    pthread_t threads[WORKERS];
    for (long i = 0; i < WORKERS; i++)
        if (pthread_create(&threads[i], NULL, worker, (void *)i))
            abort();
    ino_t ino = 0;
    int status = 0;
    for (int k = 1; k <= dumps && !status; k++)
        status = request_dump(k, path, argv[2], &ino);
    if (status)
        __atomic_store_n(&sent, PHASES, __ATOMIC_RELEASE); /* let the workers finish */
    unsigned long total = 0;
    for (int i = 0; i < WORKERS; i++) {
        pthread_join(threads[i], NULL);
        total += results[i];
    }
    printf("dumpsig %d threads total %lu\n", WORKERS, total);
    return status ? 3 : 0;
}
/* SPDX-License-Identifier: MIT */
