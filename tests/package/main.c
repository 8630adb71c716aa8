#include <fnprof.h>
#include <stdio.h>
#include <string.h>

int square(int x)
{
    return x * x;
}

int main(int argc, char **argv)
{
    int sum = 0;
    for (int i = 0; i < 10; i++)
        sum += square(i);
    printf("%d %s\n", sum, fnprof_version());
    return argc > 1 && strcmp(argv[1], "dump") == 0 ? fnprof_dump(NULL) != 0 : 0;
}
/* SPDX-License-Identifier: MIT */
