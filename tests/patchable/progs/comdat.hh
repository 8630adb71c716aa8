/* Inline and template functions both TUs emit: COMDAT groups folded at the link. */
#include <string>

inline __attribute__((noinline)) int shared_inline(int x)
{
    /* Sections switched and back, as some headers' asm macros do: the sites after it are in
     * this function's COMDAT group only if fnprof-as follows every kind of switch. */
    __asm__ volatile(".pushsection .rodata.comdat_note, \"a\", @progbits\n\t"
                     ".popsection\n\t"
                     ".section .rodata.comdat_note, \"a\", @progbits\n\t"
                     ".previous");
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
