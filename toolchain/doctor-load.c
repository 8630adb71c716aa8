/* SPDX-License-Identifier: MIT */
/*
 * fnprof doctor: which shared objects a program loads, and in which order, as its dynamic
 * loader decides. The loader is run in trace mode (LD_TRACE_LOADED_OBJECTS=1), as ldd runs
 * it: it finds and maps every library by its real rules (LD_LIBRARY_PATH, DT_RUNPATH,
 * ld.so.cache, hwcaps folders, LD_PRELOAD), prints the list and exits before a single
 * instruction of the program runs. Parsing DT_NEEDED ourselves would mean rewriting those
 * rules, and getting them subtly wrong.
 *
 * The list comes in the loader's load order: preloaded objects, then the needed ones
 * breadth first. That is also the order in which it searches them for a symbol, right after
 * the executable.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "doctor.h"

void fnp_doctor_libs_free(struct fnp_doctor_libs *libs)
{
    if (!libs)
        return;
    for (size_t i = 0; i < libs->n; i++) {
        free(libs->v[i].name);
        free(libs->v[i].path);
    }
    free(libs->v);
    free(libs->error);
    memset(libs, 0, sizeof *libs);
}

static int add_lib(struct fnp_doctor_libs *libs, const char *name, size_t name_len,
                   const char *path, size_t path_len)
{
    struct fnp_doctor_lib *v = realloc(libs->v, (libs->n + 1) * sizeof *v);
    if (!v)
        return -ENOMEM;
    libs->v = v;
    struct fnp_doctor_lib *l = &v[libs->n];
    l->name = strndup(name, name_len);
    l->path = path ? strndup(path, path_len) : NULL;
    if (!l->name || (path && !l->path)) {
        free(l->name);
        free(l->path);
        return -ENOMEM;
    }
    libs->n++;
    return 0;
}

/* One line of the trace: "\tNAME => PATH (0xADDR)", "\tNAME => not found", "\tPATH
 * (0xADDR)" (the loader itself, or an object named by a path), or "\tNAME (0xADDR)" (the
 * vDSO, which is no file: skipped). */
static int parse_line(struct fnp_doctor_libs *libs, char *line)
{
    while (*line == '\t' || *line == ' ')
        line++;
    size_t len = strlen(line);
    while (len && (line[len - 1] == '\n' || line[len - 1] == ' '))
        line[--len] = '\0';
    char *addr = strstr(line, " (0x");
    if (addr && line[len - 1] == ')') {
        /* The last " (0x" is the address: a path may hold the same characters. */
        for (char *p = addr; (p = strstr(p + 1, " (0x"));)
            addr = p;
        *addr = '\0';
        len = (size_t)(addr - line);
    }
    char *arrow = strstr(line, " => ");
    if (arrow) {
        const char *path = arrow + 4;
        if (strcmp(path, "not found") == 0)
            return add_lib(libs, line, (size_t)(arrow - line), NULL, 0);
        return add_lib(libs, line, (size_t)(arrow - line), path, strlen(path));
    }
    if (line[0] == '/')
        return add_lib(libs, line, len, line, len);
    return 0;
}

/* The first line of what the loader said on stderr, for the error message. */
static char *first_line(FILE *f)
{
    char buf[512];
    rewind(f);
    if (!fgets(buf, sizeof buf, f))
        return NULL;
    buf[strcspn(buf, "\n")] = '\0';
    return buf[0] ? strdup(buf) : NULL;
}

int fnp_doctor_libs_load(const char *interp, const char *program, const char *preload,
                         struct fnp_doctor_libs *out)
{
    memset(out, 0, sizeof *out);
    int fds[2];
    FILE *err = tmpfile();
    if (!err || pipe2(fds, O_CLOEXEC) != 0) {
        int e = errno;
        if (err)
            fclose(err);
        return -e;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(fds[0]);
        close(fds[1]);
        fclose(err);
        return -e;
    }
    if (pid == 0) {
        dup2(fds[1], STDOUT_FILENO);
        dup2(fileno(err), STDERR_FILENO);
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0)
            dup2(devnull, STDIN_FILENO);
        setenv("LD_TRACE_LOADED_OBJECTS", "1", 1);
        /* ldd's other switches change what is printed: the plain list is wanted. */
        unsetenv("LD_TRACE_PRELINKING");
        unsetenv("LD_WARN");
        unsetenv("LD_VERBOSE");
        if (preload)
            setenv("LD_PRELOAD", preload, 1);
        char *argv[] = {(char *)interp, (char *)program, NULL};
        execv(interp, argv);
        dprintf(STDERR_FILENO, "%s: %s\n", interp, strerror(errno));
        _exit(127);
    }
    close(fds[1]);
    FILE *in = fdopen(fds[0], "r");
    int rc = in ? 0 : -errno;
    char *line = NULL;
    size_t cap = 0;
    while (in && getline(&line, &cap, in) > 0)
        if (!rc)
            rc = parse_line(out, line);
    free(line);
    if (in)
        fclose(in);
    else
        close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    out->error = first_line(err);
    fclose(err);
    if (!rc && out->n == 0 && (!WIFEXITED(status) || WEXITSTATUS(status) != 0))
        rc = -ENOEXEC;
    return rc;
}
