/* SPDX-License-Identifier: MIT */
/*
 * What /proc says about the process fnprof record is asked to record, read without
 * ptrace: whether it runs and may be signalled, whether fnprof is loaded in it and armed
 * (the environment it started with), the state its signal thread shows (profile.h,
 * "fnprof record's requests"), and where the runtime writes its window's file.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

#define ARM_HINT                                                                                   \
    "start it with PROF_OUTPUT=/abs/path/out.prof PROF_START=paused PROF_TOGGLE_SIGNAL=USR1 "      \
    "PROF_DUMP_SIGNAL=USR2 (docs/production.md)"

static int proc_path(char *buf, size_t n, int pid, const char *what)
{
    int w = snprintf(buf, n, "/proc/%d/%s", pid, what);
    return w < 0 || (size_t)w >= n ? -ENAMETOOLONG : 0;
}

const char *fnp_target_getenv(const struct fnp_target *t, const char *name)
{
    size_t k = strlen(name);
    for (size_t i = 0; i < t->env_len; i += strlen(t->env + i) + 1)
        if (strncmp(t->env + i, name, k) == 0 && t->env[i + k] == '=')
            return t->env + i + k + 1;
    return NULL;
}

/* The state letter and token of the thread whose name starts FNP_LIVE_THREAD. */
int fnp_target_state(int pid, char *state, unsigned *token)
{
    char dir[64];
    proc_path(dir, sizeof(dir), pid, "task");
    DIR *d = opendir(dir);
    if (!d)
        return errno == ENOENT ? -ESRCH : -errno;
    int rc = -ENOENT;
    struct dirent *e;
    while (rc == -ENOENT && (e = readdir(d))) {
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        char path[384], name[32] = "";
        snprintf(path, sizeof(path), "%s/%s/comm", dir, e->d_name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue; /* a thread that ended meanwhile */
        ssize_t r = read(fd, name, sizeof(name) - 1);
        close(fd);
        if (r <= 0)
            continue;
        name[r] = 0;
        size_t p = strlen(FNP_LIVE_THREAD);
        char *end;
        if (strncmp(name, FNP_LIVE_THREAD, p) != 0 || !name[p])
            continue;
        unsigned long v = strtoul(name + p + 1, &end, 16);
        if (end != name + p + 6)
            continue;
        *state = name[p];
        *token = (unsigned)v;
        rc = 0;
    }
    closedir(d);
    return rc;
}

/* The process's state letter in /proc/PID/stat (R, S, Z, T, ...), or 0. */
static char run_state(int pid)
{
    char path[64], *stat = NULL;
    proc_path(path, sizeof(path), pid, "stat");
    if (fnp_cli_slurp(path, &stat, NULL, NULL))
        return 0;
    char *close_paren = strrchr(stat, ')');
    char c = close_paren && close_paren[1] == ' ' ? close_paren[2] : 0;
    free(stat);
    return c;
}

int fnp_target_alive(int pid)
{
    char c = run_state(pid);
    return c && c != 'Z' && c != 'X';
}

/* "user NAME" (or "uid N") the process runs as, into buf. */
static void owner(int pid, char *buf, size_t n)
{
    char path[64], *status = NULL;
    snprintf(buf, n, "another user");
    proc_path(path, sizeof(path), pid, "status");
    if (fnp_cli_slurp(path, &status, NULL, NULL))
        return;
    const char *uid = strstr(status, "\nUid:");
    if (uid) {
        unsigned long u = strtoul(uid + 5, NULL, 10);
        struct passwd *pw = getpwuid((uid_t)u);
        if (pw)
            snprintf(buf, n, "user %s", pw->pw_name);
        else
            snprintf(buf, n, "uid %lu", u);
    }
    free(status);
}

/* Whether a libfnprof.so is mapped in the process. */
static int maps_fnprof(const char *maps)
{
    for (const char *l = maps; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        const char *slash = NULL;
        for (const char *c = l; *c && *c != '\n'; c++)
            if (*c == '/')
                slash = c;
        if (slash && strncmp(slash + 1, "libfnprof.so", 12) == 0)
            return 1;
    }
    return 0;
}

/* A signal variable of the target: 0 and why when missing or refused. */
static int signal_var(const struct fnp_target *t, const char *var, char *why, size_t n)
{
    const char *v = fnp_target_getenv(t, var);
    int sig = v && *v ? fnp_signal_parse(v) : 0;
    if (!sig && v && *v)
        snprintf(why, n,
                 "%d is not armed: %s=%s is no signal fnprof takes (a name such as USR1, "
                 "or a number; not KILL, STOP or a fault)",
                 t->pid, var, v);
    return sig;
}

int fnp_target_open(struct fnp_target *t, int pid, char *why, size_t n)
{
    memset(t, 0, sizeof(*t));
    t->pid = pid;
    if (kill(pid, 0) != 0) {
        if (errno == EPERM) {
            char who[96];
            owner(pid, who, sizeof(who));
            snprintf(why, n,
                     "%d is not yours to signal (it runs as %s): run fnprof record as "
                     "that user, or as root",
                     pid, who);
        } else {
            snprintf(why, n, "no process %d is running", pid);
        }
        return -1;
    }
    if (!fnp_target_alive(pid)) {
        snprintf(why, n, "%d has ended (its parent has not reaped it yet)", pid);
        return -1;
    }
    char path[64], *maps = NULL;
    proc_path(path, sizeof(path), pid, "exe");
    ssize_t len = readlink(path, t->exe, sizeof(t->exe) - 1);
    t->exe[len > 0 ? len : 0] = 0;
    proc_path(path, sizeof(path), pid, "environ");
    int rc = fnp_cli_slurp(path, &t->env, &t->env_len, NULL);
    proc_path(path, sizeof(path), pid, "maps");
    if (!rc)
        rc = fnp_cli_slurp(path, &maps, NULL, NULL);
    if (rc) {
        if (rc == -EACCES || rc == -EPERM)
            snprintf(why, n,
                     "%d: cannot read its environment and mappings in /proc: %s (run "
                     "fnprof record as the user it runs as, or as root)",
                     pid, strerror(-rc));
        else
            snprintf(why, n, "%d: cannot read /proc/%d: %s", pid, pid, strerror(-rc));
        return -1;
    }
    char state;
    unsigned token;
    int thread = fnp_target_state(pid, &state, &token) == 0;
    /* Just started: fnprof's thread names itself once it runs. */
    const char *armed = fnp_target_getenv(t, "PROF_OUTPUT");
    for (int i = 0; i < 100 && !thread && (maps_fnprof(maps) || (armed && *armed)); i++) {
        struct timespec tick = {0, 10 * 1000 * 1000};
        nanosleep(&tick, NULL);
        thread = fnp_target_state(pid, &state, &token) == 0;
    }
    /* libfnprof.a linked in maps nothing of its own: its signal thread says it is there. */
    int loaded = maps_fnprof(maps) || thread;
    free(maps);
    if (!loaded) {
        const char *base = strrchr(t->exe, '/');
        if (base && strcmp(base + 1, "fnprof") == 0)
            snprintf(why, n,
                     "%d is the fnprof command (fnprof run?): give the pid of the "
                     "program it runs",
                     pid);
        else
            snprintf(why, n,
                     "fnprof is not loaded in %d (%s): build it with fnprof-cc or "
                     "link -lfnprof, or preload libfnprof.so, and %s",
                     pid, t->exe[0] ? t->exe : "?", ARM_HINT);
        return -1;
    }
    static const char *const vars[] = {"PROF_OUTPUT", "PROF_TOGGLE_SIGNAL", "PROF_DUMP_SIGNAL"};
    const char *miss[3];
    int nmissing = 0;
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
        const char *v = fnp_target_getenv(t, vars[i]);
        if (!v || !*v)
            miss[nmissing++] = vars[i];
    }
    char missing[128] = "";
    for (int i = 0; i < nmissing; i++) {
        size_t at = strlen(missing);
        snprintf(missing + at, sizeof(missing) - at, "%s%s",
                 i == 0              ? ""
                 : i == nmissing - 1 ? " and "
                                     : ", ",
                 miss[i]);
    }
    if (nmissing) {
        snprintf(why, n, "%d is not armed: %s %s not set in its environment; %s", pid, missing,
                 nmissing > 1 ? "are" : "is", ARM_HINT);
        return -1;
    }
    if (!(t->toggle_sig = signal_var(t, "PROF_TOGGLE_SIGNAL", why, n)) ||
        !(t->dump_sig = signal_var(t, "PROF_DUMP_SIGNAL", why, n)))
        return -1;
    if (t->toggle_sig == t->dump_sig) {
        snprintf(why, n,
                 "%d is not armed: PROF_TOGGLE_SIGNAL and PROF_DUMP_SIGNAL name the same "
                 "signal; %s",
                 pid, ARM_HINT);
        return -1;
    }
    if (!thread) {
        snprintf(why, n,
                 "%d has fnprof and the PROF_ variables, but no fnprof signal thread: "
                 "the runtime did not take them (a setuid program ignores the environment; "
                 "its stderr may say why)",
                 pid);
        return -1;
    }
    if (state == FNP_LIVE_ENDED) {
        snprintf(why, n, "%d is exiting: fnprof has written its last profile", pid);
        return -1;
    }
    return 0;
}

