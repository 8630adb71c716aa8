# Collapsed stacks against the tree (tests/views/check_collapsed.py).
fnp_views_test(collapsed_matches_the_tree check_collapsed.py)
# SPDX-License-Identifier: MIT
