# speedscope's own app, from the npm registry (pinned in tests/views/check_speedscope_app.py,
# installed once into the build tree's npm cache), reading fnprof's speedscope and collapsed
# files in headless Chromium. Skipped when npm, the registry or chromium is missing.
fnp_views_test(speedscope_app_reads_the_files check_speedscope_app.py
               --cache ${CMAKE_BINARY_DIR}/tests/npm-cache)
set_tests_properties(views.speedscope_app_reads_the_files PROPERTIES SKIP_RETURN_CODE 77
                     LABELS "views;e2e" TIMEOUT 600)
# SPDX-License-Identifier: MIT
