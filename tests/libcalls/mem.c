/* PROF_MEMORY with PROF_LIBCALLS (run_libcalls_test.py memory): f_alloc's blocks come from
 * fnprof's allocator wrappers, which stay unhooked; f_dup's comes from inside strdup, a
 * library call, and is charged to it. No stdio: its buffer would be one more block. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *keep[2];

void f_alloc(void)
{
    void *a = malloc(100);
    keep[0] = malloc(200);
    free(a);
}

void f_dup(void)
{
    keep[1] = strdup("hello");
}

int main(void)
{
    f_alloc();
    f_dup();
    return write(1, "", 0) < 0;
}
/* SPDX-License-Identifier: MIT */
