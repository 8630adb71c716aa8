/* SPDX-License-Identifier: MIT */
/*
 * fnprof convert: a profile in the format another tool reads (views/). Call paths come from
 * the calling-context tree the profile keeps; a file without one (CPython's cProfile, an
 * older fnprof) gets a tree rebuilt from its caller edges, and the user is told so.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "pftrace-chrome.h"
#include "views.h"

extern char **environ;

/* A rebuilt tree leaves out paths under this share of the total, and stops at this many
 * nodes: a DAG unfolded into a tree can grow exponentially. */
#define REBUILD_MIN_SHARE 1e-5
#define REBUILD_MAX_NODES 1000000

static void usage(FILE *out)
{
    fprintf(out, "usage: fnprof convert PROFILE --to FORMAT [-o OUT] [options]\n"
                 "\n"
                 "Writes PROFILE (a pstats file: fnprof's, or CPython's cProfile's) in FORMAT,\n"
                 "to OUT (whole or not at all) or to standard output. Call paths come from the\n"
                 "calling-context tree fnprof keeps in its profiles; a file without one gets\n"
                 "paths rebuilt from its caller edges (estimates), and a note on stderr.\n"
                 "PROFILE may also be a trace (PROF_TRACE=FILE.pftrace): with --to\n"
                 "chrome-trace, it is written as Chrome's JSON trace, streamed.\n"
                 "\n"
                 "Formats:\n");
    for (const struct fnp_view *v = fnp_views; v->name; v++)
        fprintf(out, "  %-11s %s\n", v->name, v->summary);
    fprintf(out,
            "\n"
            "Options:\n"
            "  -t, --to FORMAT           the format to write (required)\n"
            "  -o, --output OUT          the file to write (default: standard output);\n"
            "                            with --to dot, OUT ending in .svg, .png or .pdf\n"
            "                            is drawn by graphviz's dot\n"
            "      --node-threshold PCT  dot: leave out functions under PCT%% of the\n"
            "                            total time (default 0.5)\n"
            "      --edge-threshold PCT  dot: leave out calls under PCT%% (default 0.1)\n"
            "      --max-depth N         collapsed, speedscope, pprof: fold the calls\n"
            "                            deeper than N frames into one frame\n"
            "                            '[... M frames cut]' (default %d; 0: no cut)\n"
            "      --short-names         C++ names as debuggers show them: std::string,\n"
            "                            std::vector<int>, static initialisers of F.cpp\n"
            "                            (the default; the profile's keys stay whole)\n"
            "      --no-short-names      the names as the profile keys them\n"
            "      --compensate          times without the hooks' own cost, from the\n"
            "                            calibration the run stored (PROF_COMPENSATE=1's\n"
            "                            arithmetic, docs/compensation.md)\n"
            "  -h, --help                show this help\n"
            "Options but -t and -o are a profile's: a trace (.pftrace) converts as it is.\n",
            FNP_VIEW_MAX_DEPTH);
}

struct job {
    const struct fnp_view *view;
    const struct fnp_profile *p;
    struct fnp_view_opts opts;
    const char *render; /* dot -T<this>, or NULL */
    const char *dot;    /* the dot program found on PATH */
};

/* Writes data to dot's standard input, its output going to fd; 0 or a negative errno. */
static int run_dot(const struct job *j, const char *data, size_t len, int fd)
{
    int in[2];
    if (pipe2(in, O_CLOEXEC))
        return -errno;
    char format[32];
    snprintf(format, sizeof(format), "-T%s", j->render);
    char *argv[] = {(char *)"dot", format, NULL};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, fd, 1);
    pid_t pid;
    int rc = posix_spawn(&pid, j->dot, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(in[0]);
    if (rc) {
        close(in[1]);
        return -rc;
    }
    /* dot may exit before reading everything (a missing plugin, a crash): the write then
     * fails with EPIPE rather than SIGPIPE killing us and leaving the temporary file. */
    struct sigaction ign = {.sa_handler = SIG_IGN}, old;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGPIPE, &ign, &old);
    int werr = 0;
    for (size_t off = 0; off < len && !werr;) {
        ssize_t w = write(in[1], data + off, len - off);
        if (w < 0 && errno != EINTR)
            werr = -errno;
        else if (w > 0)
            off += (size_t)w;
    }
    close(in[1]);
    sigaction(SIGPIPE, &old, NULL);
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -errno;
    if (!WIFEXITED(status) || WEXITSTATUS(status) || werr == -EPIPE)
        return -ECHILD; /* dot said why on stderr */
    return werr;
}

static int write_view(struct fnp_sink *s, void *ctx)
{
    const struct job *j = ctx;
    if (!j->render)
        return j->view->write(j->p, &j->opts, s);
    struct fnp_sink dot;
    fnp_sink_memory(&dot);
    int rc = j->view->write(j->p, &j->opts, &dot);
    if (!rc)
        rc = fnp_sink_flush(s);
    if (!rc)
        rc = run_dot(j, dot.buf, dot.len, s->fd);
    fnp_sink_free(&dot);
    return rc;
}

