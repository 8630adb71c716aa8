/* SPDX-License-Identifier: MIT */
/*
 * toolchain/: the fnprof command. main.c dispatches to one cmd-<name>.c per subcommand;
 * load.c reads profiles for the subcommands that take them.
 *
 * Exit codes (docs/conventions.md): 0 ok, 1 failure, 2 usage. Errors are one line on stderr,
 * "fnprof: <cmd>: <path>: <why>".
 */
#ifndef FNPROF_CLI_H
#define FNPROF_CLI_H

#include <stdio.h>
#include <sys/stat.h>

#include "profile.h"

enum {
    FNP_EXIT_OK = 0,
    FNP_EXIT_FAILURE = 1,
    FNP_EXIT_USAGE = 2,
};

/* Each takes the arguments from the subcommand's name on (argv[0] is "report", ...) and
 * returns the exit status; run returns only when it could not exec. */
int fnp_cmd_report(int argc, char **argv);
int fnp_cmd_run(int argc, char **argv);
int fnp_cmd_merge(int argc, char **argv);
int fnp_cmd_convert(int argc, char **argv);
int fnp_cmd_symbolize(int argc, char **argv);
int fnp_cmd_diff(int argc, char **argv);
int fnp_cmd_doctor(int argc, char **argv);
int fnp_cmd_suggest_filter(int argc, char **argv);
int fnp_cmd_ranks(int argc, char **argv);
int fnp_cmd_record(int argc, char **argv);

/* main.c: "fnprof: <cmd>: " and the message as one line on stderr. */
void fnp_cli_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* main.c: v in decimal, written at the end of buf (n bytes, 40 hold any value); returns
 * where it starts. Python ints do not overflow: a hostile file's totals may pass 2^64. */
const char *fnp_cli_u128(unsigned __int128 v, char *buf, size_t n);

/* main.c: str with its control characters as '?': text from a file cannot start a line of
 * its own that would pass for one of the command's. */
void fnp_cli_put_text(FILE *out, const char *str);

/* main.c: the function as pstats' func_std_string names it, "file:line(name)" or
 * "{name}" for a C function; malloc'd, NULL when out of memory. */
char *fnp_cli_std_string(const struct fnp_key *k);
/* main.c: that name, with fnp_cli_put_text's guard against control characters. */
void fnp_cli_put_function(FILE *out, const struct fnp_key *k);

/* main.c: the usage error for what getopt_long (with opterr 0 and a leading ':' in its
 * short options) returned as c, ':' or '?'; returns FNP_EXIT_USAGE. */
int fnp_cli_option_error(const char *cmd, int c, char **argv);

/* main.c: a --limit value, a decimal count (at most 18 digits); 0, or -1 when malformed. */
int fnp_cli_parse_limit(const char *s, size_t *out);

/* main.c: a usage error: the message, then where help is; returns FNP_EXIT_USAGE. */
int fnp_cli_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* which.c: prog as execvp would find it (a name without '/' is looked up in PATH, an empty
 * entry being the working directory), absolute and with its symlinks resolved, in out
 * (PATH_MAX bytes). Returns 0, or -errno (-ENOENT: not on PATH). */
int fnp_cli_which(const char *prog, char *out);

/* load.c: fnp_cli_read_file without its message: 0, or -errno (-EISDIR, -EFBIG, ...).
 * *data is NUL-terminated past its *len bytes (a /proc file's text, as strstr reads it);
 * len and st may be NULL. */
int fnp_cli_slurp(const char *path, char **data, size_t *len, struct stat *st);

/* load.c: reads the whole file at path (at most about FNP_MARSHAL_MAX_INPUT bytes) into
 * *data (caller frees). On failure prints "fnprof: <cmd>: <path>: <why>" and returns -1.
 * st (may be NULL) gets the file's fstat. */
int fnp_cli_read_file(const char *cmd, const char *path, char **data, size_t *len, struct stat *st);

/* load.c: writes len bytes of data to path whole, by fnp_write_file_atomic's rules (a
 * temporary renamed over a regular file; FIFOs and devices in place). Returns its 0 or
 * negative errno, for fnp_write_file_strerror; prints nothing. */
int fnp_cli_write_file(const char *path, const void *data, size_t len);

/* load.c: reads the pstats file at path and adds its numbers to p (fnp_pstats_read). On
 * failure prints "fnprof: <cmd>: <path>: <why>" and returns -1, p unchanged. st (may be
 * NULL) gets the file's fstat. */
int fnp_cli_load(const char *cmd, const char *path, struct fnp_profile *p, struct stat *st);

/* load.c: 0 when a and b are both memory profiles (PROF_MEMORY: "profile" is "memory" in
 * their metadata) or both timing ones; else prints why they cannot be added or compared
 * and returns -1. */
int fnp_cli_same_kind(const char *cmd, const char *a_path, const struct fnp_profile *a,
                      const char *b_path, const struct fnp_profile *b);

/* record-target.c: the process fnprof record records, as /proc shows it (no ptrace). */
struct fnp_target {
    int pid;
    char *env; /* the environment it started with: NUL-separated, env_len bytes */
    size_t env_len;
    char exe[4096];
    int toggle_sig, dump_sig; /* PROF_TOGGLE_SIGNAL, PROF_DUMP_SIGNAL */
};
/* Fills t for pid when fnprof record can record it: the process runs, may be signalled,
 * has fnprof loaded, armed (PROF_OUTPUT, PROF_TOGGLE_SIGNAL, PROF_DUMP_SIGNAL, two
 * signals) and its signal thread running. 0; or -1 with the one-line reason in why.
 * Caller frees with fnp_target_free (after -1 too). */
int fnp_target_open(struct fnp_target *t, int pid, char *why, size_t n);
void fnp_target_free(struct fnp_target *t);
/* The value of name in t's starting environment, or NULL; borrowed from t. */
const char *fnp_target_getenv(const struct fnp_target *t, const char *name);
/* The state letter (FNP_LIVE_RECORDING, ...) and the token of the request done last that
 * pid's fnprof signal thread shows. 0, -ESRCH (no such process), -ENOENT (no such thread:
 * the process exec'd or is ending), or -errno. */
int fnp_target_state(int pid, char *state, unsigned *token);
/* Whether pid runs (not a zombie). */
int fnp_target_alive(int pid);
/* The one or two files the window may be written to (malloc'd; caller frees each), into
 * paths[0, *count). 0; or -1 with why. */
int fnp_target_window_paths(const struct fnp_target *t, char *paths[2], size_t *count, char *why,
                            size_t n);

/* compensate.c: --compensate. Compensates p (fnp_profile_compensate), read from path; an
 * already compensated profile is left as it is, with a note. On failure prints "fnprof:
 * <cmd>: <path>: cannot compensate: <why>" and returns -1. */
int fnp_cli_compensate(const char *cmd, const char *path, struct fnp_profile *p);

#endif
