"""Mirror of tree.c: build, visit <-> visit_inner, visit_leaf, height, max2."""

MAX_NODES = 512

left = [0] * MAX_NODES
right = [0] * MAX_NODES
value = [0] * MAX_NODES
nnodes = 0
seed = 7


def next_rand():
    global seed
    seed = (seed * 1103515245 + 12345) & 0x7FFFFFFF
    return seed >> 16


def build(depth):
    global nnodes
    node = nnodes
    nnodes += 1
    value[node] = next_rand() % 100
    left[node] = -1
    right[node] = -1
    if depth > 0 and next_rand() % 4 != 0:
        left[node] = build(depth - 1)
    if depth > 0 and next_rand() % 3 != 0:
        right[node] = build(depth - 1)
    return node


def visit_leaf(node):
    return value[node] * 2


def visit_inner(node):
    s = value[node]
    s += visit(left[node])
    s += visit(right[node])
    return s


def visit(node):
    if node < 0:
        return 0
    if left[node] < 0 and right[node] < 0:
        return visit_leaf(node)
    return visit_inner(node)


def max2(x, y):
    return x if x > y else y


def height(node):
    if node < 0:
        return 0
    hl = height(left[node])
    hr = height(right[node])
    return 1 + max2(hl, hr)


def run_all():
    root = build(7)
    total = visit(root)
    h = height(root)
    print("nodes %d sum %d height %d" % (nnodes, total, h))
    sub = visit(left[root])
    print("left subtree sum %d" % sub)


def main():
    run_all()


if __name__ == "__main__":
    main()
# SPDX-License-Identifier: MIT
