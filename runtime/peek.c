/* SPDX-License-Identifier: MIT */
/*
 * Whether PROF_OUTPUT is set, asked before anything else in the process runs: by the
 * hooks' ifunc resolvers (hooks.c), which the dynamic loader calls while it relocates the
 * program, or glibc's static start-up before TLS exists. Neither getenv (libc's environ
 * is not set yet then) nor errno (TLS) may be used, nor a stack protector's canary (TLS),
 * nor a sanitizer's runtime (not started): raw system calls on /proc/self/environ, which
 * holds the environment the process was started with.
 */
#include <fcntl.h>
#include <sys/syscall.h>

#include "runtime.h"

#if FNP_HAVE_IFUNC

static FNP_EARLY long raw3(long nr, long a, long b, long c)
{
    long ret;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(nr), "D"(a), "S"(b), "d"(c)
                     : "rcx", "r11", "memory");
    return ret;
}

/* Whether an entry (its first bytes head, len bytes in all) is prefix, n characters, with
 * a value after it (whole: with nothing after it). */
static FNP_EARLY int is(const char *head, long len, const char *prefix, long n, int whole)
{
    long i = 0;
    while (i < n && i < len && head[i] == prefix[i])
        i++;
    return i == n && (whole ? len == n : len > n);
}

#define IS(prefix, whole) is(head, len, prefix, (long)sizeof(prefix) - 1, whole)

/* Sets *seen from one whole environment entry: its first bytes (up to sizeof(head)) and
 * its full length. A variable counts when set and not empty; PROF_TIMER as "none" only. */
static FNP_EARLY void judge(const char *head, long len, int *seen)
{
    if (IS("PROF_OUTPUT=", 0))
        *seen |= FNP_PEEK_OUTPUT;
    if (IS("PROF_TIMER=none", 1))
        *seen |= FNP_PEEK_COUNT;
    if (IS("PROF_TRACE=", 0))
        *seen |= FNP_PEEK_TRACE;
    if (IS("PROF_FILTER=", 0))
        *seen |= FNP_PEEK_FILTER;
    if (IS("PROF_MEMORY=", 0))
        *seen |= FNP_PEEK_MEMORY;
    if (IS("PROF_COMPENSATE=1", 1))
        *seen |= FNP_PEEK_COMPENSATE;
}

FNP_EARLY int fnp_peek(void)
{
    long fd = raw3(SYS_open, (long)"/proc/self/environ", O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    char buf[512], head[24]; /* longer than the longest name judge() looks for */
    long got, len = 0;       /* the current entry's length so far; head holds its first bytes */
    int seen = 0;
    while ((got = raw3(SYS_read, fd, (long)buf, sizeof(buf))) > 0) {
        for (long i = 0; i < got; i++) {
            if (buf[i] == '\0') {
                judge(head, len, &seen);
                len = 0;
                continue;
            }
            if (len < (long)sizeof(head))
                head[len] = buf[i];
            len++;
        }
    }
    raw3(SYS_close, fd, 0, 0);
    if (got < 0)
        return -1;
    if (len > 0) /* no NUL after the last entry */
        judge(head, len, &seen);
    if ((seen & FNP_PEEK_MEMORY) && !(seen & FNP_PEEK_OUTPUT))
        seen |= FNP_PEEK_OUTPUT | FNP_PEEK_COUNT;
    return seen;
}

#endif
