/* Whether the program's code was ever written: the Anonymous kilobytes of its own
 * executable mappings (/proc/self/smaps), printed after some patchable calls. A page that
 * was patched is a private copy, anonymous memory; one never written is the file's page
 * (whose Private_Dirty may count while the page cache has not written a new file back).
 * "resume" as argv[1] calls fnprof_resume() first (PROF_START=paused writes nothing until
 * then). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fnprof.h"
#include "rt_common.h"

NOINLINE long work(int n)
{
    long r = n < 2 ? n : work(n - 1) + 1;
    KEEP(r);
    return r;
}

NOINLINE long code_copied_kb(void)
{
    char exe[4096];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (k <= 0)
        return -1;
    exe[k] = 0;
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f)
        return -1;
    char line[4608];
    int in_code = 0;
    long copied = 0;
    while (fgets(line, sizeof(line), f)) {
        unsigned long lo, hi;
        char perms[8];
        int at = 0;
        long kb;
        if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %n", &lo, &hi, perms, &at) == 3 && at > 0) {
            line[strcspn(line, "\n")] = 0;
            in_code = perms[2] == 'x' && strcmp(line + at, exe) == 0;
        } else if (in_code && sscanf(line, "Anonymous: %ld kB", &kb) == 1) {
            copied += kb;
        }
    }
    fclose(f);
    return copied;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "resume") == 0)
        fnprof_resume();
    long r = work(50);
    KEEP(r);
    printf("code_copied_kb=%ld\n", code_copied_kb());
    return 0;
}
/* SPDX-License-Identifier: MIT */
