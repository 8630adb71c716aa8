# SPDX-License-Identifier: MIT
"""Python -> C -> Python: counts derived from the loops (N, K below, read by the test)."""
import mixed

N = 5
K = 4


def callback(i):
    return i + 1


def keyfn(x):
    return -x


def main():
    for r in range(3):
        mixed.native_loop(N, callback)
    mixed.native_keys(list(range(K)), keyfn)


main()
