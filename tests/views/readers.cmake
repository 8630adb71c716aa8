# pstats readers read fnprof's file unchanged by the tree after the dict
# (tests/views/check_readers.py). A reader that is not installed is reported as skipped.
foreach(reader pstats pyprof2calltree gprof2dot snakeviz)
    fnp_views_test(readers.${reader}_ignores_the_tree check_readers.py --reader ${reader})
    set_tests_properties(views.readers.${reader}_ignores_the_tree PROPERTIES SKIP_RETURN_CODE 77)
endforeach()
# SPDX-License-Identifier: MIT
