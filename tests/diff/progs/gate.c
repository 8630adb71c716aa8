/*
 * The CI gate's test program (tests/diff/gate.py): a pipeline of eight stages run 400
 * times, each stage a short loop, so that a preemption's wait lands on the stages in
 * proportion to their work rather than on whichever was running. "gate slow" does 20% more
 * work in transform() and nothing else: its callers grow by 4% (transform is a fifth of
 * the pipeline), below the test's 10% rule, and the call counts stay the same.
 */
#include <string.h>

static volatile unsigned long sink;
static unsigned long extra; /* percent more work in transform */

#define WORK(n)                                                                                    \
    for (unsigned long i = 0; i < (n); i++)                                                        \
    sink += i ^ (sink >> 3)

void parse(void)
{
    WORK(30000);
}

void tokenize(void)
{
    WORK(20000);
}

void lookup(void)
{
    WORK(15000);
}

void transform(void)
{
    WORK(30000 + 300 * extra);
}

void encode(void)
{
    WORK(20000);
}

void checksum(void)
{
    WORK(10000);
}

void compress(void)
{
    WORK(25000);
}

void report(void)
{
    WORK(5000);
}

void pipeline(void)
{
    parse();
    tokenize();
    lookup();
    transform();
    encode();
    checksum();
    compress();
    report();
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "slow"))
        extra = 20;
    for (int i = 0; i < 400; i++)
        pipeline();
    return 0;
}
/* SPDX-License-Identifier: MIT */
