/* SPDX-License-Identifier: MIT */
/* fork: the child's memory profile starts at the fork. The parent allocates 1000 bytes in
 * parent_alloc before forking; the child frees that block (not its to count) and
 * allocates 3 x 64 bytes in child_alloc; the parent frees its block after the child ends. */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void *shared_block;

__attribute__((noinline)) void parent_alloc(void)
{
    shared_block = malloc(1000);
}

__attribute__((noinline)) void child_alloc(void)
{
    static void *kept[3];
    for (int i = 0; i < 3; i++)
        kept[i] = malloc(64);
}

int main(void)
{
    parent_alloc();
    pid_t pid = fork();
    if (pid == 0) {
        free(shared_block);
        child_alloc();
        exit(write(1, "child ok\n", 9) != 9); /* exit: destructors write its profile */
    }
    int status = 0;
    waitpid(pid, &status, 0);
    free(shared_block);
    return write(1, "ok\n", 3) != 3 || status != 0;
}
