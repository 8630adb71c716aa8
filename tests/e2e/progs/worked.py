"""Mirror of worked.c: the worked example of docs/pstats.md."""


def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


def a(n):
    return 1 + b(n)


def b(n):
    if n > 0:
        return 10 + a(n - 1)
    return 10


def run_all():
    f = fib(5)
    x = a(1)
    print("fib(5) = %d, a(1) = %d" % (f, x))


def main():
    run_all()


if __name__ == "__main__":
    main()
# SPDX-License-Identifier: MIT
