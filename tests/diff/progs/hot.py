"""hot.c in Python, for CPython-made profiles (python3 -m cProfile -o OUT hot.py base|new)."""
import sys

sink = 0


def leaf():
    global sink
    for i in range(200):
        sink += i


def a(n):
    for _ in range(n):
        leaf()


def b(n):
    for _ in range(n):
        leaf()


def only_base():
    global sink
    sink += 1


def only_new():
    global sink
    sink += 1


def common():
    global sink
    sink += 1


def rec(depth):
    return rec(depth - 1) + 1 if depth else 0


def main():
    moved = len(sys.argv) > 1 and sys.argv[1] == "new"
    a(100 if moved else 2000)
    b(6000 if moved else 200)
    if moved:
        only_new()
    else:
        only_base()
    for _ in range(5 if moved else 3):
        common()
    return rec(3 if moved else 2) == 99


if __name__ == "__main__":
    main()
# SPDX-License-Identifier: MIT
