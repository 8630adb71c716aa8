# The HTML report (tests/views/check_html.py): its embedded data against the tree and the
# dict, and the page as headless Chromium renders it (tests/views/html/cdp.py drives it over
# the DevTools protocol). Skipped when chromium is not installed.
fnp_views_test(html_report_matches_the_profile check_html.py --max-load-ms 2000
               --screenshot ${fnp_views_work}/paths.html.png)
set_tests_properties(views.html_report_matches_the_profile PROPERTIES SKIP_RETURN_CODE 77
                     TIMEOUT 300)
# SPDX-License-Identifier: MIT
