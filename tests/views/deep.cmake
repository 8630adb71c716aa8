# Views of deep trees (a chain of 10^6 calls, a comb 3000 deep) stay bounded by the depth cut
# (tests/views/check_deep.py).
fnp_views_test(views_of_a_deep_tree_are_cut_and_bounded check_deep.py)
set_tests_properties(views.views_of_a_deep_tree_are_cut_and_bounded PROPERTIES TIMEOUT 900)
# SPDX-License-Identifier: MIT
