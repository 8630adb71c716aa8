"""os.fork and multiprocessing's fork start method under python3 -m fnprof: each child
writes what it did to PROF_OUTPUT.<pid>, the parent its own to PROF_OUTPUT."""
import multiprocessing
import os
import sys


def child_work(n):
    return n


def pool_work(n):
    return n


def parent_work(n):
    return n


def in_mp(k):
    for i in range(k):
        pool_work(i)


def main():
    for i in range(3):
        parent_work(i)
    pid = os.fork()
    if pid == 0:
        for i in range(5):
            child_work(i)
        sys.exit(0)
    os.waitpid(pid, 0)
    ctx = multiprocessing.get_context("fork")
    p = ctx.Process(target=in_mp, args=(7,))
    p.start()
    p.join()


main()
# SPDX-License-Identifier: MIT
