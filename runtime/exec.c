/* SPDX-License-Identifier: MIT */
/*
 * The exec family, interposed: execve replaces the image without running destructors, so
 * a profiled process that execs would lose everything it recorded. Before the real call
 * the profile is written as at exit, and the new image is told (PROF_EXEC=<pid>:<n>) that
 * it is the n-th image of this process, so it writes PROF_OUTPUT...exec<n> rather than
 * over it. If the exec fails, recording goes on and the exit dump rewrites the file with
 * everything, so nothing is counted twice.
 *
 * Not here: the child of vfork (it shares the parent's memory: it must not dump) and a
 * forked child that recorded nothing but the frames it inherited (fork + exec at once,
 * the usual way to start a program: its file would only repeat the parent's stack).
 *
 * Every image started below this process gets PROF_OWNER (env.c), which the program's own
 * environ never holds: the exec family's wrappers here, posix_spawn and posix_spawnp
 * (which call the kernel's execve inside glibc), and system and popen (glibc's spawn of
 * /bin/sh from environ) each put it into the environment they pass on. Not covered: a
 * raw execve system call, and glibc's other internal spawns (wordexp).
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime.h"

#define FNP_WRAP __attribute__((visibility("default"), no_instrument_function))
#define MARK "PROF_EXEC="
#define OWNER "PROF_OWNER="
/* Environments up to this many entries are built on the wrapper's stack: the child of
 * vfork calls exec too, and may not call malloc. Longer ones are malloc'd. */
#define STACK_ENV 4096

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execvpe_fn)(const char *, char *const[], char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);
typedef int (*spawn_fn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
                        const posix_spawnattr_t *, char *const[], char *const[]);
typedef int (*system_fn)(const char *);
typedef FILE *(*popen_fn)(const char *, const char *);

static execve_fn real_execve;
static execvpe_fn real_execvpe;
static fexecve_fn real_fexecve;
static spawn_fn real_posix_spawn, real_posix_spawnp;
static system_fn real_system;
static popen_fn real_popen;

extern char **environ;

void fnp_exec_init(void)
{
    real_execve = (execve_fn)dlsym(RTLD_NEXT, "execve");
    real_execvpe = (execvpe_fn)dlsym(RTLD_NEXT, "execvpe");
    real_fexecve = (fexecve_fn)dlsym(RTLD_NEXT, "fexecve");
    real_posix_spawn = (spawn_fn)dlsym(RTLD_NEXT, "posix_spawn");
    real_posix_spawnp = (spawn_fn)dlsym(RTLD_NEXT, "posix_spawnp");
    real_system = (system_fn)dlsym(RTLD_NEXT, "system");
    real_popen = (popen_fn)dlsym(RTLD_NEXT, "popen");
}

static FNP_NOINSTR size_t count(char *const envp[])
{
    size_t n = 0;
    while (envp && envp[n])
        n++;
    return n;
}

/* The environment for a new image: envp without fnprof's marks, then PROF_OWNER (the
 * process whose file name its descendants defer to: env.c) and exec_mark when not NULL,
 * in room (cap entries, n + 3 of them needed for envp's n), else malloc'd. envp itself
 * when there is nothing to add, or no memory. */
static FNP_NOINSTR char *const *marked(char *const envp[], size_t n, char **room, size_t cap,
                                       const char *exec_mark)
{
    const char *owner = fnp_config.owner_mark;
    if (!owner && !exec_mark)
        return envp;
    char **env = n + 3 <= cap ? room : malloc((n + 3) * sizeof(*env));
    if (!env)
        return envp;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(envp[i], MARK, sizeof(MARK) - 1) != 0 &&
            strncmp(envp[i], OWNER, sizeof(OWNER) - 1) != 0)
            env[k++] = envp[i];
    if (owner)
        env[k++] = (char *)owner;
    if (exec_mark)
        env[k++] = (char *)exec_mark;
    env[k] = NULL;
    return env;
}

/* Writes the profile if this process image has one to keep; then returns the
 * environment for the new image (marked: PROF_EXEC set when the profile was written, so
 * that the new image names its file apart), built in room or malloc'd, or envp itself.
 * exec_mark: the caller's buffer for PROF_EXEC's text. */
