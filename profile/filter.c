/* SPDX-License-Identifier: MIT */
/*
 * Score-P filter files (filter.h, docs/filter.md): a tokenizer, one pass that turns the
 * blocks into an ordered rule list, and evaluation with fnmatch(3).
 */
#include "filter.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FILE (16u << 20)

enum kind { FILE_RULE, NAME_RULE, MANGLED_RULE };

struct rule {
    enum kind kind;
    int exclude;
    const char *pattern; /* in f->text */
};

struct fnp_filter {
    struct rule *rules;
    size_t n, cap;
    char *text; /* the tokens, NUL-terminated, that patterns point into */
    int has[3];
};

/* Messages quote tokens and paths, which may hold a newline (a token may end in "\\\n"),
 * a carriage return or an escape sequence: each becomes '?', so that a message stays the
 * one line `fnprof: ...` it is printed in and drives no terminal. */
static void one_line(char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            *s = '?';
}

static void fail(char *err, size_t errlen, const char *origin, unsigned line, const char *fmt, ...)
{
    if (!errlen)
        return;
    int k = snprintf(err, errlen, "%s:%u: ", origin, line);
    if (k >= 0 && (size_t)k < errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err + k, errlen - (size_t)k, fmt, ap);
        va_end(ap);
    }
    one_line(err);
}

static int hex_digit(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

static int add_rule(struct fnp_filter *f, enum kind kind, int exclude, const char *pattern)
{
    if (f->n == f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 16;
        struct rule *r = realloc(f->rules, cap * sizeof(*r));
        if (!r)
            return -ENOMEM;
        f->rules = r;
        f->cap = cap;
    }
    f->rules[f->n++] = (struct rule){kind, exclude, pattern};
    f->has[kind] = 1;
    return 0;
}

/*
 * The next whitespace-separated token of text[*pos, len), copied NUL-terminated to *out
 * (which advances). '#' outside a token's escape starts a comment to the end of the line;
 * a backslash keeps the next character in the token (fnmatch then reads it as that
 * character: "\ " is a space, "\#" a hash). "\xHH" (two hex digits) is the byte HH, taken
 * literally: how suggest-filter writes a name's control characters and invalid UTF-8 on
 * one line. *line counts newlines crossed. Returns 0 at the end of the text, 1 for a
 * token, -1 for a NUL byte, -2 for "\x00" (a name holds none).
 */
static int next_token(const char *text, size_t len, size_t *pos, unsigned *line, char **out,
                      const char **tok)
{
    size_t i = *pos;
    for (;;) {
        while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' ||
                           text[i] == '\n' || text[i] == '\f' || text[i] == '\v')) {
            if (text[i] == '\n')
                ++*line;
            i++;
        }
        if (i < len && text[i] == '#') {
            while (i < len && text[i] != '\n')
                i++;
            continue;
        }
        break;
    }
    if (i == len) {
        *pos = i;
        return 0;
    }
    char *o = *out;
    *tok = o;
    while (i < len && !(text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n' ||
                        text[i] == '\f' || text[i] == '\v' || text[i] == '#')) {
        if (text[i] == 0)
            return -1;
        if (text[i] == '\\' && i + 3 < len && text[i + 1] == 'x' && hex_digit(text[i + 2]) >= 0 &&
            hex_digit(text[i + 3]) >= 0) {
            int byte = hex_digit(text[i + 2]) * 16 + hex_digit(text[i + 3]);
            if (byte == 0)
                return -2;
            /* quoted for fnmatch, like any escaped character (4 bytes in, 2 out) */
            *o++ = '\\';
            *o++ = (char)byte;
            i += 4;
            continue;
        }
        if (text[i] == '\\' && i + 1 < len && text[i + 1] != 0) {
            if (text[i + 1] == '\n')
                ++*line;
            *o++ = text[i++];
        }
        *o++ = text[i++];
    }
    *o++ = 0;
    *out = o;
    *pos = i;
    return 1;
}

