"""Areas under curves: Python calls the C extension shapes.integrate, which calls the
Python curves back (README.md here builds and profiles it)."""
import math

import shapes


def parabola(x):
    return x * x


def bump(x):
    return math.exp(-x * x)


def wave(x):
    return math.sin(x) ** 2


def areas(n):
    return [shapes.integrate(f, 0.0, 2.0, n) for f in (parabola, bump, wave)]


def table():
    for n in (1000, 4000, 16000):
        print(n, " ".join("%.6f" % a for a in areas(n)))


if __name__ == "__main__":
    table()
# SPDX-License-Identifier: MIT
