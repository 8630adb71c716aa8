#include <cstdio>

#include "comdat.hh"

int __attribute__((noinline)) tu2(int x)
{
    return shared_inline(x + 1) + twice(x + 2);
}

int main()
{
    int s = 0;
    for (int i = 0; i < 10; i++)
        s += tu1(i) + tu2(i);
    try {
        shared_inline(1234567);
    } catch (const std::string &e) {
        std::printf("caught %s\n", e.c_str());
    }
    std::printf("%d\n", s);
    return 0;
}
/* SPDX-License-Identifier: MIT */
