"""paths.c in Python, for a profile cProfile writes (a file with no calling-context tree)."""
import threading

sink = 0


def burn(n):
    global sink
    sink += sum(range(n // 100))


def d():
    burn(400000)


def c(from_a):
    burn(100000)
    if from_a:
        d()


def a():
    burn(50000)
    c(1)


def b():
    burn(50000)
    c(0)


def rec(n):
    burn(20000)
    if n > 1:
        rec(n - 1)


def helper():
    burn(10000)


def paths_other():
    helper()


def main():
    for _ in range(3):
        a()
    for _ in range(2):
        b()
    rec(4)
    helper()
    paths_other()


if __name__ == "__main__":
    import cProfile
    import sys
    cProfile.run("main()", sys.argv[1])
# SPDX-License-Identifier: MIT
