# fnprof merge adds calling-context trees (tests/views/check_merge.py).
fnp_views_test(merge_adds_trees_path_by_path check_merge.py)
# SPDX-License-Identifier: MIT
