# SPDX-License-Identifier: MIT
"""Every shape cProfile's rules cover, in pure Python: the oracle is cProfile itself."""
import signal


def fact(n):  # direct recursion
    return 1 if n <= 1 else n * fact(n - 1)


def even(n):  # mutual recursion
    return True if n == 0 else odd(n - 1)


def odd(n):
    return False if n == 0 else even(n - 1)


def squares(n):  # a generator, resumed n + 1 times
    for i in range(n):
        yield i * i


class Shape:
    def __init__(self, side):
        self.side = side

    def area(self):
        return self.side * self.side

    @staticmethod
    def unit():
        return Shape(1)

    @property
    def double(self):
        return 2 * self.area()


def deep_raise(n):  # an exception raised three frames down, caught above
    if n == 0:
        raise ValueError("bottom")
    return deep_raise(n - 1)


def catcher(k):
    caught = 0
    for i in range(k):
        try:
            deep_raise(3)
        except ValueError:
            caught += 1
    return caught


def builtin_raises(k):  # a builtin that raises (C_EXCEPTION)
    n = 0
    for i in range(k):
        try:
            int("x")
        except ValueError:
            n += 1
    return n


def interrupted(k):  # KeyboardInterrupt from a real SIGINT, raised in a callee, caught here
    n = 0
    for i in range(k):
        try:
            spin()
        except KeyboardInterrupt:
            n += 1
    return n


def spin():
    signal.raise_signal(signal.SIGINT)
    while True:
        pass


def main():
    fact(30)
    even(41)
    total = sum(squares(10)) + sum(x for x in squares(4))
    shapes = [Shape(i) for i in range(5)]
    areas = list(map(lambda s: s.area(), shapes))
    doubles = {s.double for s in shapes}
    ",".join(str(a) for a in areas)
    sorted(shapes, key=lambda s: -s.side)
    Shape.unit().area()
    catcher(4)
    builtin_raises(3)
    interrupted(2)
    return total, doubles


main()
