// A C++ exception thrown by a qsort callback through glibc's qsort (built to let
// exceptions pass) and caught by the function that called qsort: qsort and the callback
// close as the exception passes them, __cxa_throw (which never returns) closes too, and
// the calls the catching function makes after the catch are its own. Counted by the
// program, printed, and expected exactly by the test.
#include <cstdio>
#include <cstdlib>
#include <unistd.h>

// more rounds than a thread's records (runtime/plt.h): none may leak
#define ROUNDS 5000

static long compared;

extern "C" int throwing(const void *a, const void *b)
{
    if (++compared % 5 == 0)
        throw 42;
    return *static_cast<const int *>(a) - *static_cast<const int *>(b);
}

void sort_catch()
{
    int v[40];
    for (int i = 0; i < 40; i++)
        v[i] = (i * 7919) % 40;
    try {
        qsort(v, 40, sizeof(int), throwing);
    } catch (int) {
        if (getpid() <= 0)
            abort();
    }
}

int main()
{
    for (int r = 0; r < ROUNDS; r++)
        sort_catch();
    std::printf("rounds %d compared %ld\n", ROUNDS, compared);
    return 0;
}
// SPDX-License-Identifier: MIT
