/* libknown.so: a library built without instrumentation, whose functions the tests call
 * from instrumented code: plain ones, ones whose arguments go on the stack (many, a
 * variadic list, a struct by value, a long double, AVX vectors), and one that calls back. */
#include <stdarg.h>

struct lk_big {
    long v[6];
};

long lk_add(long a, long b)
{
    return a + b;
}

long lk_many(long a1, long a2, long a3, long a4, long a5, long a6, long a7, long a8, long a9,
             long a10, long a11, long a12, double d1, double d2, double d3, double d4, double d5,
             double d6, double d7, double d8, double d9, double d10)
{
    return a1 + 2 * a2 + 3 * a3 + 4 * a4 + 5 * a5 + 6 * a6 + 7 * a7 + 8 * a8 + 9 * a9 + 10 * a10 +
           11 * a11 + 12 * a12 +
           (long)(d1 + 2 * d2 + 3 * d3 + 4 * d4 + 5 * d5 + 6 * d6 + 7 * d7 + 8 * d8 + 9 * d9 +
                  10 * d10);
}

long lk_sumv(int n, ...)
{
    va_list ap;
    va_start(ap, n);
    long s = 0;
    for (int i = 0; i < n; i++)
        s += va_arg(ap, long) * (i + 1);
    va_end(ap);
    return s;
}

long lk_big_sum(struct lk_big a, struct lk_big b)
{
    long s = 0;
    for (int i = 0; i < 6; i++)
        s += a.v[i] * (i + 1) + b.v[i];
    return s;
}

long double lk_ld(long double x)
{
    return x * x + 0.25L;
}

typedef double lk_v4 __attribute__((vector_size(32)));

__attribute__((target("avx"))) lk_v4 lk_vadd(lk_v4 a, lk_v4 b)
{
    return a + b;
}

void lk_each(void (*fn)(int), int n)
{
    for (int i = 0; i < n; i++)
        fn(i);
}
/* SPDX-License-Identifier: MIT */
