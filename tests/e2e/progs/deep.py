"""Mirror of deep.c: descend 3000 levels, each calling touch."""

import sys

# descend(3000) needs 3000 Python frames, cProfile's and the caller's on top.
sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))


def touch(n):
    return n & 7


def descend(n):
    s = touch(n)
    if n > 0:
        s += descend(n - 1)
    return s


def run_all():
    deep = descend(3000)
    shallow = descend(10)
    t = touch(5)
    print("%d %d %d" % (deep, shallow, t))


def main():
    run_all()


if __name__ == "__main__":
    main()
# SPDX-License-Identifier: MIT
