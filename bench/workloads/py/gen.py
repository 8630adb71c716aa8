"""Generators: every next() resumes a frame (cProfile counts each resume as a call)."""
import sys


def count(n):
    for i in range(n):
        yield i


def evens(it):
    for x in it:
        if x % 2 == 0:
            yield x


def run(n):
    return sum(x for x in evens(count(n)))


run(int(sys.argv[1]) if len(sys.argv) > 1 else 300000)
# SPDX-License-Identifier: MIT
