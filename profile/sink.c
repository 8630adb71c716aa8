/* SPDX-License-Identifier: MIT */
/*
 * Sinks: where writers put bytes. A file sink buffers and writes with write(2) only, so the
 * runtime's exit path never touches the host's stdio; a memory sink serves tests and the
 * command. Errors are sticky: a writer checks once, at the end.
 *
 * Files: fnp_write_file_atomic is the one way fnprof writes a file, the runtime's and the
 * command's (docs/output-files.md): a regular file whole or not at all, a FIFO or device in
 * place, never renamed over, and never a signal's death in the middle.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
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

void fnp_sink_reserve(struct fnp_sink *s, size_t step)
{
    s->reserve_step = s->fresh && s->fd >= 0 ? step : 0;
}

/* The blocks for the buffered bytes, and step more, allocated (fnp_sink_reserve). */
static void reserve(struct fnp_sink *s)
{
    uint64_t end = s->total; /* the file's size once the buffer is written */
    if (end <= s->reserved)
        return;
    uint64_t want = end + s->reserve_step - s->reserved;
    if (fallocate(s->fd, FALLOC_FL_KEEP_SIZE, (off_t)s->reserved, (off_t)want) != 0) {
        s->reserve_step = 0; /* not here (EOPNOTSUPP), or the disk is full: write() says */
        return;
    }
    s->reserved += want;
}

int fnp_sink_flush(struct fnp_sink *s)
{
    if (s->fd >= 0 && !s->err && s->len) {
        if (s->reserve_step)
            reserve(s);
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

/* ---- files: fnp_write_file_atomic and the temporaries it makes --------------------- */

#define TEMP_SUFFIX ".fnprof-XXXXXX"

/* The temporary being filled, for fnp_write_file_abandon (a signal handler): claimed by
 * one writer at a time (a second one, in another thread, goes unregistered), named once
 * the file exists, dropped after the rename or the unlink. */
static int active_claim;
static volatile sig_atomic_t active_ready;
static int active_dirfd = -1;
static char active_name[NAME_MAX + 1];

static int remember(int dirfd, const char *name)
{
    int free_slot = 0;
    if (strlen(name) >= sizeof(active_name) ||
        !__atomic_compare_exchange_n(&active_claim, &free_slot, 1, 0, __ATOMIC_ACQUIRE,
                                     __ATOMIC_RELAXED))
        return 0;
    strcpy(active_name, name);
    active_dirfd = dirfd;
    atomic_signal_fence(memory_order_seq_cst);
    active_ready = 1;
    return 1;
}

static void forget(int claimed)
{
    if (!claimed)
        return;
    active_ready = 0;
    atomic_signal_fence(memory_order_seq_cst);
    __atomic_store_n(&active_claim, 0, __ATOMIC_RELEASE);
}

void fnp_write_file_abandon(void)
{
    if (active_ready) {
        atomic_signal_fence(memory_order_seq_cst);
        unlinkat(active_dirfd, active_name, 0);
    }
}

static const char temp_chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/* Six letters nobody can guess into x: getrandom's, or when the kernel has none to give
 * without waiting, a mix of the clock, the pid and a counter. Async-signal-safe. */
static void temp_letters(char *x)
{
    static unsigned counter;
    unsigned char r[6];
    if (syscall(SYS_getrandom, r, sizeof(r), GRND_NONBLOCK) != (long)sizeof(r)) {
        struct timespec ts = {0, 0};
        clock_gettime(CLOCK_MONOTONIC, &ts);
        uint64_t v = ((uint64_t)ts.tv_sec << 30) ^ (uint64_t)ts.tv_nsec ^
                     ((uint64_t)getpid() << 40) ^ __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED);
        for (size_t i = 0; i < sizeof(r); i++) {
            v = (v ^ (v >> 29)) * 0xbf58476d1ce4e5b9ull; /* splitmix64's finaliser */
            r[i] = (unsigned char)(v >> 56);
        }
    }
    for (size_t i = 0; i < sizeof(r); i++)
        x[i] = temp_chars[r[i] % (sizeof(temp_chars) - 1)];
}

int fnp_file_create_temp(int dirfd, char *name)
{
    size_t n = strlen(name);
    if (n < 6)
        return -EINVAL;
    /* O_EXCL refuses any name that exists, a planted symlink included (O_NOFOLLOW says
     * so twice); a taken name only costs another draw. */
    for (int tries = 0; tries < 100; tries++) {
        temp_letters(name + n - 6);
        int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd >= 0)
            return fd;
        if (errno != EEXIST)
            return -errno;
    }
    return -EEXIST;
}

