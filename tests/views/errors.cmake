# fnprof convert on damaged trees, missing files and bad usage (tests/views/check_errors.py).
fnp_views_test(convert_refuses_bad_input_and_writes_nothing check_errors.py)
# SPDX-License-Identifier: MIT
