# Mirror of regions.c: each region is a function whose code object carries the region's
# name, called where the region opens, holding what the region holds.


def named(fn, name):
    fn.__code__ = fn.__code__.replace(co_name=name)
    return fn


def leaf(x):
    return x * 3 + 1


def parse_item(i):
    return leaf(i)


def parse(n):
    s = 0
    for i in range(n):
        s += parse_item(i)
    return s


def rec_level(n):
    if n == 0:
        return leaf(0)
    return rec(n - 1) + 1


def rec(n):
    return rec_level(n)


def span(n):
    return parse(n)


def early(n, s):
    return s + rec(n)


def spans(n):
    s = 0
    s += span(n)
    if n > 1:
        return early(n, s)
    return s


def load_config():
    return parse(3)


named(parse_item, "parse item")
named(rec_level, "rec level")
named(early, "early")
named(load_config, "load config")


def main():
    s = 0
    s += load_config()
    for k in range(4):
        s += spans(k)
    s += rec(5)
    print(s)


if __name__ == "__main__":
    main()
# SPDX-License-Identifier: MIT
