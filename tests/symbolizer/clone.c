/* Built with gcc -O2 and without -finstrument-functions, so gcc makes copies of functions:
 * scale.constprop.0 (k is always 7), sum_if.part.0 (ipa-split: callers inline the cheap
 * test) and check.cold (the unlikely loop body, one more DW_AT_ranges entry of check). */
#include <stdio.h>
#include <stdlib.h>

volatile int sink;
static int table[64];

__attribute__((noinline)) static int scale(int x, int k) /* @line scale */
{
    for (int i = 0; i < k; i++)
        sink += x * i;
    return sink;
}

int sum_if(int n) /* @line sum_if */
{
    if (__builtin_expect(n <= 0, 1))
        return 0;
    int s = 0;
    for (int i = 0; i < n && i < 64; i++) {
        s += table[i] * i;
        sink += s;
        if (s > 100000)
            printf("big %d\n", s);
        table[(i * 7) & 63] ^= s;
    }
    return s;
}

__attribute__((cold, noinline)) void fail(const char *what, int x) /* @line fail */
{
    fprintf(stderr, "%s %d\n", what, x);
    exit(3);
}

__attribute__((noinline)) int check(const int *p, int n) /* @line check */
{
    int s = 0;
    for (int i = 0; i < n; i++) {
        if (p[i] < 0) {
            sink += p[i];
            fail("negative", p[i]);
        }
        s += p[i];
    }
    return s;
}

int main(int argc, char **argv) /* @line clone_main */
{
    (void)argv;
    int v[3] = {argc, 2, 3};
    return scale(argc, 7) + scale(argc + 1, 7) + sum_if(argc - 1) + sum_if(argc - 2) + check(v, 3);
}
/* SPDX-License-Identifier: MIT */
