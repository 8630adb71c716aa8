/* A preloaded shim for case_files_killed_convert.py: just before the fnprof command renames
 * a temporary of its own (a name holding ".fnprof-") into place, the process sends itself
 * the signal $FILES_KILL_SIGNAL (a number), as a user's ^C or a kill at that moment would.
 * The temporary is whole then, and would stay behind if nothing removed it. With
 * $FILES_KILL_COUNT = 2 it sends the signal twice: in a program's exit dump, the first is
 * held until the dump is written and the second ends the process at once. With
 * $FILES_KILL_COMM set, only a process of that name (/proc/self/comm) does it. With
 * $FILES_KILL_FROM_CHILD set, a child it forks sends it (kill from another process). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void maybe_die(const char *from)
{
    const char *sig = getenv("FILES_KILL_SIGNAL");
    const char *count = getenv("FILES_KILL_COUNT");
    const char *comm = getenv("FILES_KILL_COMM");
    if (!sig || !strstr(from, ".fnprof-"))
        return;
    if (comm) {
        char name[64] = "";
        FILE *f = fopen("/proc/self/comm", "r");
        if (f) {
            if (!fgets(name, sizeof(name), f))
                name[0] = 0;
            fclose(f);
        }
        name[strcspn(name, "\n")] = 0;
        if (strcmp(name, comm) != 0)
            return;
    }
    if (getenv("FILES_KILL_FROM_CHILD")) {
        /* The raw system call, not fork(): no atfork handler runs (fnprof's own, inside
         * its exit dump, would wait for a lock this very thread holds). */
        pid_t pid = (pid_t)syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
        if (pid == 0) {
            kill(getppid(), atoi(sig));
            _exit(0);
        }
        if (pid > 0)
            waitpid(pid, NULL, 0);
        return;
    }
    for (int n = count ? atoi(count) : 1; n > 0; n--)
        raise(atoi(sig));
}

int rename(const char *from, const char *to)
{
    maybe_die(from);
    int (*real)(const char *, const char *) =
        (int (*)(const char *, const char *))dlsym(RTLD_NEXT, "rename");
    return real(from, to);
}

int renameat(int fromfd, const char *from, int tofd, const char *to)
{
    maybe_die(from);
    int (*real)(int, const char *, int, const char *) =
        (int (*)(int, const char *, int, const char *))dlsym(RTLD_NEXT, "renameat");
    return real(fromfd, from, tofd, to);
}
/* SPDX-License-Identifier: MIT */
