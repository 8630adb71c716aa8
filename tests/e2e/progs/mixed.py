"""Mirror of mixed.c: measure is called directly, inside walk's recursion and by itself."""


def walk(n):
    s = measure(n % 4)
    if n > 0:
        s += walk(n - 1)
    return s


def measure(n):
    if n <= 0:
        return 1
    s = n + measure(n - 1)
    if n == 3:
        s += walk(1)
    return s


def run_all():
    a = measure(3)
    b = walk(5)
    c = measure(2)
    d = walk(0)
    print("%d %d %d %d" % (a, b, c, d))


def main():
    run_all()


if __name__ == "__main__":
    main()
# SPDX-License-Identifier: MIT
