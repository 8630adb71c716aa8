/*
 * Every environment variable fnprof reads, read once when the library loads, through
 * secure_getenv so that a setuid or setgid program ignores them all.
 *
 *   PROF_OUTPUT  where the profile goes; unset or empty: fnprof stays inert. A relative
 *                path is taken against the working directory at load (the program may
 *                chdir later); "%p" becomes the process id, "%%" a percent sign.
 *   PROF_QUIET   "1": no line on stderr when the profile is written (errors still are).
 *   PROF_TIMER   auto (default), tsc, monotonic.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime.h"

struct fnp_config fnp_config;

int fnp_env_load(void)
{
    const char *out = secure_getenv("PROF_OUTPUT");
    const char *quiet = secure_getenv("PROF_QUIET");
    fnp_config.quiet = quiet && strcmp(quiet, "1") == 0;
    fnp_config.timer = secure_getenv("PROF_TIMER");
    if (!out || !*out)
        return 0;
    if (out[0] == '/') {
        fnp_config.output = strdup(out);
    } else {
        char *cwd = getcwd(NULL, 0);
        if (cwd && asprintf(&fnp_config.output, "%s/%s", cwd, out) < 0)
            fnp_config.output = NULL;
        free(cwd);
    }
    return fnp_config.output ? 0 : -errno;
}

char *fnp_env_output_path(void)
{
    const char *in = fnp_config.output;
    if (!in)
        return NULL;
    char pid[24];
    int pidlen = snprintf(pid, sizeof(pid), "%d", (int)getpid());
    size_t len = strlen(in), n = 0;
    char *out = malloc(len * (size_t)pidlen + 1);
    if (!out)
        return NULL;
    for (size_t i = 0; i < len; i++) {
        if (in[i] == '%' && in[i + 1] == 'p') {
            memcpy(out + n, pid, (size_t)pidlen);
            n += (size_t)pidlen;
            i++;
        } else if (in[i] == '%' && in[i + 1] == '%') {
            out[n++] = '%';
            i++;
        } else {
            out[n++] = in[i];
        }
    }
    out[n] = 0;
    return out;
}
