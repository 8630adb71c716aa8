/*
 * Every environment variable fnprof reads, read once when the library loads, through
 * secure_getenv so that a setuid or setgid program ignores them all.
 *
 *   PROF_OUTPUT  where the profile goes; unset or empty: fnprof stays inert. A relative
 *                path is taken against the working directory at load (the program may
 *                chdir later); "%p" becomes the process id, "%%" a percent sign.
 *   PROF_QUIET   "1": no line on stderr when the profile is written (errors still are).
 *   PROF_TIMER   auto (default), tsc, monotonic, none (count-only: no timestamps).
 *   PROF_DEBUG_DIR  where separate debug files are looked for, ':'-separated roots
 *                searched like gdb's debug-file-directory (default /usr/lib/debug).
 *   PROF_MAX_NODES  calling contexts kept (default 2^20; 64 bytes each, plus 16-32 of lookup
 *                table); beyond it new contexts are merged (runtime/cct.c), which the
 *                profile labels.
 *   PROF_OWNER   set by fnprof itself, not by users: "<pid>:<absolute PROF_OUTPUT>" of the
 *                process that writes PROF_OUTPUT as named. It is inherited by every process
 *                started below that one (fork, exec, system, posix_spawn), and those write
 *                PROF_OUTPUT.<pid> instead, so no process overwrites another's profile.
 *                A PROF_OUTPUT with %p names every process's file already.
 *   PROF_EXEC    set by fnprof for the image an exec starts, after the image before it
 *                wrote its profile: "<pid>:<n>". In that same process, the n-th image
 *                appends ".exec<n>" to its file name (runtime/exec.c).
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
    fnp_config.debug_dirs = secure_getenv("PROF_DEBUG_DIR");
    fnp_config.pid = (int)getpid();
    const char *max = secure_getenv("PROF_MAX_NODES");
    if (max && *max) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(max, &end, 10);
        if (errno || *end || v == 0 || max[0] == '-')
            fnp_log("PROF_MAX_NODES=%s: not a positive number; using %u", max,
                    FNP_DEFAULT_MAX_NODES);
        else
            fnp_config.max_nodes = v;
    }
    const char *exec_mark = secure_getenv("PROF_EXEC");
    const char *exec_colon = exec_mark ? strchr(exec_mark, ':') : NULL;
    if (exec_colon && atoi(exec_mark) == fnp_config.pid && atoi(exec_colon + 1) > 0)
        fnp_config.image = atoi(exec_colon + 1);
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
    if (!fnp_config.output)
        return -errno;
    fnp_config.has_pid = strstr(fnp_config.output, "%p") != NULL;

    char *mark;
    if (asprintf(&mark, "%d:%s", (int)getpid(), fnp_config.output) < 0)
        return 0;
    const char *owner = secure_getenv("PROF_OWNER");
    const char *colon = owner ? strchr(owner, ':') : NULL;
    if (colon && strcmp(colon + 1, fnp_config.output) == 0 && atoi(owner) != (int)getpid())
        fnp_config.child = 1; /* someone above us writes this path */
    else
        setenv("PROF_OWNER", mark, 1);
    free(mark);
    return 0;
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
    if (fnp_config.child && !fnp_config.has_pid) {
        char *suffixed;
        int rc = asprintf(&suffixed, "%s.%s", out, pid);
        free(out);
        if (rc < 0)
            return NULL;
        out = suffixed;
    }
    if (fnp_config.image > 0) {
        char *suffixed;
        int rc = asprintf(&suffixed, "%s.exec%d", out, fnp_config.image);
        free(out);
        return rc < 0 ? NULL : suffixed;
    }
    return out;
}
