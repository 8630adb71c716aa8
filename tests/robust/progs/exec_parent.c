/* Runs exec_child, an instrumented program, with system() (argv[1] "system") or fork and
 * execv ("execv"); argv[2] is its path. The child inherits PROF_OUTPUT. Expected
 * (run_robust.py, case "exec"): PROF_OUTPUT holds the parent's calls alone, and
 * PROF_OUTPUT.<child pid> the child's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int before(int x)
{
    return x * 2;
}

int after(int x)
{
    return x + 5;
}

int run_child(const char *how, char *path)
{
    fflush(stdout);
    if (strcmp(how, "system") == 0) {
        int status = system(path);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
    }
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        exit(1);
    }
    if (pid == 0) {
        char *args[] = {path, NULL};
        execv(path, args);
        perror("execv");
        _exit(127);
    }
    int status;
    if (waitpid(pid, &status, 0) != pid)
        return 128;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    int sum = before(1) + before(2);
    int status = run_child(argv[1], argv[2]);
    for (int i = 0; i < 3; i++)
        sum += after(i);
    printf("parent: child exited %d, sum %d\n", status, sum);
    return 0;
}
/* SPDX-License-Identifier: MIT */
