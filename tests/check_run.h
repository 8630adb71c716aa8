/* The end of every Check unit test's main(): run the suite, exit non-zero on a failure. */
#ifndef FNPROF_CHECK_RUN_H
#define FNPROF_CHECK_RUN_H

#include <check.h>
#include <stdlib.h>

static inline int fnp_check_run(Suite *s)
{
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif
/* SPDX-License-Identifier: MIT */
