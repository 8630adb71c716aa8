/* SPDX-License-Identifier: MIT */
/*
 * Reads a compiler command line the way the gcc and clang drivers do, only far enough to know
 * what the command will do: print something (--version), preprocess, compile, or link, and
 * which inputs are C or C++ sources. The wrapper never rewrites the user's arguments: it
 * only adds its own around them, so a misread option costs at most a flag too many or too
 * few, never a changed command.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cc-wrapper.h"

/* Response files may name response files; gcc (libiberty expandargv) has no bound but a
 * cycle, so stop at a depth no real build reaches. */
#define MAX_RESPONSE_DEPTH 16

/* Options whose value is the next argument (both drivers also take most of them joined:
 * "-ofile", "-Idir", which need nothing). A wrong entry here could make a value look like an
 * input file, which matters only to tell "no input" from "link". */
static const char *const separate_value[] = {
    "-o",
    "-x",
    "-I",
    "-L",
    "-D",
    "-U",
    "-l",
    "-B",
    "-MF",
    "-MT",
    "-MQ",
    "-MJ",
    "-include",
    "-imacros",
    "-isystem",
    "-idirafter",
    "-iquote",
    "-iprefix",
    "-iwithprefix",
    "-iwithprefixbefore",
    "-isysroot",
    "-imultilib",
    "-Xlinker",
    "-Xassembler",
    "-Xpreprocessor",
    "-Xclang",
    "-Xopenmp-target",
    "-mllvm",
    "-target",
    "-arch",
    "-u",
    "-T",
    "-z",
    "-e",
    "-A",
    "-aux-info",
    "--param",
    "--sysroot",
    "-wrapper",
    "-dumpbase",
    "-dumpbase-ext",
    "-dumpdir",
    "-include-pch",
    "-ivfsoverlay",
    "-cxx-isystem",
    "-serialize-diagnostics",
    "--serialize-diagnostics",
    "-dependency-file",
    "-G",
    "-F",
    "--target",
    "--output",
    "--include",
    "--include-directory",
    "--library-directory",
    "--define-macro",
    "--undefine-macro",
    "--language",
    "--entry",
    "--for-linker",
    "--force-link",
    "--assert",
    "-Xanalyzer",
    "-Xcuda-ptxas",
    "-Xcuda-fatbinary",
};

/* Options that print something and stop: the command compiles nothing. "-dumpbase" and
 * "-dumpdir" are not among them: they name outputs. */
static int is_info_option(const char *s)
{
    static const char *const exact[] = {
        "--version",        "--help",       "--target-help", "-dumpversion",
        "-dumpfullversion", "-dumpmachine", "-dumpspecs",    "-help",
    };
    for (size_t i = 0; i < sizeof(exact) / sizeof(exact[0]); i++)
        if (strcmp(s, exact[i]) == 0)
            return 1;
    return strncmp(s, "-print-", 7) == 0 || strncmp(s, "--print-", 8) == 0 ||
           strncmp(s, "--help=", 7) == 0;
}

static int takes_separate_value(const char *s)
{
    for (size_t i = 0; i < sizeof(separate_value) / sizeof(separate_value[0]); i++)
        if (strcmp(s, separate_value[i]) == 0)
            return 1;
    return 0;
}

enum input_kind {
    INPUT_SOURCE, /* C, C++, Objective-C: gets the instrumentation flags */
    INPUT_HEADER, /* a header to precompile: compiled, never linked */
    INPUT_OTHER,  /* assembly, objects, archives, libraries: nothing to instrument */
};

/* By -x language (NULL or "none": by suffix), as the drivers decide. */
static enum input_kind input_kind(const char *lang, const char *name)
{
    if (lang && strcmp(lang, "none") != 0) {
        if (strstr(lang, "header"))
            return INPUT_HEADER;
        if (strncmp(lang, "assembler", 9) == 0)
            return INPUT_OTHER;
        if (strcmp(lang, "c") == 0 || strcmp(lang, "c++") == 0 ||
            strcmp(lang, "objective-c") == 0 || strcmp(lang, "objective-c++") == 0 ||
            strcmp(lang, "cpp-output") == 0 || strcmp(lang, "c++-cpp-output") == 0)
            return INPUT_SOURCE;
        return INPUT_OTHER;
    }
    const char *dot = strrchr(name, '.');
    const char *slash = strrchr(name, '/');
    if (!dot || (slash && dot < slash))
        return INPUT_OTHER;
    static const char *const sources[] = {".c", ".i",  ".cc", ".cp", ".cxx", ".cpp", ".CPP", ".c++",
                                          ".C", ".ii", ".m",  ".mi", ".mm",  ".M",   ".mii", ".cu"};
    static const char *const headers[] = {".h",   ".hh",  ".H",   ".hp", ".hxx",
                                          ".hpp", ".HPP", ".h++", ".tcc"};
    for (size_t i = 0; i < sizeof(sources) / sizeof(sources[0]); i++)
        if (strcmp(dot, sources[i]) == 0)
            return INPUT_SOURCE;
    for (size_t i = 0; i < sizeof(headers) / sizeof(headers[0]); i++)
        if (strcmp(dot, headers[i]) == 0)
            return INPUT_HEADER;
    return INPUT_OTHER;
}

