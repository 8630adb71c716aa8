/*
 * Prints its environment, one variable a line, as a program that logs it would; with
 * argv[1] "exec", "fork-exec", "spawn", "system" or "popen", it first starts itself (argv[2] is its
 * own path) that way with "print", so that the image started below it prints its own.
 */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static int work(int x)
{
    return x + 1;
}

static void print(const char *who)
{
    for (char **e = environ; *e; e++)
        printf("%s %s\n", who, *e);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    work(1);
    if (argc < 3) {
        print("child");
        return 0;
    }
    print("parent");
    char *args[] = {argv[2], "print", NULL};
    const char *how = argv[1];
    int status = 0;
    if (strcmp(how, "exec") == 0) {
        execv(argv[2], args);
        return 127;
    } else if (strcmp(how, "fork-exec") == 0) {
        pid_t pid = fork();
        if (pid == 0) {
            execv(argv[2], args);
            _exit(127);
        }
        waitpid(pid, &status, 0);
    } else if (strcmp(how, "spawn") == 0) {
        pid_t pid;
        if (posix_spawn(&pid, argv[2], NULL, NULL, args, environ) != 0)
            return 127;
        waitpid(pid, &status, 0);
    } else if (strcmp(how, "system") == 0) {
        char cmd[4200];
        snprintf(cmd, sizeof(cmd), "'%s' print", argv[2]);
        status = system(cmd);
    } else if (strcmp(how, "popen") == 0) {
        char cmd[4200], line[8192];
        snprintf(cmd, sizeof(cmd), "'%s' print", argv[2]);
        FILE *f = popen(cmd, "r");
        if (!f)
            return 127;
        while (fgets(line, sizeof(line), f))
            fputs(line, stdout);
        status = pclose(f);
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
/* SPDX-License-Identifier: MIT */
