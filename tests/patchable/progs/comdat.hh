/* Inline and template functions both TUs emit: COMDAT groups folded at the link. */
#include <string>

inline __attribute__((noinline)) int shared_inline(int x)
{
    if (__builtin_expect(x == 1234567, 0))
        throw std::string("rare");
    return x * 3;
}

template <class T> __attribute__((noinline)) T twice(T x)
{
    return x + x;
}

int tu1(int x);
int tu2(int x);
/* SPDX-License-Identifier: MIT */
