/* Forks CHILDREN children, all running at once, then waits for them. Each child calls
 * known functions after the fork and ends with exit(0) from inside spawn() ("exit", the
 * default), or by returning from main ("return"). A child prints nothing: stdout is the
 * parent's alone. Expected (run_robust.py, case "fork"): the parent's profile holds the
 * parent's calls only; each child's holds what it did after the fork, the frames open at
 * the fork (main, spawn) counted as one call each. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHILDREN 100

static int return_variant;

int child_leaf(int x)
{
    return x + 7;
}

int child_work(int i)
{
    int r = 0;
    for (int k = 0; k < 3; k++)
        r += child_leaf(i + k);
    return r;
}

int child_main(int i)
{
    return child_work(i) == 3 * i + 24 ? 0 : 1;
}

int parent_work(int i)
{
    return i % 3;
}

/* 0 in a child that must go on (return variant), else the child's pid. */
pid_t spawn(int i)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        exit(1);
    }
    if (pid == 0 && !return_variant)
        exit(child_work(i) == 3 * i + 24 ? 0 : 1);
    return pid;
}

int wait_all(void)
{
    int ok = 0, status;
    while (wait(&status) > 0)
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
            ok++;
    return ok;
}

int main(int argc, char **argv)
{
    return_variant = argc > 1 && strcmp(argv[1], "return") == 0;
    printf("forking %d children (%s)\n", CHILDREN, return_variant ? "return" : "exit");
    int sum = 0;
    for (int i = 0; i < CHILDREN; i++) {
        if (spawn(i) == 0)
            return child_main(i);
        sum += parent_work(i);
    }
    int ok = wait_all();
    printf("children ok: %d, parent sum %d\n", ok, sum);
    return ok == CHILDREN ? 0 : 1;
}
/* SPDX-License-Identifier: MIT */
