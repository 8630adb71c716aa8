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
 * posix_spawn calls the kernel's execve inside glibc and never comes through here.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime.h"

#define FNP_WRAP __attribute__((visibility("default"), no_instrument_function))
#define MARK "PROF_EXEC="

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execvpe_fn)(const char *, char *const[], char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);

static execve_fn real_execve;
static execvpe_fn real_execvpe;
static fexecve_fn real_fexecve;

extern char **environ;

void fnp_exec_init(void)
{
    real_execve = (execve_fn)dlsym(RTLD_NEXT, "execve");
    real_execvpe = (execvpe_fn)dlsym(RTLD_NEXT, "execvpe");
    real_fexecve = (fexecve_fn)dlsym(RTLD_NEXT, "fexecve");
}

/* Writes the profile if this process image has one to keep; then returns the
 * environment for the new image (envp with PROF_EXEC set, malloc'd), or envp itself. */
static FNP_NOINSTR char *const *before_exec(char *const envp[], char **mark)
{
    *mark = NULL;
    if (!__atomic_load_n(&fnp_recording, __ATOMIC_RELAXED) || getpid() != fnp_config.pid ||
        fnp_thread_nodes() <= fnp_config.inherited_calls)
        return envp;
    int saved = errno;
    char *path = fnp_env_output_path();
    if (!path || fnp_control_dump(path, fnp_config.quiet) != 0) {
        free(path);
        errno = saved;
        return envp;
    }
    free(path);
    size_t n = 0;
    while (envp && envp[n])
        n++;
    char **env = malloc((n + 2) * sizeof(*env));
    if (!env || asprintf(mark, MARK "%d:%d", (int)getpid(), fnp_config.image + 1) < 0) {
        free(env);
        *mark = NULL;
        errno = saved;
        return envp;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(envp[i], MARK, sizeof(MARK) - 1) != 0)
            env[k++] = envp[i];
    env[k++] = *mark;
    env[k] = NULL;
    errno = saved;
    return env;
}

/* The exec failed: the environment built for it goes. */
static FNP_NOINSTR void after_failed_exec(char *const envp[], char *const env[], char *mark)
{
    int saved = errno;
    if (env != envp)
        free((void *)env);
    free(mark);
    errno = saved;
}

FNP_WRAP int execve(const char *path, char *const argv[], char *const envp[])
{
    if (!real_execve)
        fnp_exec_init();
    char *mark;
    char *const *env = before_exec(envp, &mark);
    int rc = real_execve(path, argv, env);
    after_failed_exec(envp, env, mark);
    return rc;
}

FNP_WRAP int execvpe(const char *file, char *const argv[], char *const envp[])
{
    if (!real_execvpe)
        fnp_exec_init();
    char *mark;
    char *const *env = before_exec(envp, &mark);
    int rc = real_execvpe(file, argv, env);
    after_failed_exec(envp, env, mark);
    return rc;
}

FNP_WRAP int fexecve(int fd, char *const argv[], char *const envp[])
{
    if (!real_fexecve)
        fnp_exec_init();
    char *mark;
    char *const *env = before_exec(envp, &mark);
    int rc = real_fexecve(fd, argv, env);
    after_failed_exec(envp, env, mark);
    return rc;
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
 * execle), then the array form. */
static FNP_NOINSTR char **collect(const char *arg0, va_list ap, char ***envp)
{
    va_list count;
    va_copy(count, ap);
    size_t n = 1;
    while (va_arg(count, char *))
        n++;
    va_end(count);
    char **argv = malloc((n + 1) * sizeof(*argv));
    if (!argv)
        return NULL;
    argv[0] = (char *)arg0;
    for (size_t i = 1; i <= n; i++)
        argv[i] = va_arg(ap, char *); /* the last is the NULL */
    if (envp)
        *envp = va_arg(ap, char **);
    return argv;
}

#define EXECL(name, call, with_env)                                                                \
    FNP_WRAP int name(const char *file, const char *arg0, ...)                                     \
    {                                                                                              \
        char **envp = environ;                                                                     \
        va_list ap;                                                                                \
        va_start(ap, arg0);                                                                        \
        char **argv = collect(arg0, ap, with_env ? &envp : NULL);                                  \
        va_end(ap);                                                                                \
        if (!argv) {                                                                               \
            errno = ENOMEM;                                                                        \
            return -1;                                                                             \
        }                                                                                          \
        int rc = call(file, argv, envp);                                                           \
        int saved = errno;                                                                         \
        free(argv);                                                                                \
        errno = saved;                                                                             \
        return rc;                                                                                 \
    }

EXECL(execl, execve, 0)
EXECL(execle, execve, 1)
EXECL(execlp, execvpe, 0)
