/* SPDX-License-Identifier: MIT */
/*
 * Sinks: where writers put bytes. A file sink buffers and writes with write(2) only, so the
 * runtime's exit path never touches the host's stdio; a memory sink serves tests and the
 * command. Errors are sticky: a writer checks once, at the end.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "profile.h"

#define FILE_BUFFER (64 * 1024)

void fnp_sink_memory(struct fnp_sink *s)
{
    memset(s, 0, sizeof(*s));
    s->fd = -1;
}

int fnp_sink_fd(struct fnp_sink *s, int fd)
{
    memset(s, 0, sizeof(*s));
    s->fd = fd;
    s->buf = malloc(FILE_BUFFER);
    if (!s->buf)
        return s->err = -ENOMEM;
    s->cap = FILE_BUFFER;
    return 0;
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (w == 0)
            return -EIO;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int fnp_sink_flush(struct fnp_sink *s)
{
    if (s->fd >= 0 && !s->err && s->len) {
        s->err = write_all(s->fd, s->buf, s->len);
        s->len = 0;
    }
    return s->err;
}

void fnp_sink_write(struct fnp_sink *s, const void *data, size_t n)
{
    if (s->err || !n)
        return; /* n == 0: a memory sink may have no buffer yet */
    s->total += n;
    if (s->checksum)
        s->crc = fnp_crc32(s->crc, data, n);
    if (s->fd >= 0) {
        if (s->len + n > s->cap && fnp_sink_flush(s))
            return;
        if (n > s->cap) {
            s->err = write_all(s->fd, data, n);
            return;
        }
    } else if (s->len + n > s->cap) {
        size_t cap = s->cap ? s->cap : 4096;
        while (cap < s->len + n)
            cap *= 2;
        char *b = realloc(s->buf, cap);
        if (!b) {
            s->err = -ENOMEM;
            return;
        }
        s->buf = b;
        s->cap = cap;
    }
    memcpy(s->buf + s->len, data, n);
    s->len += n;
}

void fnp_sink_puts(struct fnp_sink *s, const char *str)
{
    fnp_sink_write(s, str, strlen(str));
}

void fnp_sink_printf(struct fnp_sink *s, const char *fmt, ...)
{
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof(small), fmt, ap);
    va_end(ap);
    if (n < 0) {
        if (!s->err)
            s->err = -EINVAL;
        return;
    }
    if ((size_t)n < sizeof(small)) {
        fnp_sink_write(s, small, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (!big) {
        if (!s->err)
            s->err = -ENOMEM;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    fnp_sink_write(s, big, (size_t)n);
    free(big);
}

void fnp_sink_free(struct fnp_sink *s)
{
    if (!s)
        return;
    free(s->buf);
    s->buf = NULL;
    s->len = s->cap = 0;
}

int fnp_write_file_atomic(const char *path, fnp_write_fn write_fn, void *ctx)
{
    size_t n = strlen(path);
    char *tmp = malloc(n + sizeof(".fnprof-XXXXXX"));
    if (!tmp)
        return -ENOMEM;
    memcpy(tmp, path, n);
    memcpy(tmp + n, ".fnprof-XXXXXX", sizeof(".fnprof-XXXXXX"));
    /* O_CLOEXEC: the exit path may run while other threads fork and exec. */
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0) {
        int rc = -errno;
        free(tmp);
        return rc;
    }
    /* mkstemp creates 0600; a profile is an ordinary output file, as open(2) makes them. */
    mode_t mask = umask(0);
    umask(mask);
    int rc = fchmod(fd, 0666 & ~mask) ? -errno : 0;

    struct fnp_sink s;
    if (!rc)
        rc = fnp_sink_fd(&s, fd);
    if (!rc) {
        rc = write_fn(&s, ctx);
        if (!rc)
            rc = fnp_sink_flush(&s);
        fnp_sink_free(&s);
    }
    if (close(fd) && !rc)
        rc = -errno;
    if (!rc && rename(tmp, path))
        rc = -errno;
    if (rc)
        unlink(tmp);
    free(tmp);
    return rc;
}
