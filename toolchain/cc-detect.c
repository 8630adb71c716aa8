/* SPDX-License-Identifier: MIT */
/*
 * gcc or clang? The answer picks the flags that keep system headers out of the profile, and is
 * needed on every compile of a build, so it must cost next to nothing: a probe runs the
 * preprocessor once (a few milliseconds, several percent of a small file's compile), so its
 * answer is kept in the user's cache directory, keyed by what would change it: each word of
 * the compiler command, resolved in PATH, with the file's size, mtime and inode. Switching
 * /usr/bin/cc from gcc to clang (update-alternatives) changes the inode behind the same name.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cc-wrapper.h"

/* Where `name` runs from: itself when it has a slash, else the first PATH entry with an
 * executable of that name, as execvp searches. 0, or -1 when none. */
static int resolve(const char *name, char *out, size_t n, struct stat *st)
{
    if (strchr(name, '/')) {
        snprintf(out, n, "%s", name);
        return stat(out, st) == 0 ? 0 : -1;
    }
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        const char *end = strchr(path, ':');
        size_t len = end ? (size_t)(end - path) : strlen(path);
        if (len == 0)
            snprintf(out, n, "./%s", name); /* an empty entry is the working directory */
        else
            snprintf(out, n, "%.*s/%s", (int)len, path, name);
        if (stat(out, st) == 0 && S_ISREG(st->st_mode) && access(out, X_OK) == 0)
            return 0;
        if (!end)
            break;
        path = end + 1;
    }
    return -1;
}

/* The cache key: one line naming every word and, for those that are programs, the file
 * behind it. Returns its length, or -1 when it does not fit (then nothing is cached). */
static int cache_key(char *const *words, size_t n, char *key, size_t size)
{
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        char path[PATH_MAX];
        struct stat st;
        int w;
        if (words[i][0] != '-' && resolve(words[i], path, sizeof(path), &st) == 0)
            w = snprintf(key + len, size - len, "%s=%s:%llu:%llu:%lld.%09ld ", words[i], path,
                         (unsigned long long)st.st_ino, (unsigned long long)st.st_size,
                         (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
        else
            w = snprintf(key + len, size - len, "%s ", words[i]);
        if (w < 0 || (size_t)w >= size - len)
            return -1;
        len += (size_t)w;
    }
    return (int)len;
}

/* $XDG_CACHE_HOME/fnprof/cc-kind, else $HOME/.cache/fnprof/cc-kind; 0 or -1. */
static int cache_dir(char *out, size_t n)
{
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    int w;
    if (xdg && xdg[0] == '/')
        w = snprintf(out, n, "%s/fnprof/cc-kind", xdg);
    else if (home && home[0] == '/')
        w = snprintf(out, n, "%s/.cache/fnprof/cc-kind", home);
    else
        return -1;
    return w > 0 && (size_t)w < n ? 0 : -1;
}

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static const char *kind_name(enum fnp_cc_kind k)
{
    return k == FNP_CC_KIND_GCC ? "gcc" : k == FNP_CC_KIND_CLANG ? "clang" : "other";
}

static int kind_from_name(const char *s, enum fnp_cc_kind *k)
{
    if (strcmp(s, "gcc") == 0)
        *k = FNP_CC_KIND_GCC;
    else if (strcmp(s, "clang") == 0)
        *k = FNP_CC_KIND_CLANG;
    else if (strcmp(s, "other") == 0)
        *k = FNP_CC_KIND_OTHER;
    else
        return -1;
    return 0;
}

/* The file holds "<key>\n<kind> <arch> <clang major>\n", arch "x86_64" or "other"; a hash
 * collision shows as a different key, a file written before --patchable needed the target as
 * a line of the kind alone (then the probe runs again). */
static int cache_read(const char *file, const char *key, enum fnp_cc_kind *k,
                      struct fnp_cc_target *t)
{
    int fd = open(file, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    char buf[8192];
    ssize_t got = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (got <= 0)
        return -1;
    buf[got] = '\0';
    size_t klen = strlen(key);
    if ((size_t)got < klen + 2 || memcmp(buf, key, klen) != 0 || buf[klen] != '\n')
        return -1;
    char *kind = buf + klen + 1;
    kind[strcspn(kind, "\n")] = '\0';
    char name[16], arch[16];
    if (sscanf(kind, "%15s %15s %d", name, arch, &t->clang_major) != 3)
        return -1;
    t->x86_64 = strcmp(arch, "x86_64") == 0;
    return kind_from_name(name, k);
}

static void mkdirs(char *dir)
{
    for (char *p = dir + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(dir, 0777);
            *p = '/';
        }
    mkdir(dir, 0777);
}

/* Whole or not at all: a parallel build's other wrappers may read it meanwhile. */
static void cache_write(char *dir, const char *file, const char *key, enum fnp_cc_kind k,
                        const struct fnp_cc_target *t)
{
    mkdirs(dir);
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", file) >= (int)sizeof(tmp))
        return;
    /* A name nobody can guess, created O_EXCL (mode 0600, a cache of one user's): a
     * symlink planted beside the cache (a shared or wrongly owned folder) is never
     * written through. */
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0)
        return;
    FILE *f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        unlink(tmp);
        return;
    }
    fprintf(f, "%s\n%s %s %d\n", key, kind_name(k), t->x86_64 ? "x86_64" : "other", t->clang_major);
    if (fclose(f) != 0 || rename(tmp, file) != 0)
        unlink(tmp);
}

