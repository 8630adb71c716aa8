/* SPDX-License-Identifier: MIT */
/*
 * Waits (docs/libcalls.md, "Waits"): the library calls PROF_LIBCALLS records whose time is
 * spent waiting for something outside the calling thread (another thread, a child process,
 * a timer, a peer on a pipe or socket), and a profile with their time taken out, computed
 * on the calling-context tree: every function's times as if each wait had returned at
 * once. A library call's key is (library file name, 0, name) (runtime/plt.c); a wait is
 * one whose name is in the list below, from any library.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"

/* docs/libcalls.md says why each is here, and why read is and write is not. */
static const char *const waits[] = {
    "accept",
    "accept4",
    "clock_nanosleep",
    "connect",
    "epoll_pwait",
    "epoll_pwait2",
    "epoll_wait",
    "flock",
    "lockf",
    "mq_receive",
    "mq_timedreceive",
    "msgrcv",
    "nanosleep",
    "pause",
    "poll",
    "ppoll",
    "pselect",
    "pthread_barrier_wait",
    "pthread_clockjoin_np",
    "pthread_cond_clockwait",
    "pthread_cond_timedwait",
    "pthread_cond_wait",
    "pthread_join",
    "pthread_mutex_clocklock",
    "pthread_mutex_lock",
    "pthread_mutex_timedlock",
    "pthread_rwlock_clockrdlock",
    "pthread_rwlock_clockwrlock",
    "pthread_rwlock_rdlock",
    "pthread_rwlock_timedrdlock",
    "pthread_rwlock_timedwrlock",
    "pthread_rwlock_wrlock",
    "pthread_spin_lock",
    "pthread_timedjoin_np",
    "read",
    "readv",
    "recv",
    "recvfrom",
    "recvmmsg",
    "recvmsg",
    "select",
    "sem_clockwait",
    "sem_timedwait",
    "sem_wait",
    "sigsuspend",
    "sigtimedwait",
    "sigwait",
    "sigwaitinfo",
    "sleep",
    "std::condition_variable::wait(std::unique_lock<std::mutex>&)",
    "std::thread::join()",
    "syscall(SYS_futex)",
    "usleep",
    "wait",
    "wait3",
    "wait4",
    "waitid",
    "waitpid",
};

int fnp_key_is_libcall(const struct fnp_key *k)
{
    return k->line == 0 && k->file && strcmp(k->file, "~") != 0 && !strchr(k->file, '/') &&
           strstr(k->file, ".so") != NULL;
}

int fnp_key_is_wait(const struct fnp_key *k)
{
    if (!fnp_key_is_libcall(k) || !k->name)
        return 0;
    for (size_t i = 0; i < sizeof(waits) / sizeof(waits[0]); i++)
        if (strcmp(k->name, waits[i]) == 0)
            return 1;
    return 0;
}

size_t fnp_wait_names(const char *const **out)
{
    *out = waits;
    return sizeof(waits) / sizeof(waits[0]);
}

int fnp_profile_without_waits(const struct fnp_profile *in, struct fnp_profile *out,
                              struct fnp_waits *w)
{
    memset(w, 0, sizeof(*w));
    fnp_profile_init(out);
    if (in->tree_kind != FNP_TREE_TIME)
        return -EINVAL;
    size_t n = in->ntree, nf = in->nfuncs;
    struct fnp_tree_node *nodes = malloc((n ? n : 1) * sizeof(*nodes));
    uint64_t *under = calloc(n ? n : 1, sizeof(*under)); /* waited ticks in a subtree */
    uint8_t *is_wait = calloc(nf ? nf : 1, 1), *inside = calloc(n ? n : 1, 1);
    uint8_t *counted = calloc(nf ? nf : 1, 1);
    int rc = -ENOMEM;
    if (!nodes || !under || !is_wait || !inside || !counted)
        goto out;
    for (size_t f = 0; f < nf; f++)
        is_wait[f] = (uint8_t)fnp_key_is_wait(&in->funcs[f].key);
    memcpy(nodes, in->tree, n * sizeof(*nodes));
    /* A wait's subtree is inside it: pre-order puts a parent first. */
    for (size_t i = 0; i < n; i++) {
        uint32_t up = nodes[i].parent;
        if (is_wait[nodes[i].func] || (up != FNP_NO_PARENT && inside[up]))
            inside[i] = 1;
    }
    /* Children before parents: each node's waited ticks, the outermost waits' whole. */
    for (size_t i = n; i-- > 0;) {
        uint32_t up = nodes[i].parent;
        int outermost = is_wait[nodes[i].func] && (up == FNP_NO_PARENT || !inside[up]);
        if (outermost) {
            under[i] = nodes[i].ticks;
            w->ticks = fnp_sat_add(w->ticks, nodes[i].ticks);
            w->calls = fnp_sat_add(w->calls, nodes[i].ncalls);
            if (!counted[nodes[i].func]++)
                w->funcs++;
        }
        if (up != FNP_NO_PARENT && !inside[up])
            under[up] = fnp_sat_add(under[up], under[i]);
    }
    for (size_t i = 0; i < n; i++) {
        if (inside[i]) {
            nodes[i].ticks = 0;
            nodes[i].back = 0;
        } else {
            nodes[i].ticks = nodes[i].ticks > under[i] ? nodes[i].ticks - under[i] : 0;
        }
    }
    rc = 0;
    /* the synthetic root the runtime hangs a run's outermost calls from (build.c), in the
     * dict and not in the kept tree, when in has one */
    int64_t process = -1;
    for (size_t f = 0; f < nf && !rc; f++) {
        const struct fnp_key *k = &in->funcs[f].key;
        int64_t g = fnp_profile_func(out, k);
        rc = g < 0 ? (int)g : (size_t)g == f ? 0 : -EINVAL;
        if (fnp_key_is_process(k) && in->funcs[f].st.ncalls)
            process = (int64_t)f;
    }
    if (!rc)
        rc = fnp_profile_add_rooted(out, nodes, n, in->tick_seconds, process,
                                    process >= 0 ? in->funcs[process].st.ncalls : 0);
    if (!rc)
        rc = fnp_tree_set(out, nodes, n, in->tree_kind, in->tick_seconds,
                          (const char *const *)in->threads, in->nthreads);
    for (size_t i = 0; i < in->nmeta && !rc; i++)
        rc = fnp_profile_set_meta(out, in->meta[i].key, in->meta[i].value);
    if (!rc) {
        char line[128];
        snprintf(line, sizeof(line), "taken out: %.6f s in %llu calls of %zu functions",
                 (double)w->ticks * in->tick_seconds, (unsigned long long)w->calls, w->funcs);
        rc = fnp_profile_set_meta(out, "waits", line);
    }
out:
    if (rc) {
        fnp_profile_free(out);
        fnp_profile_init(out);
    }
    free(nodes);
    free(under);
    free(is_wait);
    free(inside);
    free(counted);
    return rc;
}