/* The write guard (profile.h): why, there. */
static const int guarded[] = {SIGXFSZ, SIGPIPE};

void fnp_write_guard_begin(struct fnp_write_guard *g)
{
    sigset_t set;
    sigemptyset(&set);
    for (size_t i = 0; i < sizeof(guarded) / sizeof(guarded[0]); i++)
        sigaddset(&set, guarded[i]);
    sigemptyset(&g->pending_before);
    sigpending(&g->pending_before);
    g->on = pthread_sigmask(SIG_BLOCK, &set, &g->old) == 0;
}

void fnp_write_guard_end(struct fnp_write_guard *g)
{
    if (!g->on)
        return;
    sigset_t now;
    unsigned resend = 0;
    sigemptyset(&now);
    sigpending(&now);
    for (size_t i = 0; i < sizeof(guarded) / sizeof(guarded[0]); i++) {
        int sig = guarded[i];
        if (!sigismember(&now, sig) || sigismember(&g->pending_before, sig))
            continue;
        sigset_t one;
        sigemptyset(&one);
        sigaddset(&one, sig);
        struct timespec zero = {0, 0};
        siginfo_t info;
        int got;
        while ((got = sigtimedwait(&one, &info, &zero)) < 0 && errno == EINTR)
            ;
        /* The writes' own (a write past the limit, or into a pipe nobody reads: the kernel
         * sends it as SI_USER from this very process) is dropped. One another process sent
         * (kill: SI_USER from another pid), or a thread raised (tgkill, sigqueue), during
         * the writes is the program's business: it is sent again, to arrive once the mask
         * is restored. (A kill(getpid(), ...) in that moment looks like the writes' own.) */
        if (got == sig && (info.si_code != SI_USER || info.si_pid != getpid()))
            resend |= 1u << i;
    }
    pthread_sigmask(SIG_SETMASK, &g->old, NULL);
    for (size_t i = 0; i < sizeof(guarded) / sizeof(guarded[0]); i++)
        if (resend & (1u << i))
            raise(guarded[i]);
}

/* The writer's bytes into fd, through a sink; fd stays open. fresh: fd is a new regular
 * file (fnp_sink_reserve may allocate past its end: given back here). */
static int fill(int fd, int fresh, fnp_write_fn write_fn, void *ctx)
{
    struct fnp_sink s;
    int rc = fnp_sink_fd(&s, fd);
    if (!rc) {
        s.fresh = fresh;
        rc = write_fn(&s, ctx);
        if (!rc)
            rc = fnp_sink_flush(&s);
        if (!rc && s.reserved > s.total && ftruncate(fd, (off_t)s.total) != 0)
            rc = -errno;
        fnp_sink_free(&s);
    }
    return rc;
}

static int same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* Whether name in dirfd may be renamed over: nothing there, or a regular file (expect,
 * when set: that very file). 0 or a negative errno. */
static int renamable(int dirfd, const char *name, const struct stat *expect)
{
    struct stat st;
    if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        return errno != ENOENT ? -errno : expect ? -ESTALE : 0;
    if (!S_ISREG(st.st_mode))
        return -EEXIST; /* a FIFO, device or symlink put there while we wrote */
    return expect && !same_file(&st, expect) ? -ESTALE : 0;
}

/* The folder path names its file in ("." or "/" included); malloc'd, NULL when out of
 * memory. */
static char *folder_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

/* path written whole or not at all: a new file beside it, renamed over it at the end.
 * The folder is held open, so the checks, the new file and the rename all happen in the
 * one folder even if a path component is swapped meanwhile. */
static int replace(const char *path, const struct stat *expect, fnp_write_fn write_fn, void *ctx)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    if (!*base)
        return -EISDIR;
    size_t blen = strlen(base);
    char *dir = folder_of(path), *tmp = malloc(blen + sizeof(TEMP_SUFFIX));
    if (!dir || !tmp) {
        free(dir);
        free(tmp);
        return -ENOMEM;
    }
    memcpy(tmp, base, blen);
    memcpy(tmp + blen, TEMP_SUFFIX, sizeof(TEMP_SUFFIX));

    int dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    int rc = dirfd < 0 ? -errno : 0;
    if (!rc)
        rc = renamable(dirfd, base, expect);
    int fd = rc ? -1 : fnp_file_create_temp(dirfd, tmp);
    if (!rc && fd < 0)
        rc = fd;
    int claimed = 0;
    if (fd >= 0) {
        claimed = remember(dirfd, tmp);
        rc = fill(fd, 1, write_fn, ctx);
        if (close(fd) != 0 && !rc)
            rc = -errno;
        if (!rc)
            rc = renamable(dirfd, base, expect);
        if (!rc && renameat(dirfd, tmp, dirfd, base) != 0)
            rc = -errno;
        if (rc)
            unlinkat(dirfd, tmp, 0);
    }
    forget(claimed);
    if (dirfd >= 0)
        close(dirfd);
    free(dir);
    free(tmp);
    return rc;
}