/* "svg" when path ends in ".svg" (likewise png, pdf), else NULL. */
static const char *render_format(const char *path)
{
    static const char *const formats[] = {"svg", "png", "pdf"};
    const char *dot = strrchr(path, '.');
    for (size_t i = 0; dot && i < sizeof(formats) / sizeof(formats[0]); i++)
        if (!strcmp(dot + 1, formats[i]))
            return formats[i];
    return NULL;
}

/* A whole number of frames, 0 to UINT32_MAX. */
static int parse_depth(const char *arg, uint32_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(arg, &end, 10);
    if (errno || end == arg || *end || *arg == '-' || v > UINT32_MAX)
        return -1;
    *out = (uint32_t)v;
    return 0;
}

static int parse_percent(const char *arg, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(arg, &end);
    if (errno || end == arg || *end || !(v >= 0 && v <= 100))
        return -1;
    *out = v;
    return 0;
}

/* Runs write to output whole (fnp_write_file_atomic), or to standard output when there is
 * none; 0 or a negative errno. */
static int write_output(const char *output, fnp_write_fn write, void *ctx)
{
    if (output)
        return fnp_write_file_atomic(output, write, ctx);
    struct fnp_sink s;
    fflush(stdout);
    int err = fnp_sink_fd(&s, 1);
    if (!err)
        err = write(&s, ctx);
    if (!err)
        err = fnp_sink_flush(&s);
    fnp_sink_free(&s);
    return err;
}

struct pftrace_job {
    FILE *in;
};

static int write_pftrace(struct fnp_sink *s, void *ctx)
{
    return fnp_pftrace_to_chrome(((struct pftrace_job *)ctx)->in, s);
}

/* --to chrome-trace of a Perfetto trace: streamed, packet by packet (pftrace-chrome.c). */
static int convert_pftrace(const char *in, const char *output)
{
    struct pftrace_job pj = {fopen(in, "rb")};
    if (!pj.in) {
        fnp_cli_error("convert", "%s: %s", in, strerror(errno));
        return FNP_EXIT_FAILURE;
    }
    int err = write_output(output, write_pftrace, &pj);
    fclose(pj.in);
    if (err == -EINVAL) {
        fnp_cli_error("convert", "%s: not a Perfetto trace as fnprof writes them", in);
        return FNP_EXIT_FAILURE;
    }
    if (err) {
        fnp_cli_error("convert", "%s: %s", output ? output : "standard output",
                      fnp_write_file_strerror(err));
        return FNP_EXIT_FAILURE;
    }
    return FNP_EXIT_OK;
}

