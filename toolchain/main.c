/* SPDX-License-Identifier: MIT */
/*
 * fnprof: the command. Dispatches to one cmd-<name>.c per subcommand (uftrace cmds/).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "libdir.h"

#ifndef FNPROF_VERSION_STRING
#error "the build passes FNPROF_VERSION_STRING, the CMake project version"
#endif

static const struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} commands[] = {
    {"report", fnp_cmd_report, "print a profile the way python3 -m pstats does"},
    {"run", fnp_cmd_run, "run a program with libfnprof.so preloaded"},
    {"convert", fnp_cmd_convert, "write a profile for another tool: flame graph, callgrind, ..."},
    {"merge", fnp_cmd_merge, "add profiles together, like pstats.Stats(a, b)"},
    {"ranks", fnp_cmd_ranks, "compare one program's profiles across MPI ranks: the imbalance"},
    {"symbolize", fnp_cmd_symbolize, "make the profile from a raw snapshot (a killed process)"},
    {"record", fnp_cmd_record, "profile a running process, started armed, for N seconds"},
    {"diff", fnp_cmd_diff, "compare two profiles, function by function; gate CI on the change"},
    {"doctor", fnp_cmd_doctor, "what a program's profile will and will not see"},
    {"suggest-filter", fnp_cmd_suggest_filter,
     "a filter file for the functions too cheap to profile"},
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

void fnp_cli_put_text(FILE *out, const char *str)
{
    for (const unsigned char *c = (const unsigned char *)str; *c; c++)
        putc(*c < 0x20 || *c == 0x7f ? '?' : *c, out);
}

char *fnp_cli_std_string(const struct fnp_key *k)
{
    char *s = NULL;
    int n;
    /* pstats prints C functions ('~', 0, '<built-in method x>') as {built-in method x}. */
    if (!strcmp(k->file, "~") && k->line == 0) {
        size_t len = strlen(k->name);
        if (len >= 2 && k->name[0] == '<' && k->name[len - 1] == '>')
            n = asprintf(&s, "{%.*s}", (int)(len - 2), k->name + 1);
        else
            n = asprintf(&s, "%s", k->name);
    } else {
        n = asprintf(&s, "%s:%" PRIu32 "(%s)", k->file, k->line, k->name);
    }
    return n < 0 ? NULL : s;
}

void fnp_cli_put_function(FILE *out, const struct fnp_key *k)
{
    char *name = fnp_cli_std_string(k);
    fnp_cli_put_text(out, name ? name : k->name);
    free(name);
}

int fnp_cli_option_error(const char *cmd, int c, char **argv)
{
    if (c == ':')
        return fnp_cli_usage_error(cmd, "option '%s' needs a value", argv[optind - 1]);
    if (optopt)
        return fnp_cli_usage_error(cmd, "unknown option '-%c'", optopt);
    return fnp_cli_usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
}

int fnp_cli_parse_limit(const char *s, size_t *out)
{
    if (!*s || strspn(s, "0123456789") != strlen(s) || strlen(s) > 18)
        return -1;
    *out = (size_t)strtoull(s, NULL, 10);
    return 0;
}

const char *fnp_cli_u128(unsigned __int128 v, char *buf, size_t n)
{
    char *o = buf + n - 1;
    *o = '\0';
    do {
        *--o = (char)('0' + (int)(v % 10));
        v /= 10;
    } while (v);
    return o;
}

void fnp_cli_error(const char *cmd, const char *fmt, ...)
{
    /* Built whole, then written once: one line even if something else writes to stderr. */
    char line[1024];
    int n = cmd ? snprintf(line, sizeof(line), "fnprof: %s: ", cmd)
                : snprintf(line, sizeof(line), "fnprof: ");
    va_list ap;
    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < sizeof(line))
        vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s\n", line);
}

int fnp_cli_usage_error(const char *cmd, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (cmd)
        fnp_cli_error(cmd, "%s (see 'fnprof %s --help')", msg, cmd);
    else
        fnp_cli_error(NULL, "%s (see 'fnprof --help')", msg);
    return FNP_EXIT_USAGE;
}

