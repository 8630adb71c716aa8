/* Built with the plain compiler: nothing of fnprof but through libwrapped.so. */
#include <stdio.h>

int lib_run(int n);

int main(void)
{
    printf("%d\n", lib_run(7));
    return 0;
}
/* SPDX-License-Identifier: MIT */