void fnp_target_free(struct fnp_target *t)
{
    free(t->env);
    t->env = NULL;
    t->env_len = 0;
}

static const struct fnp_target *launch_of; /* fnp_launch_detect's getter has no context */

static const char *launch_get(const char *name)
{
    return fnp_target_getenv(launch_of, name);
}

/*
 * The files the runtime may write the window to, as runtime/env.c names the dump's:
 * PROF_OUTPUT made absolute (against the process's working directory now: the runtime took
 * the one at its start), its codes expanded for that process (outname.c), ".PID" when the
 * process is below the one owning the name, ".exec<n>" after an exec, then FNP_LIVE_SUFFIX.
 * A forked child shows nothing of its own in /proc, so both names, with and without
 * ".PID", are candidates unless PROF_OWNER says which.
 */
int fnp_target_window_paths(const struct fnp_target *t, char *paths[2], size_t *count, char *why,
                            size_t n)
{
    *count = 0;
    const char *out = fnp_target_getenv(t, "PROF_OUTPUT");
    char *abs = NULL;
    if (out[0] == '/') {
        abs = strdup(out);
    } else {
        char path[64], cwd[PATH_MAX];
        proc_path(path, sizeof(path), t->pid, "cwd");
        ssize_t len = readlink(path, cwd, sizeof(cwd) - 1);
        if (len <= 0) {
            snprintf(why, n,
                     "%d: PROF_OUTPUT=%s is relative and its working directory cannot "
                     "be read: %s",
                     t->pid, out, strerror(errno));
            return -1;
        }
        cwd[len] = 0;
        if (asprintf(&abs, "%s/%s", cwd, out) < 0)
            abs = NULL;
    }
    char host[256] = "";
    if (gethostname(host, sizeof(host) - 1) != 0)
        host[0] = 0;
    struct fnp_outname_vars v = {.pid = t->pid, .host = host};
    launch_of = t;
    fnp_launch_detect(&v.launch, launch_get);
    char *base = abs ? fnp_outname(abs, &v) : NULL;
    free(abs);
    if (!base) {
        snprintf(why, n, "%s", strerror(ENOMEM));
        return -1;
    }
    char image[32] = "";
    const char *exec_mark = fnp_target_getenv(t, "PROF_EXEC");
    const char *colon = exec_mark ? strchr(exec_mark, ':') : NULL;
    if (colon && atoi(exec_mark) == t->pid && atoi(colon + 1) > 0)
        snprintf(image, sizeof(image), ".exec%d", atoi(colon + 1));
    const char *owner_mark = fnp_target_getenv(t, "PROF_OWNER");
    const char *oc = owner_mark ? strchr(owner_mark, ':') : NULL;
    int below = oc && strcmp(oc + 1, base) == 0 && atoi(owner_mark) != t->pid;
    int has_p = fnp_outname_has(fnp_target_getenv(t, "PROF_OUTPUT"), 'p');
    int rc = 0;
    /* The runtime appends ".PID" only without %p, when it is below the owner (or forked). */
    if ((!below || has_p) && asprintf(&paths[*count], "%s%s" FNP_LIVE_SUFFIX, base, image) >= 0)
        ++*count;
    else if (!below || has_p)
        rc = -1;
    if (!rc && !has_p) {
        if (asprintf(&paths[*count], "%s.%d%s" FNP_LIVE_SUFFIX, base, t->pid, image) >= 0)
            ++*count;
        else
            rc = -1;
    }
    free(base);
    if (rc) {
        while (*count)
            free(paths[--*count]);
        snprintf(why, n, "%s", strerror(ENOMEM));
    }
    return rc;
}
