/* SPDX-License-Identifier: MIT */
/*
 * Where a program named on the command line is: the one lookup of run (which MPI it
 * links), doctor (the file it reads) and convert (graphviz's dot).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

int fnp_cli_which(const char *prog, char *out)
{
    if (strchr(prog, '/'))
        return realpath(prog, out) ? 0 : -errno;
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    for (const char *d = path;;) {
        /* an empty entry is the working directory, as execvp takes it */
        size_t dl = strcspn(d, ":");
        char cand[PATH_MAX];
        if (snprintf(cand, sizeof cand, "%.*s%s%s", (int)dl, d, dl ? "/" : "", prog) <
                (int)sizeof cand &&
            access(cand, X_OK) == 0 && realpath(cand, out)) {
            struct stat st;
            if (stat(out, &st) == 0 && S_ISREG(st.st_mode))
                return 0;
        }
        if (!d[dl])
            break;
        d += dl + 1;
    }
    return -ENOENT;
}
