/* SPDX-License-Identifier: MIT */
/*
 * The runtime's only voice: one line on stderr, prefixed "fnprof: ", in one write(2) so
 * it never interleaves with the host's output mid-line and never touches its stdio.
 *
 * fd 2 is the program's: it may close it and open a file of its own there, or have been
 * started with it closed, and its next open then takes it. So fnprof writes to fd 2 only
 * while it is the file it was when the library loaded (its device, inode, type and
 * special device, by fstat); closed at load, it is never written. A line that cannot be
 * written is lost: no other fd is fnprof's to write it to.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime.h"

/* fd 2 at load, written once by note_stderr before anything else of libfnprof runs. */
static struct {
    dev_t dev, rdev;
    ino_t ino;
    mode_t type;
    int open;
} at_load;

/* Before the other constructors of libfnprof (and of a program linked with libfnprof.a),
 * any of which may have something to say. */
__attribute__((constructor(101))) static void note_stderr(void)
{
    struct stat st;
    if (fstat(2, &st) != 0)
        return;
    at_load.dev = st.st_dev;
    at_load.rdev = st.st_rdev;
    at_load.ino = st.st_ino;
    at_load.type = st.st_mode & S_IFMT;
    at_load.open = 1;
}

int fnp_log_fd(void)
{
    struct stat st;
    int saved = errno;
    int ours = at_load.open && fstat(2, &st) == 0 && st.st_dev == at_load.dev &&
               st.st_ino == at_load.ino && (st.st_mode & S_IFMT) == at_load.type &&
               st.st_rdev == at_load.rdev;
    errno = saved;
    return ours ? 2 : -1;
}

void fnp_log(const char *fmt, ...)
{
    int saved = errno;
    int fd = fnp_log_fd();
    if (fd < 0)
        return;
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
    ssize_t rc = write(fd, line, n);
    (void)rc;
    errno = saved;
}