static FNP_NOINSTR char *const *before_exec(char *const envp[], char **room, size_t cap,
                                            char *exec_mark, size_t mark_len)
{
    int saved = errno;
    size_t n = count(envp);
    const char *mark = NULL;
    /* Not in the child of vfork (another pid: it shares the parent's memory, and must not
     * dump), nor in a child that recorded nothing but the frames it inherited. */
    int keep = 0;
    if (__atomic_load_n(&fnp_recording, __ATOMIC_RELAXED) && getpid() == fnp_config.pid &&
        fnp_thread_nodes() > fnp_config.inherited_calls) {
        char *path = fnp_env_output_path();
        if (path && fnp_control_dump(path, fnp_config.quiet) == 0 &&
            snprintf(exec_mark, mark_len, MARK "%d:%d", (int)getpid(), fnp_config.image + 1) <
                (int)mark_len)
            mark = exec_mark;
        keep = mark != NULL;
        free(path);
    }
    /* The streamed trace's writer thread dies with the image: its file is finished now
     * (and, should the exec fail, holds the calls up to here), or dropped with the
     * profile. Not in the child of vfork, whose writer is the parent's. */
    if (fnp_streaming && getpid() == fnp_config.pid)
        fnp_stream_before_exec(keep);
    char *const *env = marked(envp, n, room, cap, mark);
    errno = saved;
    return env;
}

/* The exec failed: the environment built for it goes, if it was malloc'd. */
static FNP_NOINSTR void after_failed_exec(char *const envp[], char *const env[], char **room)
{
    int saved = errno;
    if (env != envp && env != room)
        free((void *)env);
    errno = saved;
}

/* The body of an exec wrapper whose environment is envp: call is the real call, with env
 * for the environment. The room for the new environment is on this frame. */
#define WITH_MARKS(envp, call)                                                                     \
    size_t cap_ = count(envp) + 3;                                                                 \
    cap_ = cap_ <= STACK_ENV ? cap_ : 1;                                                           \
    char *room_[cap_];                                                                             \
    char mark_[64];                                                                                \
    char *const *env = before_exec(envp, room_, cap_, mark_, sizeof(mark_));                       \
    int rc = call;                                                                                 \
    after_failed_exec(envp, env, room_);                                                           \
    return rc

FNP_WRAP int execve(const char *path, char *const argv[], char *const envp[])
{
    if (!real_execve)
        fnp_exec_init();
    WITH_MARKS(envp, real_execve(path, argv, env));
}

FNP_WRAP int execvpe(const char *file, char *const argv[], char *const envp[])
{
    if (!real_execvpe)
        fnp_exec_init();
    WITH_MARKS(envp, real_execvpe(file, argv, env));
}

FNP_WRAP int fexecve(int fd, char *const argv[], char *const envp[])
{
    if (!real_fexecve)
        fnp_exec_init();
    WITH_MARKS(envp, real_fexecve(fd, argv, env));
}

/* posix_spawn calls the kernel's execve inside glibc: the mark is put in here. */
static FNP_NOINSTR int spawn(spawn_fn real, pid_t *pid, const char *path,
                             const posix_spawn_file_actions_t *actions,
                             const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    size_t n = count(envp);
    char **env = NULL;
    char *const *use = envp;
    if (fnp_config.owner_mark) {
        fnp_mem_hold(); /* fnprof's array, not the program's allocation */
        env = malloc((n + 3) * sizeof(*env));
        fnp_mem_release();
        if (env)
            use = marked(envp, n, env, n + 3, NULL);
    }
    int rc = real(pid, path, actions, attr, argv, use);
    free(env);
    return rc;
}

FNP_WRAP int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *actions,
                         const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    if (!real_posix_spawn)
        fnp_exec_init();
    return spawn(real_posix_spawn, pid, path, actions, attr, argv, envp);
}

FNP_WRAP int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *actions,
                          const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    if (!real_posix_spawnp)
        fnp_exec_init();
    return spawn(real_posix_spawnp, pid, file, actions, attr, argv, envp);
}

/*
 * system and popen start /bin/sh with glibc's own posix_spawn and environ, out of reach
 * of the wrappers above. While one runs, environ is a copy with the mark (never the
 * program's array changed); a setenv by another thread meanwhile makes its own copy of
 * that one, or changes the copy in place (a variable that was there; unsetenv, putenv),
 * and then that is kept, and only the mark is taken out of it. Left: a change made in the
 * instant between that check and the swap back is lost. Another thread that reads environ
 * during such a call sees the mark: the one moment the program can. Calls that overlap
 * share one copy (active counts them); a copy is freed when the next one is made, when no
 * reader of it can remain. The lock is held for the swaps only, never across the call,
 * and across fork (fnp_exec_atfork).
 */
static pthread_mutex_t swap_lock = PTHREAD_MUTEX_INITIALIZER;
static size_t active;           /* calls of system and popen under way; under swap_lock */
static char **program_environ;  /* environ before the first of them; under swap_lock */
static int swapped;             /* environ is copy (program_environ may be NULL: clearenv) */
static char **copy, **old_copy; /* the marked copy, and the one before it */