int fnp_cmd_convert(int argc, char **argv)
{
    enum { OPT_NODE = 256, OPT_EDGE, OPT_DEPTH, OPT_SHORT, OPT_NO_SHORT, OPT_COMPENSATE };
    static const struct option opts[] = {
        {"to", required_argument, NULL, 't'},
        {"output", required_argument, NULL, 'o'},
        {"node-threshold", required_argument, NULL, OPT_NODE},
        {"edge-threshold", required_argument, NULL, OPT_EDGE},
        {"max-depth", required_argument, NULL, OPT_DEPTH},
        {"short-names", no_argument, NULL, OPT_SHORT},
        {"no-short-names", no_argument, NULL, OPT_NO_SHORT},
        {"compensate", no_argument, NULL, OPT_COMPENSATE},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    /* Short names by default: every view is read by a person (docs/convert.md) */
    struct job j = {.opts = {.node_threshold = 0.5, .edge_threshold = 0.1, .short_names = 1}};
    const char *to = NULL, *output = NULL;
    uint32_t max_depth = FNP_VIEW_MAX_DEPTH;
    int c, compensate = 0;
    const char *profile_only = NULL; /* the last option given that only a profile takes */
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":t:o:h", opts, NULL)) != -1) {
        switch (c) {
        case 't':
            to = optarg;
            break;
        case 'o':
            output = optarg;
            break;
        case OPT_NODE:
        case OPT_EDGE:
            profile_only = c == OPT_NODE ? "node-threshold" : "edge-threshold";
            if (parse_percent(optarg,
                              c == OPT_NODE ? &j.opts.node_threshold : &j.opts.edge_threshold))
                return fnp_cli_usage_error("convert", "--%s wants a percentage from 0 to 100",
                                           c == OPT_NODE ? "node-threshold" : "edge-threshold");
            break;
        case OPT_DEPTH:
            profile_only = "max-depth";
            if (parse_depth(optarg, &max_depth))
                return fnp_cli_usage_error("convert",
                                           "--max-depth wants a number of frames (0: no cut)");
            break;
        case OPT_SHORT:
        case OPT_NO_SHORT:
            j.opts.short_names = c == OPT_SHORT;
            profile_only = c == OPT_SHORT ? "short-names" : "no-short-names";
            break;
        case OPT_COMPENSATE:
            compensate = 1;
            profile_only = "compensate";
            break;
        case 'h':
            usage(stdout);
            return FNP_EXIT_OK;
        default: /* ':' or '?' */
            return fnp_cli_option_error("convert", c, argv);
        }
    }
    if (optind == argc)
        return fnp_cli_usage_error("convert", "no profile given");
    if (argc - optind > 1)
        return fnp_cli_usage_error("convert", "one profile at a time ('%s' too)", argv[optind + 1]);
    if (!to)
        return fnp_cli_usage_error("convert", "no format given (--to FORMAT)");
    if (output && !strcmp(output, "-"))
        output = NULL;
    /* A trace is converted as it is: its times are the clock's as read (compensating them
     * would need a profile's calibration and a model of each slice) and its slices are
     * neither cut nor thinned nor renamed. The view options are refused rather than
     * ignored, before anything is opened or written. */
    if (profile_only && fnp_trace_path_is_perfetto(argv[optind]))
        return fnp_cli_usage_error("convert", "--%s applies to profiles, not to a trace (%s)",
                                   profile_only, argv[optind]);
    if (!strcmp(to, "chrome-trace") && fnp_trace_path_is_perfetto(argv[optind]))
        return convert_pftrace(argv[optind], output);
    j.view = fnp_view_find(to);
    if (!j.view)
        return fnp_cli_usage_error("convert", "unknown format '%s'", to);
    if (!output && j.view->binary && isatty(1))
        return fnp_cli_usage_error("convert", "%s output is binary: give -o FILE", to);
    const char *in = argv[optind];
    j.opts.title = in;

    int rc = FNP_EXIT_OK;
    char *dot = NULL;
    if (output && !strcmp(to, "dot") && (j.render = render_format(output))) {
        char where[PATH_MAX];
        dot = fnp_cli_which("dot", where) == 0 ? strdup(where) : NULL;
        if (!dot) {
            fnp_cli_error("convert",
                          "%s: drawing a %s needs graphviz's 'dot', which is not on PATH "
                          "(Debian: apt-get install graphviz); or write DOT with -o x.dot",
                          output, j.render);
            return FNP_EXIT_FAILURE;
        }
        j.dot = dot;
    }
    struct fnp_profile p;
    struct fnp_view_cut cut = {0};
    fnp_profile_init(&p);
    j.p = &p;
    if (fnp_cli_load("convert", in, &p, NULL) ||
        (compensate && fnp_cli_compensate("convert", in, &p))) {
        rc = FNP_EXIT_FAILURE;
        goto out;
    }
    if (j.view->needs_tree && p.tree_kind == FNP_TREE_NONE) {
        int err = fnp_tree_from_edges(&p, REBUILD_MIN_SHARE, REBUILD_MAX_NODES);
        if (err) {
            fnp_cli_error("convert", "%s: %s", in, strerror(-err));
            rc = FNP_EXIT_FAILURE;
            goto out;
        }
        j.opts.rebuilt = 1;
        fnp_cli_error("convert",
                      "%s: no calling-context tree (a file from CPython's cProfile or an "
                      "older fnprof): the %s call paths are rebuilt from caller edges, "
                      "estimates",
                      in, to);
    }
    /* A view of call paths grows with the sum of the paths' depths (a chain of 1e5 calls
     * is 5e9 frames of collapsed text): paths are cut at max_depth, which bounds it to
     * max_depth + 1 frames a calling context, and says so (docs/convert.md). */
    if (j.view->paths) {
        int cerr = fnp_view_cut(&p, max_depth, &cut);
        if (cerr) {
            fnp_cli_error("convert", "%s: %s", in, strerror(-cerr));
            rc = FNP_EXIT_FAILURE;
            goto out;
        }
        j.p = &cut.view;
        if (cut.cut)
            fnp_cli_error("convert",
                          "%s: note: %llu calling contexts deeper than %u frames (the deepest "
                          "path has %u) folded into %zu '[... N frames cut]' frames; "
                          "--max-depth changes the cut",
                          in, (unsigned long long)cut.contexts, cut.max_depth, cut.deepest,
                          cut.folds);
    }
    int err = write_output(output, write_view, &j);
    if (err == -ECHILD) {
        fnp_cli_error("convert", "%s: dot failed (see above)", output);
        rc = FNP_EXIT_FAILURE;
    } else if (err) {
        fnp_cli_error("convert", "%s: %s", output ? output : "standard output",
                      fnp_write_file_strerror(err));
        rc = FNP_EXIT_FAILURE;
    }
out:
    free(dot);
    fnp_view_cut_free(&cut);
    fnp_profile_free(&p);
    return rc;
}