struct fnp_filter *fnp_filter_parse(const char *text, size_t len, const char *origin, char *err,
                                    size_t errlen)
{
    if (errlen)
        err[0] = 0;
    struct fnp_filter *f = calloc(1, sizeof(*f));
    /* every token fits in the text it came from, plus its NUL */
    char *buf = f ? malloc(len + 1) : NULL;
    if (!buf) {
        free(f);
        fail(err, errlen, origin, 0, "out of memory");
        return NULL;
    }
    f->text = buf;
    enum { OUTSIDE, IN_FILES, IN_NAMES } block = OUTSIDE;
    unsigned line = 1, block_line = 0;
    int rule = -1;       /* -1: no rule open; else 1 EXCLUDE, 0 INCLUDE */
    int mangled = 0;     /* MANGLED seen in the open rule */
    size_t patterns = 0; /* patterns of the open rule */
    const char *rule_word = NULL;
    unsigned rule_line = 0;
    size_t pos = 0;
    char *out = buf;
    for (;;) {
        const char *tok = NULL;
        int r = next_token(text, len, &pos, &line, &out, &tok);
        if (r < 0) {
            fail(err, errlen, origin, line,
                 r == -1 ? "a NUL byte: not a text file" : "\\x00: a name holds no NUL byte");
            goto bad;
        }
        int is_keyword =
            r &&
            (!strcmp(tok, "SCOREP_FILE_NAMES_BEGIN") || !strcmp(tok, "SCOREP_REGION_NAMES_BEGIN") ||
             !strcmp(tok, "SCOREP_FILE_NAMES_END") || !strcmp(tok, "SCOREP_REGION_NAMES_END") ||
             !strcmp(tok, "EXCLUDE") || !strcmp(tok, "INCLUDE"));
        /* A rule ends at the next keyword or at the end of the text. */
        if ((!r || is_keyword) && rule >= 0 && patterns == 0) {
            fail(err, errlen, origin, rule_line, "%s without a pattern", rule_word);
            goto bad;
        }
        if (!r)
            break;
        if (!strcmp(tok, "SCOREP_FILE_NAMES_BEGIN") || !strcmp(tok, "SCOREP_REGION_NAMES_BEGIN")) {
            if (block != OUTSIDE) {
                fail(err, errlen, origin, line, "%s inside a block opened on line %u", tok,
                     block_line);
                goto bad;
            }
            block = tok[7] == 'F' ? IN_FILES : IN_NAMES;
            block_line = line;
            rule = -1;
        } else if (!strcmp(tok, "SCOREP_FILE_NAMES_END") ||
                   !strcmp(tok, "SCOREP_REGION_NAMES_END")) {
            if (block != (tok[7] == 'F' ? IN_FILES : IN_NAMES)) {
                fail(err, errlen, origin, line, "%s without its BEGIN", tok);
                goto bad;
            }
            block = OUTSIDE;
            rule = -1;
        } else if (!strcmp(tok, "EXCLUDE") || !strcmp(tok, "INCLUDE")) {
            if (block == OUTSIDE) {
                fail(err, errlen, origin, line,
                     "%s outside a SCOREP_FILE_NAMES or SCOREP_REGION_NAMES block", tok);
                goto bad;
            }
            rule = tok[0] == 'E';
            rule_word = tok;
            rule_line = line;
            mangled = 0;
            patterns = 0;
        } else if (!strcmp(tok, "MANGLED") || !strcmp(tok, "DEMANGLED")) {
            if (block != IN_NAMES || rule < 0) {
                fail(err, errlen, origin, line,
                     "%s belongs after EXCLUDE or INCLUDE in a "
                     "SCOREP_REGION_NAMES block",
                     tok);
                goto bad;
            }
            mangled = tok[0] == 'M';
        } else {
            if (block == OUTSIDE) {
                fail(err, errlen, origin, line,
                     "'%s' outside a SCOREP_FILE_NAMES or "
                     "SCOREP_REGION_NAMES block",
                     tok);
                goto bad;
            }
            if (rule < 0) {
                fail(err, errlen, origin, line, "'%s' before EXCLUDE or INCLUDE", tok);
                goto bad;
            }
            enum kind kind = block == IN_FILES ? FILE_RULE : mangled ? MANGLED_RULE : NAME_RULE;
            if (add_rule(f, kind, rule, tok)) {
                fail(err, errlen, origin, line, "out of memory");
                goto bad;
            }
            patterns++;
        }
    }
    if (block != OUTSIDE) {
        fail(err, errlen, origin, line, "the block opened on line %u has no END", block_line);
        goto bad;
    }
    return f;
bad:
    fnp_filter_free(f);
    return NULL;
}

