"""Mirror of mutual.c: mutual recursion is_even <-> is_odd, entered from both sides."""


def is_even(n):
    if n == 0:
        return 1
    return is_odd(n - 1)


def is_odd(n):
    if n == 0:
        return 0
    return is_even(n - 1)


def run_all():
    for n in (7, 10, 0, 3, 1):
        even = is_even(n)
        odd = is_odd(n)
        print("%d even=%d odd=%d" % (n, even, odd))


def main():
    run_all()


if __name__ == "__main__":
    main()
# SPDX-License-Identifier: MIT