/* Runs `<words> -dM -E -x c /dev/null` and reads the predefined macros. -1 when it cannot
 * run or fails (then nothing is cached: the next command tries again). */
static int probe(char *const *words, size_t n, enum fnp_cc_kind *k, struct fnp_cc_target *t)
{
    static char *const tail[] = {"-dM", "-E", "-x", "c", "/dev/null"};
    size_t nt = sizeof(tail) / sizeof(tail[0]);
    char **argv = calloc(n + nt + 1, sizeof(*argv));
    if (!argv)
        return -1;
    memcpy(argv, words, n * sizeof(*argv));
    memcpy(argv + n, tail, nt * sizeof(*argv));

    int fds[2];
    if (pipe2(fds, O_CLOEXEC) < 0) {
        free(argv);
        return -1;
    }
    pid_t pid = fnp_cc_spawn(argv, fds[1]);
    free(argv);
    close(fds[1]);
    if (pid < 0) {
        close(fds[0]);
        return -1;
    }
    /* Some thousand bytes of "#define X Y" lines; look at whole lines only. */
    int clang = 0, gnuc = 0, x86 = 0, major = 0;
    char line[4096];
    FILE *out = fdopen(fds[0], "r");
    if (out) {
        while (fgets(line, sizeof(line), out)) {
            if (strncmp(line, "#define __clang__ ", 18) == 0)
                clang = 1;
            else if (strncmp(line, "#define __GNUC__ ", 17) == 0)
                gnuc = 1;
            else if (strncmp(line, "#define __x86_64__ ", 19) == 0)
                x86 = 1;
            else if (strncmp(line, "#define __clang_major__ ", 24) == 0)
                major = atoi(line + 24);
        }
        fclose(out);
    } else {
        close(fds[0]);
    }
    if (fnp_cc_wait(pid) < 0)
        return -1;
    *k = clang ? FNP_CC_KIND_CLANG : gnuc ? FNP_CC_KIND_GCC : FNP_CC_KIND_OTHER;
    t->x86_64 = x86;
    t->clang_major = clang ? major : 0;
    return 0;
}

enum fnp_cc_kind fnp_cc_detect(char *const *words, size_t n, struct fnp_cc_target *t)
{
    enum fnp_cc_kind k;
    struct fnp_cc_target ignored;
    if (!t)
        t = &ignored;
        /* Told, not probed: the target is taken to be the wrapper's own, clang a recent one. */
#ifdef __x86_64__
    t->x86_64 = 1;
#else
    t->x86_64 = 0;
#endif
    t->clang_major = 0;
    const char *forced = getenv("FNPROF_CC_KIND");
    if (forced && *forced) {
        if (kind_from_name(forced, &k) == 0)
            return k;
        fnp_cc_error("FNPROF_CC_KIND=%s: not gcc, clang or other; detecting", forced);
    }

    char key[4096], dir[PATH_MAX], file[PATH_MAX + 32];
    int cacheable = cache_key(words, n, key, sizeof(key)) >= 0 && cache_dir(dir, sizeof(dir)) == 0;
    if (cacheable) {
        snprintf(file, sizeof(file), "%s/%016llx", dir, (unsigned long long)fnv1a(key));
        if (cache_read(file, key, &k, t) == 0)
            return k;
    }
    if (probe(words, n, &k, t) < 0)
        return FNP_CC_KIND_OTHER;
    if (cacheable)
        cache_write(dir, file, key, k, t);
    return k;
}
