"""Mirror of callers.c: leaf is called from run_all, alpha, beta and gamma_."""


def leaf(x):
    return x * 2 + 1


def gamma_(x):
    return leaf(x) + 1


def beta(x):
    s = leaf(x)
    s += leaf(x + 1)
    s += gamma_(x)
    return s


def alpha(x):
    s = 0
    for i in (0, 1, 2):
        s += leaf(x + i)
    s += beta(x)
    return s


def run_all():
    a = alpha(1)
    b = beta(2)
    g = gamma_(3)
    l = leaf(4)
    a2 = alpha(5)
    print("%d %d %d %d %d" % (a, b, g, l, a2))


def main():
    run_all()


if __name__ == "__main__":
    main()
# SPDX-License-Identifier: MIT