/* An object file, an archive or a shared object, by its name (libx.so.1 too). */
static int is_object(const char *name)
{
    const char *slash = strrchr(name, '/'), *base = slash ? slash + 1 : name;
    const char *dot = strrchr(base, '.');
    return (dot && (strcmp(dot, ".o") == 0 || strcmp(dot, ".a") == 0 || strcmp(dot, ".so") == 0 ||
                    strcmp(dot, ".lo") == 0)) ||
           strstr(base, ".so.") != NULL;
}

/* A growing array of owned strings. */
struct strvec {
    char **v;
    size_t n, cap;
};

static int strvec_push(struct strvec *sv, char *s)
{
    if (!s)
        return -1;
    if (sv->n + 1 >= sv->cap) {
        size_t cap = sv->cap ? sv->cap * 2 : 64;
        char **v = realloc(sv->v, cap * sizeof(*v));
        if (!v) {
            free(s);
            return -1;
        }
        sv->v = v;
        sv->cap = cap;
    }
    sv->v[sv->n++] = s;
    sv->v[sv->n] = NULL;
    return 0;
}

static void strvec_free(struct strvec *sv)
{
    for (size_t i = 0; i < sv->n; i++)
        free(sv->v[i]);
    free(sv->v);
    sv->v = NULL;
    sv->n = sv->cap = 0;
}

static int expand(const char *arg, int depth, struct strvec *out);

/* Splits a response file as libiberty's buildargv does: blanks separate, single and double
 * quotes group, a backslash escapes the next character anywhere. */
static int expand_text(const char *text, int depth, struct strvec *out)
{
    const char *p = text;
    char *word = malloc(strlen(text) + 1);
    if (!word)
        return -1;
    int rc = 0;
    while (*p && rc == 0) {
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '\f' || *p == '\v')
            p++;
        if (!*p)
            break;
        size_t len = 0;
        int squote = 0, dquote = 0, escaped = 0;
        for (; *p; p++) {
            char c = *p;
            if (escaped) {
                word[len++] = c;
                escaped = 0;
            } else if (c == '\\') {
                escaped = 1;
            } else if (squote) {
                if (c == '\'')
                    squote = 0;
                else
                    word[len++] = c;
            } else if (dquote) {
                if (c == '"')
                    dquote = 0;
                else
                    word[len++] = c;
            } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
                break;
            } else if (c == '\'') {
                squote = 1;
            } else if (c == '"') {
                dquote = 1;
            } else {
                word[len++] = c;
            }
        }
        word[len] = '\0';
        rc = expand(word, depth + 1, out);
    }
    free(word);
    return rc;
}

/* One argument: "@file" is replaced by the file's arguments when it can be read, else kept
 * as it is (the drivers then take it as an input file name and say it is missing). */
static int expand(const char *arg, int depth, struct strvec *out)
{
    if (arg[0] != '@' || depth > MAX_RESPONSE_DEPTH)
        return strvec_push(out, strdup(arg));
    FILE *f = fopen(arg + 1, "r");
    if (!f)
        return strvec_push(out, strdup(arg));
    char *text = NULL;
    size_t len = 0, cap = 0;
    char buf[4096];
    size_t got;
    while ((got = fread(buf, 1, sizeof(buf), f)) > 0) {
        if (len + got + 1 > cap) {
            size_t ncap = (len + got + 1) * 2;
            char *t = realloc(text, ncap);
            if (!t) {
                free(text);
                fclose(f);
                return -1;
            }
            text = t;
            cap = ncap;
        }
        memcpy(text + len, buf, got);
        len += got;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(text);
        return strvec_push(out, strdup(arg));
    }
    if (!text)
        return 0; /* an empty response file adds no argument */
    text[len] = '\0';
    int rc = expand_text(text, depth, out);
    free(text);
    return rc;
}