static void usage(FILE *out)
{
    fprintf(out, "usage: fnprof <command> [options] [arguments]\n"
                 "       fnprof --help | --version | --libdir\n"
                 "\n"
                 "A deterministic function profiler for C and C++ that writes Python pstats\n"
                 "files (snakeviz, gprof2dot, pyprof2calltree and pstats read them).\n"
                 "\n"
                 "Commands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(out, "  %-14s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\n"
                 "Options:\n"
                 "  -h, --help     show this help\n"
                 "  -V, --version  print fnprof's version\n"
                 "      --libdir   print the directory holding libfnprof.so, for\n"
                 "                 LD_PRELOAD=\"$(fnprof --libdir)/libfnprof.so\"\n"
                 "\n"
                 "'fnprof <command> --help' describes a command.\n");
}

static int dispatch(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return FNP_EXIT_USAGE;
    }
    const char *arg = argv[1];
    if (!strcmp(arg, "--help") || !strcmp(arg, "-h") || !strcmp(arg, "help")) {
        /* "fnprof help report" is "fnprof report --help". */
        if (!strcmp(arg, "help") && argc > 2) {
            char *help_argv[] = {argv[2], "--help", NULL};
            for (size_t i = 0; i < NCOMMANDS; i++)
                if (!strcmp(argv[2], commands[i].name))
                    return commands[i].run(2, help_argv);
            return fnp_cli_usage_error(NULL, "unknown command '%s'", argv[2]);
        }
        usage(stdout);
        return FNP_EXIT_OK;
    }
    if (!strcmp(arg, "--version") || !strcmp(arg, "-V")) {
        printf("fnprof %s\n", FNPROF_VERSION_STRING);
        return FNP_EXIT_OK;
    }
    if (!strcmp(arg, "--libdir")) {
        /* Found as fnprof run finds it: the installed layout, wherever the tree was moved. */
        char lib[4096], why[512];
        if (fnp_runtime_file("libfnprof.so", lib, sizeof(lib), why, sizeof(why)) < 0) {
            fnp_cli_error(NULL, "%s", why);
            return FNP_EXIT_FAILURE;
        }
        *strrchr(lib, '/') = '\0';
        printf("%s\n", lib);
        return FNP_EXIT_OK;
    }
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (!strcmp(arg, commands[i].name))
            return commands[i].run(argc - 1, argv + 1);
    if (arg[0] == '-')
        return fnp_cli_usage_error(NULL, "unknown option '%s'", arg);
    return fnp_cli_usage_error(NULL, "unknown command '%s'", arg);
}

/* SIGINT, SIGTERM and SIGHUP end the command as they would have, less the temporary file
 * an -o being written leaves behind (fnp_write_file_atomic's): the handler removes it, and
 * the signal, back to its default action, ends the process when the handler returns. */
static void on_ending_signal(int sig)
{
    int saved = errno;
    fnp_write_file_abandon();
    raise(sig); /* blocked until the handler returns; SA_RESETHAND restored SIG_DFL */
    errno = saved;
}

static void clean_up_on_signals(void)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
        struct sigaction old,
            act = {.sa_handler = on_ending_signal, .sa_flags = SA_RESETHAND | SA_RESTART};
        sigemptyset(&act.sa_mask);
        /* One started ignored (nohup, a background job) stays ignored. */
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL &&
            !(old.sa_flags & SA_SIGINFO))
            sigaction(sigs[i], &act, NULL);
    }
}

int main(int argc, char **argv)
{
    clean_up_on_signals();
    int rc = dispatch(argc, argv);
    /* A report piped into a full disk must not exit 0 (coreutils' close_stdout). */
    if (fflush(stdout) || ferror(stdout)) {
        fnp_cli_error(NULL, "standard output: %s", strerror(errno));
        rc = FNP_EXIT_FAILURE;
    }
    return rc;
}
