// C++ exceptions thrown through patched frames: their exits never run, and the catch cuts
// the shadow stack (interpose.c); recursion between throw and catch, a rethrow, and a catch
// in a function that goes on calling.
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "rt_common.h"

static volatile long sink;

NOINLINE int thrower(int n)
{
    if (n % 3 == 0)
        throw std::runtime_error("three");
    int r = n;
    KEEP(r);
    return r;
}

NOINLINE int deep(int n, int k)
{
    if (k == 0) {
        int r = thrower(n);
        KEEP(r);
        return r;
    }
    int r = deep(n, k - 1);
    KEEP(r);
    return r + 1;
}

NOINLINE int rethrow(int n)
{
    try {
        int r = deep(n, n % 4);
        KEEP(r);
        return r;
    } catch (const std::runtime_error &) {
        sink += 1;
        throw;
    }
}

NOINLINE int after(int n)
{
    int r = n * 2;
    KEEP(r);
    return r;
}

NOINLINE int catcher(int n)
{
    int s = 0;
    try {
        s += rethrow(n);
    } catch (const std::exception &) {
        s += after(n);
    }
    s += after(s);
    KEEP(s);
    return s;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? std::atoi(argv[1]) : 300;
    long s = 0;
    for (int i = 0; i < n; i++)
        s += catcher(i);
    sink += s;
    std::printf("%ld\n", (long)sink);
    return 0;
}
// SPDX-License-Identifier: MIT
