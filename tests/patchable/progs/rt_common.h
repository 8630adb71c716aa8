/*
 * What the runtime tests' programs share: a function the compiler must keep as a function
 * of its own (no inlining, and no gcc clone under another name, which the independent
 * count by gdb would not find), and a value it must keep computing.
 */
#ifndef RT_COMMON_H
#define RT_COMMON_H

#ifdef __clang__
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE __attribute__((noinline, noclone))
#endif
#define KEEP(x) __asm__ volatile("" : "+r"(x))

#endif
/* SPDX-License-Identifier: MIT */
