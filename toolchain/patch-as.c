/* SPDX-License-Identifier: MIT */
/*
 * fnprof-as: installed as `as` in the patchable build's directory (<libexecdir>/fnprof/
 * patchable/, build tree: build/patchable/), which `fnprof-cc --patchable` and the
 * fnprof-patchable pkg-config module hand to gcc with -B. gcc's driver runs the `as` it finds
 * there; this one rewrites gcc's profiling sites (patch-sites.c) and runs the real assembler
 * with the same arguments on the rewritten text (docs/patchable.md says why).
 *
 *   as [ASSEMBLER OPTIONS] [FILE...]      no FILE, or "-": standard input (gcc -pipe)
 *
 * An input with no site in it is handed to the assembler as it was (same name: an assembly
 * file's own debug information names it); standard input, and an input that changed, go to a
 * temporary file (O_EXCL), removed when the assembler is done, also on SIGINT, SIGTERM and
 * SIGHUP. The real assembler is the first `as` in PATH outside this program's directory (and
 * outside any other filter's, FNPROF_AS_SKIP: two copies in PATH would run each other),
 * else /usr/bin/as. Its exit status, or its signal, is this program's. A failure of the
 * filter's own: one `fnprof-as:` line on stderr, exit 1.
 */
#include "patch-as.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* The directories of the filters already run for this assembly, ':'-separated. */
#define SKIP_VAR "FNPROF_AS_SKIP"
#define FALLBACK_AS "/usr/bin/as"

extern char **environ;

/* The temporary files: written by main before the handlers can run, read by them. */
#define MAX_TEMPS 64
static char temps[MAX_TEMPS][PATH_MAX];
static volatile sig_atomic_t ntemps;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
    char line[1024];
    int n = snprintf(line, sizeof(line), "fnprof-as: ");
    va_list ap;
    va_start(ap, fmt);
    n += vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
    va_end(ap);
    if ((size_t)n >= sizeof(line) - 1)
        n = (int)sizeof(line) - 2;
    line[n++] = '\n';
    ssize_t w = write(2, line, (size_t)n);
    (void)w;
}

static void remove_temps(void)
{
    for (int i = 0; i < ntemps; i++)
        unlink(temps[i]);
}

static void on_signal(int sig)
{
    remove_temps();
    signal(sig, SIG_DFL);
    raise(sig);
}

/* gas's options whose value is the next argument: the value is not an input file. */
static int takes_value(const char *s)
{
    static const char *const opts[] = {
        "-o",   "-I", "--defsym", "-defsym", "--debug-prefix-map", "-debug-prefix-map",
        "--MD", "-MD"};
    for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
        if (strcmp(s, opts[i]) == 0)
            return 1;
    return 0;
}

static int read_all(int fd, char **text, size_t *len)
{
    size_t cap = 1 << 16, n = 0;
    char *p = malloc(cap);
    if (!p)
        return -1;
    for (;;) {
        if (n == cap) {
            char *q = realloc(p, cap * 2);
            if (!q) {
                free(p);
                return -1;
            }
            p = q;
            cap *= 2;
        }
        ssize_t got = read(fd, p + n, cap - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            int e = errno;
            free(p);
            errno = e;
            return -1;
        }
        if (got == 0)
            break;
        n += (size_t)got;
    }
    *text = p;
    *len = n;
    return 0;
}

/* Writes text into a new temporary file, registered for removal; its name, or NULL. */
static const char *write_temp(const char *text, size_t len)
{
    if (ntemps == MAX_TEMPS) {
        fail("more than %d inputs", MAX_TEMPS);
        return NULL;
    }
    const char *dir = getenv("TMPDIR");
    if (!dir || dir[0] != '/')
        dir = "/tmp";
    char *name = temps[ntemps];
    if (snprintf(name, PATH_MAX, "%s/fnprof-as-XXXXXX.s", dir) >= PATH_MAX) {
        fail("TMPDIR too long");
        return NULL;
    }
    /* mkostemps creates with O_EXCL, mode 0600. */
    int fd = mkostemps(name, 2, O_CLOEXEC);
    if (fd < 0) {
        fail("%s: %s", name, strerror(errno));
        return NULL;
    }
    ntemps++;
    for (size_t off = 0; off < len;) {
        ssize_t w = write(fd, text + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0) {
            fail("%s: %s", name, strerror(errno));
            close(fd);
            return NULL;
        }
        off += (size_t)w;
    }
    if (close(fd) < 0) {
        fail("%s: %s", name, strerror(errno));
        return NULL;
    }
    return name;
}

/* Reads the input (NULL: standard input), rewrites it, and returns what the assembler is to
 * read instead: name itself when nothing changed, else a temporary file; NULL on failure. */
