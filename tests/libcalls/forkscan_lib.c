/* forkscan.c's libraries. -DSIDE: libside.so, not instrumented, with a function whose
 * symbol is a C++ name (fnprof demangles it when it hooks a call to it). Else
 * libscanned.so, instrumented, which calls it. */
long side(long x) __asm__("_Z4sidel");

#ifdef SIDE
long side(long x)
{
    return x + 1;
}
#else
long scanned_run(void)
{
    return side(41);
}
#endif
/* SPDX-License-Identifier: MIT */
