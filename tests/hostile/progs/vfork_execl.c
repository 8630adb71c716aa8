/*
 * A child of vfork shares its parent's memory and may only call exec or _exit: not malloc,
 * whose lock another thread of the parent may hold. This program counts every malloc,
 * calloc and realloc made while its child runs execl, execle or execlp (argv[1]), and
 * prints the count: fnprof's wrappers of those calls must make none.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);

static volatile int counting, made;

void *malloc(size_t n)
{
    made += counting;
    return __libc_malloc(n);
}

void *calloc(size_t n, size_t size)
{
    made += counting;
    return __libc_calloc(n, size);
}

void *realloc(void *p, size_t n)
{
    made += counting;
    return __libc_realloc(p, n);
}

static int work(int x)
{
    return x * 2;
}

int main(int argc, char **argv)
{
    char *env[] = {"X=1", NULL};
    const char *how = argc > 1 ? argv[1] : "execl";
    work(1);
    counting = 1;
    pid_t pid = vfork();
    if (pid == 0) {
        if (strcmp(how, "execle") == 0)
            execle("/bin/true", "true", "a", "b", (char *)NULL, env);
        else if (strcmp(how, "execlp") == 0)
            execlp("true", "true", "a", "b", (char *)NULL);
        else
            execl("/bin/true", "true", "a", "b", (char *)NULL);
        _exit(127);
    }
    counting = 0;
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid)
        return 2;
    printf("%s exit %d mallocs %d\n", how, WIFEXITED(status) ? WEXITSTATUS(status) : -1, made);
    return 0;
}
/* SPDX-License-Identifier: MIT */
