# pprof's profile.proto against the tree, read by go tool pprof and by a protobuf decoder of
# the test's own (tests/views/check_pprof.py); skipped without go.
fnp_views_test(pprof_samples_are_the_tree_paths check_pprof.py)
set_tests_properties(views.pprof_samples_are_the_tree_paths PROPERTIES SKIP_RETURN_CODE 77)
# SPDX-License-Identifier: MIT