static FNP_NOINSTR void environ_marked(void)
{
    if (!fnp_config.owner_mark)
        return;
    int saved = errno;
    fnp_mem_hold();
    pthread_mutex_lock(&swap_lock);
    if (active++ == 0) {
        size_t n = count(environ);
        char **fresh = malloc((n + 3) * sizeof(*fresh));
        if (fresh && marked(environ, n, fresh, n + 3, NULL) == fresh) {
            free(old_copy);
            old_copy = copy;
            copy = fresh;
            program_environ = environ;
            environ = fresh;
            swapped = 1;
        } else {
            free(fresh);
            swapped = 0;
        }
    }
    pthread_mutex_unlock(&swap_lock);
    fnp_mem_release();
    errno = saved;
}

/* Whether made (the copy) still holds what environ_marked put in it: program's entries without
 * fnprof's marks, then the owner's. Another thread's setenv of a variable the program
 * had, its unsetenv and putenv change the copy in place; swapping program back would
 * lose them. */
static FNP_NOINSTR int unchanged(char **made, char **program)
{
    size_t k = 0;
    for (size_t i = 0; program && program[i]; i++)
        if (strncmp(program[i], MARK, sizeof(MARK) - 1) != 0 &&
            strncmp(program[i], OWNER, sizeof(OWNER) - 1) != 0 && made[k++] != program[i])
            return 0;
    return made[k] == fnp_config.owner_mark && made[k + 1] == NULL;
}

static FNP_NOINSTR void environ_restore(void)
{
    if (!fnp_config.owner_mark)
        return;
    int saved = errno;
    pthread_mutex_lock(&swap_lock);
    if (--active == 0 && swapped) {
        char **was = copy;
        if (!unchanged(copy, program_environ) ||
            !__atomic_compare_exchange_n(&environ, &was, program_environ, 0, __ATOMIC_ACQ_REL,
                                         __ATOMIC_ACQUIRE)) {
            /* The program's setenv, unsetenv or putenv changed the copy in place (a
             * variable it had), or made a new array: that is its environ now, without
             * the mark. A copy still in use as environ is never freed. */
            if (environ == copy)
                copy = NULL;
            unsetenv("PROF_OWNER");
        }
        swapped = 0;
    }
    pthread_mutex_unlock(&swap_lock);
    errno = saved;
}

FNP_FORK_SAFE_LOCK(fnp_exec_atfork, swap_lock)

FNP_WRAP int system(const char *command)
{
    if (!real_system)
        fnp_exec_init();
    if (!command)
        return real_system(command);
    environ_marked();
    int rc = real_system(command);
    environ_restore();
    return rc;
}

FNP_WRAP FILE *popen(const char *command, const char *type)
{
    if (!real_popen)
        fnp_exec_init();
    environ_marked();
    FILE *f = real_popen(command, type);
    environ_restore();
    return f;
}

FNP_WRAP int execv(const char *path, char *const argv[])
{
    return execve(path, argv, environ);
}

FNP_WRAP int execvp(const char *file, char *const argv[])
{
    return execvpe(file, argv, environ);
}

/* execl, execle, execlp: the arguments up to the NULL as an array (and envp after it for
 * execle), then the array form. The array is on the stack, as in glibc's own execl: the
 * child of vfork calls these too, and may not call malloc. */
static FNP_NOINSTR size_t count_args(va_list ap)
{
    size_t n = 1;
    while (va_arg(ap, char *))
        n++;
    return n;
}

#define EXECL(name, call, with_env)                                                                \
    FNP_WRAP int name(const char *file, const char *arg0, ...)                                     \
    {                                                                                              \
        va_list ap;                                                                                \
        va_start(ap, arg0);                                                                        \
        size_t n = count_args(ap);                                                                 \
        va_end(ap);                                                                                \
        char *argv[n + 1];                                                                         \
        char **envp = environ;                                                                     \
        va_start(ap, arg0);                                                                        \
        argv[0] = (char *)arg0;                                                                    \
        for (size_t i = 1; i <= n; i++)                                                            \
            argv[i] = va_arg(ap, char *); /* the last is the NULL */                               \
        if (with_env)                                                                              \
            envp = va_arg(ap, char **);                                                            \
        va_end(ap);                                                                                \
        return call(file, argv, envp);                                                             \
    }

EXECL(execl, execve, 0)
EXECL(execle, execve, 1)
EXECL(execlp, execvpe, 0)
