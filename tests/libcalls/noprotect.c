/* A system that refuses to make memory writable again (run_libcalls_test.py refused):
 * preloaded after libfnprof.so, its mprotect answers EACCES to any request for write
 * access and passes the others on. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <sys/mman.h>

int mprotect(void *addr, size_t len, int prot)
{
    if (prot & PROT_WRITE) {
        errno = EACCES;
        return -1;
    }
    int (*real)(void *, size_t, int) = (int (*)(void *, size_t, int))dlsym(RTLD_NEXT, "mprotect");
    return real(addr, len, prot);
}
/* SPDX-License-Identifier: MIT */
