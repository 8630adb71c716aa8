/* SPDX-License-Identifier: MIT */
/*
 * allocs: malloc-bound. Each round builds a list of small nodes (malloc), grows a buffer by
 * realloc, makes a few calloc'd tables, then frees all of it, in nested non-inlined
 * functions: a memory profiler's cost per allocation dominates the run.
 * Usage: allocs [ROUNDS] (default 20000); prints a checksum. Allocations per round: 262.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct node {
    struct node *next;
    long v;
};

__attribute__((noinline)) static struct node *push(struct node *head, long v)
{
    struct node *n = malloc(sizeof(*n) + (size_t)(v % 64));
    n->next = head;
    n->v = v;
    return n;
}

__attribute__((noinline)) static long drop(struct node *head)
{
    long s = 0;
    while (head) {
        struct node *next = head->next;
        s += head->v;
        free(head);
        head = next;
    }
    return s;
}

__attribute__((noinline)) static long grow(int steps)
{
    char *buf = NULL;
    size_t len = 0;
    for (int i = 0; i < steps; i++) {
        buf = realloc(buf, len + 24);
        memset(buf + len, 'a' + i % 26, 24);
        len += 24;
    }
    long s = buf[len / 2];
    free(buf);
    return s;
}

__attribute__((noinline)) static long tables(int n)
{
    long s = 0;
    for (int i = 0; i < n; i++) {
        int *t = calloc(16 + (size_t)i, sizeof(*t));
        t[i] = i;
        s += t[i / 2];
        free(t);
    }
    return s;
}

__attribute__((noinline)) static long round_(long r)
{
    struct node *head = NULL;
    for (long i = 0; i < 200; i++)
        head = push(head, r + i);
    return drop(head) + grow(50) + tables(12);
}

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? atol(argv[1]) : 20000, sum = 0;
    for (long r = 0; r < rounds; r++)
        sum += round_(r);
    printf("%ld\n", sum);
    return 0;
}
