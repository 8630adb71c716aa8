# fnprof convert --to callgrind, read back by callgrind_annotate, by a parser of the
# callgrind format specification and against pyprof2calltree (check_callgrind.py): exact
# call counts per edge, self and inclusive costs, on the timed, count-only and CPython
# profiles and on names a C++ profile can hold.
fnp_views_test(callgrind_calls_and_costs_match_pstats.timed check_callgrind.py
               --profile paths.prof)
fnp_views_test(callgrind_calls_and_costs_match_pstats.count_only check_callgrind.py
               --profile paths-count.prof)
fnp_views_test(callgrind_calls_and_costs_match_pstats.cpython check_callgrind.py
               --profile paths-py.prof)
fnp_views_test(callgrind_keeps_odd_names_one_line check_callgrind.py --odd-names)
set_tests_properties(views.callgrind_calls_and_costs_match_pstats.timed
                     views.callgrind_calls_and_costs_match_pstats.count_only
                     views.callgrind_calls_and_costs_match_pstats.cpython
                     views.callgrind_keeps_odd_names_one_line PROPERTIES SKIP_RETURN_CODE 77)
# SPDX-License-Identifier: MIT
