/* SPDX-License-Identifier: MIT */
/* Where the runtime is, seen from the running command (libdir.h). */
#include "libdir.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef FNPROF_REL_LIBDIR
#error "the build passes FNPROF_REL_LIBDIR, the path from the bin to the lib directory"
#endif

int fnp_runtime_file(const char *file, char *out, size_t n, char *why, size_t whylen)
{
    return fnp_exe_relative_file(FNPROF_REL_LIBDIR, file, out, n, why, whylen);
}

int fnp_exe_relative_file(const char *rel, const char *file, char *out, size_t n, char *why,
                          size_t whylen)
{
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (len < 0) {
        snprintf(why, whylen, "/proc/self/exe: %s", strerror(errno));
        return -1;
    }
    exe[len] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash)
        *slash = '\0';
    char path[PATH_MAX + 64];
    snprintf(path, sizeof(path), "%s/%s/%s", exe, rel, file);
    char real[PATH_MAX];
    if (!realpath(path, real)) {
        snprintf(why, whylen, "%s: %s", path, strerror(errno));
        return -1;
    }
    snprintf(out, n, "%s", real);
    return 0;
}
