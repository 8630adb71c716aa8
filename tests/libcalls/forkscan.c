/* forkscan: a fork while another thread hooks a library's calls (plt.c's scan, under its
 * lock). Thread "loader" dlopens libscanned.so and runs its function: fnprof scans the new
 * object, and asks __cxa_demangle (this program's, found by dlsym: -rdynamic) for the
 * name of libside.so's _Z4sidel. This one says so and takes 300 ms; main forks meanwhile.
 * The child dlopens libplugin.so and runs plugin_run: its library calls are recorded only
 * if the child can scan, i.e. if it did not inherit the lock held by a thread it lacks
 * (fnprof then holds the lock across the fork, and the fork waits for the scan). */
#include <dlfcn.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile int armed = 1;
static sem_t in_scan;

__attribute__((no_instrument_function)) char *__cxa_demangle(const char *mangled, char *buf,
                                                             size_t *len, int *status)
{
    (void)buf;
    (void)len;
    if (armed && strcmp(mangled, "_Z4sidel") == 0) {
        armed = 0;
        sem_post(&in_scan);
        usleep(300000);
    }
    if (status)
        *status = -2;
    return NULL;
}

static void *loader(void *arg)
{
    (void)arg;
    void *h = dlopen("libscanned.so", RTLD_NOW);
    long (*run)(void) = h ? (long (*)(void))dlsym(h, "scanned_run") : NULL;
    if (!run) {
        fprintf(stderr, "libscanned.so: %s\n", dlerror());
        exit(2);
    }
    printf("scanned %ld\n", run());
    return NULL;
}

static int child(void)
{
    void *h = dlopen("libplugin.so", RTLD_NOW);
    void (*run)(void) = h ? (void (*)(void))dlsym(h, "plugin_run") : NULL;
    if (!run)
        return 2;
    run();
    return 0;
}

int main(void)
{
    sem_init(&in_scan, 0, 0);
    pthread_t t;
    pthread_create(&t, NULL, loader, NULL);
    while (sem_wait(&in_scan) != 0)
        ;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0)
        exit(child()); /* exit: the child writes its profile */
    int status = 0;
    waitpid(pid, &status, 0);
    pthread_join(t, NULL);
    printf("child %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return 0;
}
/* SPDX-License-Identifier: MIT */
