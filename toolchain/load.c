/* SPDX-License-Identifier: MIT */
/*
 * Reading profiles from files for the subcommands: the whole file into memory, then
 * fnp_pstats_read, with errors turned into the command's one-line messages.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "profile.h"

/* Reads fd to its end into a malloc'd buffer, NUL-terminated. st_size is only a hint: /proc files
 * and pipes say 0. Stops one byte past the reader's limit, so that the reader says why. */
static int read_all(int fd, const struct stat *st, char **out, size_t *len)
{
    size_t cap = st->st_size > 0 && (uint64_t)st->st_size <= FNP_MARSHAL_MAX_INPUT
                     ? (size_t)st->st_size + 1
                     : 64 * 1024;
    size_t n = 0;
    char *buf = malloc(cap);
    if (!buf)
        return -ENOMEM;
    for (;;) {
        if (n == cap) {
            if (cap > FNP_MARSHAL_MAX_INPUT)
                break;
            char *b = realloc(buf, cap * 2);
            if (!b) {
                free(buf);
                return -ENOMEM;
            }
            buf = b;
            cap *= 2;
        }
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            int rc = -errno;
            free(buf);
            return rc;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    if (n == cap) { /* room for the NUL the /proc readers want */
        char *b = realloc(buf, cap + 1);
        if (!b) {
            free(buf);
            return -ENOMEM;
        }
        buf = b;
    }
    buf[n] = 0;
    *out = buf;
    *len = n;
    return 0;
}

int fnp_cli_slurp(const char *path, char **data, size_t *len, struct stat *st)
{
    struct stat sb;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    int rc = fstat(fd, &sb) ? -errno : 0;
    /* read(2) on a directory fails with EISDIR anyway; saying so first is clearer. */
    if (!rc && S_ISDIR(sb.st_mode))
        rc = -EISDIR;
    if (!rc && S_ISREG(sb.st_mode) && (uint64_t)sb.st_size > FNP_MARSHAL_MAX_INPUT)
        rc = -EFBIG;
    if (!rc)
        rc = read_all(fd, &sb, data, len ? len : &(size_t){0});
    close(fd);
    if (!rc && st)
        *st = sb;
    return rc;
}

int fnp_cli_read_file(const char *cmd, const char *path, char **data, size_t *len, struct stat *st)
{
    int rc = fnp_cli_slurp(path, data, len, st);
    if (rc) {
        fnp_cli_error(cmd, "%s: %s", path, strerror(-rc));
        return -1;
    }
    return 0;
}

int fnp_cli_load(const char *cmd, const char *path, struct fnp_profile *p, struct stat *st)
{
    struct stat sb;
    char *data = NULL;
    size_t len = 0;
    if (fnp_cli_read_file(cmd, path, &data, &len, &sb))
        return -1;
    char why[512];
    int rc;
    rc = fnp_pstats_read(p, data, len, why, sizeof(why));
    free(data);
    if (rc == -ENOMEM || rc == -EFBIG) {
        fnp_cli_error(cmd, "%s: %s", path, strerror(-rc));
        return -1;
    }
    if (rc) {
        fnp_cli_error(cmd, "%s: not a valid pstats file: %s", path, why);
        return -1;
    }
    if (st)
        *st = sb;
    return 0;
}

int fnp_cli_same_kind(const char *cmd, const char *a_path, const struct fnp_profile *a,
                      const char *b_path, const struct fnp_profile *b)
{
    const char *ka = fnp_profile_meta(a, "profile"), *kb = fnp_profile_meta(b, "profile");
    int a_mem = ka && strcmp(ka, "memory") == 0, b_mem = kb && strcmp(kb, "memory") == 0;
    if (a_mem == b_mem)
        return 0;
    fnp_cli_error(cmd, "%s is a %s profile and %s a %s one: bytes and seconds do not add up",
                  a_path, a_mem ? "memory" : "timing", b_path, b_mem ? "memory" : "timing");
    return -1;
}

struct bytes {
    const void *data;
    size_t len;
};

static int write_bytes(struct fnp_sink *s, void *ctx)
{
    const struct bytes *b = ctx;
    fnp_sink_write(s, b->data, b->len);
    return s->err;
}

int fnp_cli_write_file(const char *path, const void *data, size_t len)
{
    struct bytes b = {data, len};
    return fnp_write_file_atomic(path, write_bytes, &b);
}
