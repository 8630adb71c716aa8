/* The program's environment changed while fnprof's system() or popen() runs: another
 * thread's setenv of a variable the program has, its unsetenv and putenv, while the
 * command runs (it tells the thread through one pipe, waits on another); or clearenv()
 * before the call (a NULL environ). Prints what the program then sees.
 * Usage: env_during_system system|popen|clearenv (popen: by hand; racy, see exec.c) */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;
static int go[2], done[2];

static void *other(void *arg)
{
    char c;
    (void)arg;
    if (read(go[0], &c, 1) != 1)
        return NULL;
    setenv("KEEP", "new", 1);
    unsetenv("GONE");
    putenv("PUT=new");
    if (write(done[1], "x\n", 2) != 2)
        return NULL;
    return NULL;
}

static const char *show(const char *name)
{
    const char *v = getenv(name);
    return v ? v : "(unset)";
}

int main(int argc, char **argv)
{
    const char *how = argc > 1 ? argv[1] : "system";
    if (strcmp(how, "clearenv") == 0) {
        clearenv();
        int rc = system("true");
        printf("rc=%d environ=%s PROF_OWNER=%s\n", rc, environ ? "set" : "NULL",
               show("PROF_OWNER"));
        return 0;
    }
    setenv("KEEP", "old", 1);
    setenv("GONE", "here", 1);
    putenv("PUT=old");
    if (pipe(go) || pipe(done))
        return 2;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "echo >&%d; read x <&%d", go[1], done[0]);
    pthread_t t;
    pthread_create(&t, NULL, other, NULL);
    int rc;
    if (strcmp(how, "popen") == 0) {
        /* popen returns at once: the thread changes environ while it starts the shell or
         * after; either way the change must stay. */
        FILE *f = popen(cmd, "r");
        rc = f ? pclose(f) : -1;
    } else {
        rc = system(cmd);
    }
    pthread_join(t, NULL);
    printf("rc=%d KEEP=%s GONE=%s PUT=%s PROF_OWNER=%s\n", rc, show("KEEP"), show("GONE"),
           show("PUT"), show("PROF_OWNER"));
    return 0;
}
/* SPDX-License-Identifier: MIT */
