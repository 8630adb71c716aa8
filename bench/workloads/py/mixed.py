"""Python calling an instrumented extension: 20 Python calls, each 500,000 native ones."""
import sys

import mixed_native


def run(n):
    return sum(mixed_native.spin(500000) for _ in range(n))


run(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
# SPDX-License-Identifier: MIT
