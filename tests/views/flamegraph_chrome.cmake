# The flame graph SVG as headless Chromium renders it (tests/views/check_flamegraph_chrome.py):
# names, rendered widths per frame and per thread against the tree, zoom and search through
# its own script. Skipped when chromium is not installed.
fnp_views_test(flamegraph_renders_and_zooms_in_chromium check_flamegraph_chrome.py)
set_tests_properties(views.flamegraph_renders_and_zooms_in_chromium PROPERTIES
                     SKIP_RETURN_CODE 77 LABELS "views;e2e" TIMEOUT 300)
# SPDX-License-Identifier: MIT
