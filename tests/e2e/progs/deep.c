/* Deep recursion: descend 3000 levels, each calling touch; then a shallow descend and a direct
 * touch, so touch and descend->touch each have calls at depth 1 and at depth 3000. */
#include <stdio.h>

int touch(int n)
{
    return n & 7;
}

long descend(int n)
{
    long s = touch(n);
    if (n > 0)
        s += descend(n - 1);
    return s;
}

void run_all(void)
{
    long deep = descend(3000);
    long shallow = descend(10);
    int t = touch(5);
    printf("%ld %ld %d\n", deep, shallow, t);
}

int main(void)
{
    run_all();
    return 0;
}
/* SPDX-License-Identifier: MIT */
