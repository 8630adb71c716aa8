/* SPDX-License-Identifier: MIT */
/* The runtime's only voice: one line on stderr, prefixed "fnprof: ", in one write(2) so
 * it never interleaves with the host's output mid-line and never touches its stdio. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "runtime.h"

void fnp_log(const char *fmt, ...)
{
    int saved = errno;
    char line[512] = "fnprof: ";
    size_t n = 8;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
    va_end(ap);
    if (w < 0)
        w = 0;
    n += (size_t)w < sizeof(line) - n - 1 ? (size_t)w : sizeof(line) - n - 2;
    line[n++] = '\n';
    ssize_t rc = write(2, line, n);
    (void)rc;
    errno = saved;
}
