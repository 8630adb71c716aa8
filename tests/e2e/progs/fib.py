"""Mirror of fib.c: direct recursion."""


def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


def run_all():
    first = fib(18)
    second = fib(18)
    print("fib(18) = %d" % first)
    print("fib(18) = %d" % second)


def main():
    run_all()


if __name__ == "__main__":
    main()
# SPDX-License-Identifier: MIT
