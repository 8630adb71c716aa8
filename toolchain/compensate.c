/* SPDX-License-Identifier: MIT */
/*
 * --compensate for the commands that show a profile (report, convert): its times with the
 * hooks' own cost taken off, from the calibration the run stored in its metadata
 * (profile/compensate.c, docs/compensation.md).
 */
#include <errno.h>

#include "cli.h"

int fnp_cli_compensate(const char *cmd, const char *path, struct fnp_profile *p)
{
    int rc = fnp_profile_compensate(p, NULL);
    if (rc == -EALREADY) {
        /* what was asked for is there: shown as it is, once */
        fnp_cli_error(cmd, "%s: note: %s: not compensated twice", path,
                      fnp_compensate_strerror(rc));
        return 0;
    }
    if (rc) {
        fnp_cli_error(cmd, "%s: cannot compensate: %s", path, fnp_compensate_strerror(rc));
        return -1;
    }
    return 0;
}