/* fd 1 or 2 when st is the regular file open there (the program's or the command's own
 * standard output or error), else -1. */
static int own_stdio(const struct stat *st)
{
    for (int fd = 1; fd <= 2; fd++) {
        struct stat o;
        if (fstat(fd, &o) == 0 && S_ISREG(o.st_mode) && same_file(&o, st))
            return fd;
    }
    return -1;
}

/* The path of the file open at fd, as the kernel resolved it (symlinks, /proc/self/fd);
 * realpath's when /proc is not mounted. */
static char *resolved(int fd, const char *path)
{
    char link[64], *buf = malloc(PATH_MAX);
    if (!buf)
        return NULL;
    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, buf, PATH_MAX - 1);
    if (n > 0 && buf[0] == '/') {
        buf[n] = 0;
        return buf;
    }
    free(buf);
    return realpath(path, NULL);
}

/* The kernel's protected_symlinks rule, kept where that sysctl is off: in a sticky folder
 * others may write to (/tmp), anyone could have planted the symlink link (lstat's st), so
 * it is followed only if it is ours or the folder owner's. */
static int planted(const char *path, const struct stat *link)
{
    if (link->st_uid == geteuid())
        return 0;
    char *dir = folder_of(path);
    struct stat d;
    int rc = dir && stat(dir, &d) == 0 && (d.st_mode & S_ISVTX) && (d.st_mode & S_IWOTH) &&
             link->st_uid != d.st_uid;
    free(dir);
    return rc;
}

/* Something other than a regular file is at path (lst, its lstat): a symlink, a FIFO, a
 * device. It is opened as open(2) opens (the kernel follows symlinks), never created and
 * never truncated, and without waiting for a FIFO's reader. */
static int write_through(const char *path, const struct stat *lst, fnp_write_fn write_fn, void *ctx)
{
    int is_link = S_ISLNK(lst->st_mode);
    if (is_link && planted(path, lst))
        return -EACCES;
    int fd = open(path, O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT && is_link ? -ENOLINK : -errno;
    struct stat st;
    int rc = fstat(fd, &st) != 0 ? -errno : 0;
    if (!rc && (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode))) {
        /* In place, blocking again: a slow reader is waited for, an absent one was not. */
        int fl = fcntl(fd, F_GETFL);
        if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0)
            rc = -errno;
        if (!rc)
            rc = fill(fd, 0, write_fn, ctx);
        if (close(fd) != 0 && !rc && errno != EINTR)
            rc = -errno;
        return rc;
    }
    if (!rc && S_ISREG(st.st_mode)) {
        /* A symlink to a regular file. */
        int std = own_stdio(&st);
        char *real = std < 0 ? resolved(fd, path) : NULL;
        int err = errno;
        close(fd);
        if (std >= 0)
            return fill(std, 0, write_fn, ctx);
        if (!real)
            return -err;
        rc = replace(real, &st, write_fn, ctx);
        free(real);
        return rc;
    }
    close(fd);
    return rc ? rc : -ENOTSUP;
}

int fnp_write_file_atomic(const char *path, fnp_write_fn write_fn, void *ctx)
{
    struct fnp_write_guard g;
    fnp_write_guard_begin(&g);
    struct stat st;
    int rc;
    if (lstat(path, &st) == 0)
        rc = S_ISREG(st.st_mode) ? replace(path, NULL, write_fn, ctx)
                                 : write_through(path, &st, write_fn, ctx);
    else
        rc = errno == ENOENT ? replace(path, NULL, write_fn, ctx) : -errno;
    fnp_write_guard_end(&g);
    return rc;
}

const char *fnp_write_file_strerror(int rc)
{
    switch (-rc) {
    case ENXIO:
        return "no reader, or no such device (fnprof does not wait for a FIFO's reader)";
    case ENOLINK:
        return "a symlink to nothing (fnprof does not create what it points at)";
    case ENOTSUP:
        return "neither a regular file, a FIFO nor a character device";
    default:
        return strerror(-rc);
    }
}
