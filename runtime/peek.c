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

#define FNP_EARLY                                                                                  \
    __attribute__((no_instrument_function, no_stack_protector,                                     \
                   no_sanitize("address", "thread", "undefined")))

static FNP_EARLY long raw3(long nr, long a, long b, long c)
{
    long ret;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(nr), "D"(a), "S"(b), "d"(c)
                     : "rcx", "r11", "memory");
    return ret;
}

FNP_EARLY int fnp_peek_output(void)
{
    static const char name[] = "PROF_OUTPUT=";
    long fd = raw3(SYS_open, (long)"/proc/self/environ", O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    /* matched: characters of name matched at the start of the current entry, or -1 when
     * this entry is another variable; at sizeof(name) - 1 the value's first byte decides */
    int matched = 0, found = 0;
    char buf[512];
    long got;
    while (!found && (got = raw3(SYS_read, fd, (long)buf, sizeof(buf))) > 0) {
        for (long i = 0; i < got && !found; i++) {
            char c = buf[i];
            if (matched == (int)sizeof(name) - 1)
                found = c != '\0';
            if (c == '\0')
                matched = 0;
            else if (matched >= 0 && matched < (int)sizeof(name) - 1)
                matched = c == name[matched] ? matched + 1 : -1;
        }
    }
    raw3(SYS_close, fd, 0, 0);
    return got < 0 && !found ? -1 : found;
}

#endif
