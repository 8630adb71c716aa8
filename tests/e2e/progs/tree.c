/* A tree walk: build (recursive, random shape from a fixed seed), visit <-> visit_inner with
 * visit_leaf, height with max2; next_rand has one caller, build, at every depth. */
#include <stdio.h>

#define MAX_NODES 512

static int left[MAX_NODES], right[MAX_NODES], value[MAX_NODES];
static int nnodes;
static unsigned long seed = 7;

int next_rand(void)
{
    seed = (seed * 1103515245UL + 12345UL) & 0x7fffffffUL;
    return (int)(seed >> 16);
}

int build(int depth)
{
    int node = nnodes++;

    value[node] = next_rand() % 100;
    left[node] = -1;
    right[node] = -1;
    if (depth > 0 && next_rand() % 4 != 0)
        left[node] = build(depth - 1);
    if (depth > 0 && next_rand() % 3 != 0)
        right[node] = build(depth - 1);
    return node;
}

int visit(int node);

int visit_leaf(int node)
{
    return value[node] * 2;
}

int visit_inner(int node)
{
    int s = value[node];
    s += visit(left[node]);
    s += visit(right[node]);
    return s;
}

int visit(int node)
{
    if (node < 0)
        return 0;
    if (left[node] < 0 && right[node] < 0)
        return visit_leaf(node);
    return visit_inner(node);
}

int max2(int x, int y)
{
    return x > y ? x : y;
}

int height(int node)
{
    if (node < 0)
        return 0;
    int hl = height(left[node]);
    int hr = height(right[node]);
    return 1 + max2(hl, hr);
}

void run_all(void)
{
    int root = build(7);
    int sum = visit(root);
    int h = height(root);
    printf("nodes %d sum %d height %d\n", nnodes, sum, h);
    int sub = visit(left[root]);
    printf("left subtree sum %d\n", sub);
}

int main(void)
{
    run_all();
    return 0;
}
/* SPDX-License-Identifier: MIT */