struct fnp_filter *fnp_filter_load(const char *path, char *err, size_t errlen)
{
    FILE *in = fopen(path, "rb");
    if (!in) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        one_line(err);
        return NULL;
    }
    char *text = malloc(MAX_FILE + 1);
    size_t len = text ? fread(text, 1, MAX_FILE + 1, in) : 0;
    int bad = !text || ferror(in);
    int e = errno;
    fclose(in);
    if (bad || len > MAX_FILE) {
        snprintf(err, errlen, "%s: %s", path,
                 !text            ? "out of memory"
                 : len > MAX_FILE ? "larger than 16 MB"
                                  : strerror(e));
        one_line(err);
        free(text);
        return NULL;
    }
    struct fnp_filter *f = fnp_filter_parse(text, len, path, err, errlen);
    free(text);
    return f;
}

char *fnp_filter_pattern(const char *name)
{
    char *out = malloc(4 * strlen(name) + 1), *o = out;
    if (!out)
        return NULL;
    /* A function named like a keyword ("INCLUDE") would be read as that keyword: its
     * first letter escaped, it is a pattern that matches the name. */
    static const char *const keywords[] = {"SCOREP_FILE_NAMES_BEGIN",
                                           "SCOREP_FILE_NAMES_END",
                                           "SCOREP_REGION_NAMES_BEGIN",
                                           "SCOREP_REGION_NAMES_END",
                                           "EXCLUDE",
                                           "INCLUDE",
                                           "MANGLED",
                                           "DEMANGLED"};
    for (size_t k = 0; k < sizeof(keywords) / sizeof(keywords[0]); k++)
        if (!strcmp(name, keywords[k]))
            *o++ = '\\';
    for (const unsigned char *c = (const unsigned char *)name; *c; c++) {
        /* Every byte past ASCII too: this file stays plain C, without a UTF-8 decoder to
         * tell C1 controls and invalid sequences, which drive terminals, from text. */
        if (*c < 0x20 || *c >= 0x7f) {
            o += sprintf(o, "\\x%02x", *c);
            continue;
        }
        if (strchr("\\*?[]# ", *c))
            *o++ = '\\';
        *o++ = (char)*c;
    }
    *o = 0;
    return out;
}

/* The last file rule that matches decides; none: kept. */
static int file_verdict(const struct fnp_filter *f, const char *file)
{
    int exclude = 0;
    for (size_t i = 0; i < f->n; i++)
        if (f->rules[i].kind == FILE_RULE && fnmatch(f->rules[i].pattern, file, 0) == 0)
            exclude = f->rules[i].exclude;
    return exclude;
}

int fnp_filter_excludes(const struct fnp_filter *f, const char *file, const char *name,
                        const char *mangled)
{
    if (file && f->has[FILE_RULE] && file_verdict(f, file))
        return 1;
    if (!f->has[NAME_RULE] && !f->has[MANGLED_RULE])
        return 0;
    /* Demangled and mangled rules are one ordered list: evaluate them together, each on
     * its own form of the name. */
    int exclude = 0;
    for (size_t i = 0; i < f->n; i++) {
        const struct rule *r = &f->rules[i];
        const char *v = r->kind == NAME_RULE ? name : r->kind == MANGLED_RULE ? mangled : NULL;
        if (v && fnmatch(r->pattern, v, 0) == 0)
            exclude = r->exclude;
    }
    return exclude;
}

int fnp_filter_has_file_rules(const struct fnp_filter *f)
{
    return f->has[FILE_RULE];
}

int fnp_filter_has_name_rules(const struct fnp_filter *f)
{
    return f->has[NAME_RULE] || f->has[MANGLED_RULE];
}

int fnp_filter_has_mangled_rules(const struct fnp_filter *f)
{
    return f->has[MANGLED_RULE];
}

void fnp_filter_free(struct fnp_filter *f)
{
    if (!f)
        return;
    free(f->rules);
    free(f->text);
    free(f);
}
