"""Mirror of comb.c: 4^d distinct call paths, and north inside west every third level."""

total = 0


def north(d):
    global total
    total += 1
    walk(d - 1)


def east(d):
    global total
    total += 2
    walk(d - 1)


def south(d):
    global total
    total += 3
    walk(d - 1)


def west(d):
    global total
    total += 4
    walk(d - 1)
    if d % 3 == 0:
        north(d - 1)


def walk(d):
    if d <= 0:
        return
    north(d)
    east(d)
    south(d)
    west(d)


def main():
    walk(7)
    print("total %d" % total)


if __name__ == "__main__":
    main()
# SPDX-License-Identifier: MIT
