# speedscope's JSON file format against its spec and the tree
# (tests/views/check_speedscope.py).
fnp_views_test(speedscope_matches_the_spec_and_the_tree check_speedscope.py)
# SPDX-License-Identifier: MIT
