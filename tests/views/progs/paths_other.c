/* A second file for paths.c: a static function with the name of one there, so that every
 * view must keep two functions of one name apart. */
static volatile unsigned long other_sink;

static void helper(void)
{
    for (unsigned long i = 0; i < 30000; i++)
        other_sink += i;
}

void paths_other(void)
{
    helper();
}
/* SPDX-License-Identifier: MIT */
