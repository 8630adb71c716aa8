# fnprof convert --to dot, read back by graphviz (check_dot.py: dot -Tsvg and -Tplain):
# nodes and edges with exact call counts, shares, colours and pruning, on the timed,
# count-only and CPython profiles and on names DOT must escape; and drawing through dot.
fnp_views_test(dot_edges_carry_exact_calls.timed check_dot.py --profile paths.prof)
fnp_views_test(dot_edges_carry_exact_calls.count_only check_dot.py --profile paths-count.prof)
fnp_views_test(dot_edges_carry_exact_calls.cpython check_dot.py --profile paths-py.prof)
fnp_views_test(dot_escapes_odd_names check_dot.py --odd-names)
fnp_views_test(dot_draws_svg_through_graphviz check_dot.py --render)
set_tests_properties(views.dot_edges_carry_exact_calls.timed
                     views.dot_edges_carry_exact_calls.count_only
                     views.dot_edges_carry_exact_calls.cpython views.dot_escapes_odd_names
                     views.dot_draws_svg_through_graphviz PROPERTIES SKIP_RETURN_CODE 77)
# SPDX-License-Identifier: MIT
