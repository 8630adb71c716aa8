/* The public calls of include/fnprof.h. */
#include <errno.h>
#include <stdlib.h>

#include "fnprof.h"
#include "runtime.h"

FNPROF_API const char *fnprof_version(void)
{
    return FNPROF_VERSION_STRING;
}

FNPROF_API int fnprof_dump(const char *path)
{
    if (path)
        return fnp_dump(path, 1);
    char *out = fnp_env_output_path();
    if (!out)
        return fnp_config.output ? -ENOMEM : -EINVAL;
    int rc = fnp_dump(out, 1);
    free(out);
    return rc;
}
