"""A builtin-heavy loop: len, min, str methods, dict.get: C calls that cProfile counts."""
import sys


def run(n):
    d, words, total = {}, ["alpha", "beta", "gamma", "delta"], 0
    for i in range(n):
        w = words[i % 4]
        d[w] = d.get(w, 0) + len(w)
        total += min(i, 7) + len(w.upper())
    return total


run(int(sys.argv[1]) if len(sys.argv) > 1 else 200000)
# SPDX-License-Identifier: MIT
