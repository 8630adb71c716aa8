# The flame graph fnprof draws itself (SVG) against the tree
# (tests/views/check_flamegraph.py).
fnp_views_test(flamegraph_draws_every_context check_flamegraph.py)
# SPDX-License-Identifier: MIT