static const char *filter_input(struct fnp_patch_rewrite *rw, const char *name)
{
    int fd = name ? open(name, O_RDONLY | O_CLOEXEC) : 0;
    if (fd < 0) {
        /* The assembler's to report, with its own words. */
        return name;
    }
    char *text;
    size_t len;
    int rc = read_all(fd, &text, &len);
    int err = errno;
    if (name)
        close(fd);
    if (rc < 0) {
        if (name && err == EISDIR)
            return name;
        fail("%s: %s", name ? name : "standard input", strerror(err));
        return NULL;
    }
    char *out;
    size_t outlen;
    int changed;
    if (fnp_patch_rewrite(rw, text, len, &out, &outlen, &changed) < 0) {
        free(text);
        fail("%s", strerror(ENOMEM));
        return NULL;
    }
    const char *result = name && !changed ? name : write_temp(out, outlen);
    free(text);
    return result;
}

/* The real directory holding path, into out; 0 or -1. */
static int real_dir(const char *path, char *out)
{
    char real[PATH_MAX];
    if (!realpath(path, real))
        return -1;
    char *slash = strrchr(real, '/');
    if (slash == real)
        slash[1] = '\0';
    else if (slash)
        *slash = '\0';
    snprintf(out, PATH_MAX, "%s", real);
    return 0;
}

static int in_list(const char *list, const char *dir)
{
    size_t n = strlen(dir);
    for (const char *p = list; p && *p;) {
        const char *end = strchr(p, ':');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && memcmp(p, dir, n) == 0)
            return 1;
        p = end ? end + 1 : NULL;
    }
    return 0;
}

/* The first executable `as` in PATH whose directory is not in skip; else FALLBACK_AS. */
static int find_as(const char *skip, char *out)
{
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    for (const char *p = path; p;) {
        const char *end = strchr(p, ':');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char cand[PATH_MAX], dir[PATH_MAX];
        snprintf(cand, sizeof(cand), "%.*s/as", (int)len, len ? p : ".");
        struct stat st;
        if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0 &&
            real_dir(cand, dir) == 0 && !in_list(skip, dir)) {
            snprintf(out, PATH_MAX, "%s", cand);
            return 0;
        }
        p = end ? end + 1 : NULL;
    }
    char dir[PATH_MAX];
    if (access(FALLBACK_AS, X_OK) == 0 && real_dir(FALLBACK_AS, dir) == 0 && !in_list(skip, dir)) {
        snprintf(out, PATH_MAX, "%s", FALLBACK_AS);
        return 0;
    }
    return -1;
}

int main(int argc, char **argv)
{
    /* Our directory joins the list the filters skip, for the assembler we run too. */
    char self[PATH_MAX];
    if (real_dir("/proc/self/exe", self) < 0) {
        fail("/proc/self/exe: %s", strerror(errno));
        return 1;
    }
    const char *old = getenv(SKIP_VAR);
    size_t skiplen = strlen(self) + (old ? strlen(old) + 1 : 0) + 1;
    char *skip = malloc(skiplen);
    char **args = calloc((size_t)argc + 2, sizeof(*args));
    if (!skip || !args) {
        fail("%s", strerror(ENOMEM));
        return 1;
    }
    snprintf(skip, skiplen, "%s%s%s", self, old && *old ? ":" : "", old && *old ? old : "");
    char real_as[PATH_MAX];
    if (find_as(skip, real_as) < 0) {
        fail("no assembler `as` in PATH (outside %s) nor at %s", self, FALLBACK_AS);
        return 1;
    }
    if (setenv(SKIP_VAR, skip, 1) < 0) {
        fail("%s", strerror(errno));
        return 1;
    }

    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);

    struct fnp_patch_rewrite rw;
    if (fnp_patch_rewrite_new(&rw) < 0) {
        fail("%s", strerror(ENOMEM));
        return 1;
    }
    /* The inputs, in order (the assembler reads them as one text). */
    int status = 1, ninputs = 0, options = 1;
    args[0] = real_as;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        args[i] = argv[i];
        if (options && strcmp(s, "--") == 0) {
            options = 0;
        } else if (options && s[0] == '-' && s[1] != '\0') {
            if (takes_value(s) && i + 1 < argc) {
                i++;
                args[i] = argv[i];
            }
        } else {
            ninputs++;
            const char *in = filter_input(&rw, strcmp(s, "-") == 0 ? NULL : s);
            if (!in)
                goto out;
            args[i] = (char *)in;
        }
    }
    if (ninputs == 0) {
        const char *in = filter_input(&rw, NULL);
        if (!in)
            goto out;
        args[argc] = (char *)in;
    }

    pid_t pid;
    int rc = posix_spawn(&pid, real_as, NULL, NULL, args, environ);
    if (rc != 0) {
        fail("%s: %s", real_as, strerror(rc));
        goto out;
    }
    int ws;
    while (waitpid(pid, &ws, 0) < 0)
        if (errno != EINTR) {
            fail("waitpid: %s", strerror(errno));
            goto out;
        }
    remove_temps();
    if (WIFSIGNALED(ws)) {
        /* Killed as the assembler was: the driver reports it the same way. */
        signal(WTERMSIG(ws), SIG_DFL);
        raise(WTERMSIG(ws));
        status = 128 + WTERMSIG(ws);
    } else {
        status = WEXITSTATUS(ws);
    }
out:
    remove_temps();
    fnp_patch_rewrite_free(&rw);
    return status;
}
