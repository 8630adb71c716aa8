// f() -> g() -> h(), h throws, f catches and then calls k(); repeated K times. Expected
// (run_robust.py, case "except"): f, g, h, k K calls each; f->g, g->h, f->k (never h->k
// or g->k); no unmatched exit reported. Only printf from the library: std templates would
// be instrumented too and add functions.
#include <cstdio>

#define K 50

// -DFNP_TEST_INLINE: g and h always inlined into f, so their frames share f's stack pointer.
#ifdef FNP_TEST_INLINE
#define CALLEE static inline __attribute__((always_inline))
#else
#define CALLEE
#endif

static volatile long total;

struct failure {
    int code;
};

CALLEE void h(int i)
{
    total += i;
    if (total >= 0)
        throw failure{i};
    total -= 1000000;
}

CALLEE void g(int i)
{
    h(i * 2);
    total -= 1000000;
}

void k(int i)
{
    total += i * 3;
}

void f(int i)
{
    try {
        g(i);
    } catch (const failure &e) {
        total += e.code;
    }
    k(i);
}

int main()
{
    for (int i = 0; i < K; i++)
        f(i);
    std::printf("except: total %ld\n", (long)total);
    return 0;
}
/* SPDX-License-Identifier: MIT */