void fnp_cc_args_free(struct fnp_cc_args *a)
{
    if (!a)
        return;
    struct strvec sv = {a->argv, a->argc, a->argc};
    strvec_free(&sv);
    free(a->sources);
    free(a->objects);
    memset(a, 0, sizeof(*a));
}

int fnp_cc_args_parse(char *const *args, size_t n, struct fnp_cc_args *a)
{
    memset(a, 0, sizeof(*a));
    struct strvec sv = {0};
    for (size_t i = 0; i < n; i++)
        if (expand(args[i], 0, &sv) < 0) {
            strvec_free(&sv);
            errno = ENOMEM;
            return -1;
        }
    a->argv = sv.v;
    a->argc = sv.n;
    a->sources = calloc(sv.n + 1, sizeof(*a->sources));
    a->objects = calloc(sv.n + 1, sizeof(*a->objects));
    if (!a->sources || !a->objects) {
        fnp_cc_args_free(a);
        errno = ENOMEM;
        return -1;
    }

    int info = 0, preprocess = 0, compile = 0, partial_link = 0;
    size_t ninputs = 0, nheaders = 0; /* sources, objects, -l libraries, "-" */
    const char *lang = NULL;
    for (size_t i = 0; i < a->argc; i++) {
        const char *s = a->argv[i];
        if (s[0] != '-' || strcmp(s, "-") == 0) {
            /* An input: a file name, or standard input. */
            ninputs++;
            enum input_kind k = input_kind(lang, strcmp(s, "-") == 0 ? "" : s);
            if (k == INPUT_SOURCE)
                a->sources[a->nsources++] = a->argv[i];
            else if (k == INPUT_HEADER)
                nheaders++;
            else if (k == INPUT_OTHER && is_object(s))
                a->objects[a->nobjects++] = a->argv[i];
            continue;
        }
        if (is_info_option(s)) {
            info = 1;
        } else if (strcmp(s, "-E") == 0 || strcmp(s, "-M") == 0 || strcmp(s, "-MM") == 0 ||
                   strcmp(s, "-fsyntax-only") == 0 || strcmp(s, "--preprocess") == 0) {
            preprocess = 1;
        } else if (strcmp(s, "-c") == 0 || strcmp(s, "-S") == 0 || strcmp(s, "--compile") == 0 ||
                   strcmp(s, "--assemble") == 0) {
            compile = 1;
        } else if (strcmp(s, "-r") == 0 || strcmp(s, "-Wl,-r") == 0 ||
                   strcmp(s, "-Wl,--relocatable") == 0) {
            partial_link = 1;
        } else if (strcmp(s, "-static") == 0 || strcmp(s, "-static-pie") == 0 ||
                   strcmp(s, "--static") == 0) {
            a->is_static = 1;
        } else if (strcmp(s, "-nostdlib") == 0 || strcmp(s, "-nodefaultlibs") == 0 ||
                   strcmp(s, "-nolibc") == 0) {
            a->no_stdlib = 1;
        } else if (strcmp(s, "-fno-instrument-functions") == 0) {
            a->instr = FNP_CC_INSTR_OFF;
        } else if (strcmp(s, "-finstrument-functions") == 0 ||
                   strcmp(s, "-finstrument-functions-after-inlining") == 0 ||
                   strcmp(s, "-finstrument-function-entry-bare") == 0) {
            a->instr = FNP_CC_INSTR_ON;
        } else if (strncmp(s, "-l", 2) == 0) {
            ninputs++; /* a library is an input: "cc -lm" links */
            if (s[2] == '\0')
                i++;
        } else if (strcmp(s, "-x") == 0 || strcmp(s, "--language") == 0) {
            if (i + 1 < a->argc)
                lang = a->argv[++i];
        } else if (strncmp(s, "-x", 2) == 0) {
            lang = s + 2;
        } else if (strncmp(s, "--language=", 11) == 0) {
            lang = s + 11;
        } else if (takes_separate_value(s)) {
            i++;
        }
    }

    if (info || ninputs == 0)
        a->mode = FNP_CC_PASS;
    else if (preprocess)
        a->mode = FNP_CC_PREPROCESS;
    else if (compile || partial_link || (nheaders > 0 && nheaders == ninputs))
        a->mode = FNP_CC_COMPILE;
    else
        a->mode = FNP_CC_LINK;
    return 0;
}
