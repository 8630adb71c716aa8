/* SPDX-License-Identifier: MIT */
/*
 * The run's metadata (fnprof_add_metadata and what fnprof knows itself), kept in the
 * profile's trailer and shown by the report, the HTML view and the trace.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fnprof.h"
#include "runtime.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct fnp_meta *pairs; /* the program's own, under lock */
static size_t npairs;
static char start[32]; /* ISO 8601, UTC, at load */
static char host[256];

void fnp_meta_init(void)
{
    time_t now = time(NULL);
    struct tm tm;
    if (gmtime_r(&now, &tm))
        strftime(start, sizeof(start), "%Y-%m-%dT%H:%M:%SZ", &tm);
    if (gethostname(host, sizeof(host) - 1) != 0)
        host[0] = 0;
}

/* A child would otherwise wait for ever in fnprof_add_metadata or in its exit dump. A
 * holder allocates under it (strdup, realloc: glibc's malloc is fork-safe) and takes no
 * other lock of fnprof's. */
FNP_FORK_SAFE_LOCK(fnp_meta_atfork, lock)

FNPROF_API int fnprof_add_metadata(const char *key, const char *value)
{
    /* The bounds the profile's trailer keeps (docs/tree-format.md). */
    if (!key || !value || !*key || strlen(key) > FNP_TREE_MAX_META_KEY ||
        strlen(value) > FNP_TREE_MAX_META_VALUE)
        return -EINVAL;
    int rc = 0;
    fnp_mem_hold(); /* fnprof's own copies: not the program's allocations */
    pthread_mutex_lock(&lock);
    size_t i = 0;
    while (i < npairs && strcmp(pairs[i].key, key) != 0)
        i++;
    char *v = strdup(value), *k = i < npairs ? NULL : strdup(key);
    if (!v || (i == npairs && !k)) {
        rc = -ENOMEM;
    } else if (i < npairs) {
        free(pairs[i].value);
        pairs[i].value = v;
        v = NULL;
    } else {
        struct fnp_meta *grown = realloc(pairs, (npairs + 1) * sizeof(*grown));
        if (!grown) {
            rc = -ENOMEM;
        } else {
            pairs = grown;
            pairs[npairs++] = (struct fnp_meta){k, v};
            k = v = NULL;
        }
    }
    pthread_mutex_unlock(&lock);
    free(k);
    free(v);
    fnp_mem_release();
    return rc;
}

int fnp_meta_fill(struct fnp_profile *p)
{
    char exe[4096], pid[24], rank[24] = "", size[24] = "";
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    exe[n > 0 ? n : 0] = 0;
    snprintf(pid, sizeof(pid), "%d", (int)getpid());
    if (fnp_config.launch.rank >= 0)
        snprintf(rank, sizeof(rank), "%ld", fnp_config.launch.rank);
    if (fnp_config.launch.size >= 0)
        snprintf(size, sizeof(size), "%ld", fnp_config.launch.size);
    const char *own[][2] = {
        {"program", exe},
        {"pid", pid},
        {"start", start},
        {"host", host},
        {"fnprof", FNPROF_VERSION_STRING},
        {"clock", fnp_clock_name()},
        {"clock_reads", fnp_clock_ordered() ? "ordered" : ""}, /* PROF_COMPENSATE=1 */
        {"rank", rank}, /* an MPI launcher's, when there is one */
        {"size", size},
    };
    for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
        if (own[i][1][0] && fnp_profile_set_meta(p, own[i][0], own[i][1]))
            return -ENOMEM;
    int rc = 0;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < npairs && !rc; i++)
        rc = fnp_profile_set_meta(p, pairs[i].key, pairs[i].value);
    pthread_mutex_unlock(&lock);
    return rc;
}
