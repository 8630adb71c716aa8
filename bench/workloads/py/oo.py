"""A method-heavy loop: properties, bound methods, __init__ of small objects."""
import sys


class Vec:
    def __init__(self, x, y):
        self.x, self.y = x, y

    def add(self, o):
        return Vec(self.x + o.x, self.y + o.y)

    def scale(self, k):
        return Vec(self.x * k, self.y * k)

    @property
    def norm1(self):
        return abs(self.x) + abs(self.y)


def run(n):
    v, d, s = Vec(0, 0), Vec(1, -1), 0
    for i in range(n):
        v = v.add(d.scale(i % 3))
        s += v.norm1
    return s


run(int(sys.argv[1]) if len(sys.argv) > 1 else 100000)
# SPDX-License-Identifier: MIT
