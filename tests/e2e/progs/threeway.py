"""Mirror of threeway.c: step_a -> step_b -> step_c -> step_a, entered at each of the three."""


def step_a(n):
    return 1 + step_b(n)


def step_b(n):
    return 2 * step_c(n)


def step_c(n):
    if n <= 0:
        return 1
    return 3 + step_a(n - 1)


def run_all():
    a = step_a(4)
    b = step_b(2)
    c = step_c(3)
    d = step_c(0)
    print("step_a(4) = %d" % a)
    print("step_b(2) = %d" % b)
    print("step_c(3) = %d" % c)
    print("step_c(0) = %d" % d)


def main():
    run_all()


if __name__ == "__main__":
    main()
# SPDX-License-Identifier: MIT
