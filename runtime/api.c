/* SPDX-License-Identifier: MIT */
/* The public calls of include/fnprof.h. */
#include <errno.h>
#include <stdlib.h>

#include "fnprof.h"
#include "runtime.h"

FNPROF_API const char *fnprof_version(void)
{
    return FNPROF_VERSION_STRING;
}

static int dump(const char *path)
{
    if (path)
        return fnp_control_dump(path, 1);
    char *out = fnp_env_output_path();
    if (!out)
        return fnp_config.output ? -ENOMEM : -EINVAL;
    int rc = fnp_control_dump(out, 1);
    free(out);
    return rc;
}

FNPROF_API int fnprof_dump(const char *path)
{
    fnp_mem_hold(); /* fnprof's allocations are not the program's (memory.c) */
    int rc = dump(path);
    fnp_mem_release();
    return rc;
}

FNPROF_API void fnprof_pause(void)
{
    fnp_control_pause(1);
}

FNPROF_API void fnprof_resume(void)
{
    fnp_control_pause(0);
}

FNPROF_API void fnprof_step(void)
{
    fnp_control_step();
}

FNPROF_API void fnprof_reset(void)
{
    fnp_control_reset();
}

FNPROF_API int fnprof_frame_start(void)
{
    return fnp_start_frames();
}
