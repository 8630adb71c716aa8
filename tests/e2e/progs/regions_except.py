# Mirror of regions_except.cc: a region is a function carrying the region's name; an
# exception leaves the regions it crosses as it leaves functions.


class Thrown(Exception):
    pass


def named(fn, name):
    fn.__code__ = fn.__code__.replace(co_name=name)
    return fn


def leaf(x):
    return x * 2 + 1


def checked_step(n):
    if n % 3 == 0:
        raise Thrown(n)
    return leaf(n)


def risky(n):
    return checked_step(n)


def attempt(n):
    return risky(n)


def guarded(n):
    try:
        return attempt(n)
    except Thrown:
        return leaf(-n)


def iteration(i):
    return guarded(i)


named(checked_step, "checked step")
named(attempt, "attempt")
named(iteration, "iteration")


def main():
    s = 0
    for i in range(10):
        s += iteration(i)
    print(s)


if __name__ == "__main__":
    main()
# SPDX-License-Identifier: MIT
