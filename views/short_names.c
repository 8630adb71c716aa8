/* SPDX-License-Identifier: MIT */
/*
 * C++ names as debuggers and IDEs show them (fnprof convert --short-names): the standard
 * library's inline namespaces (std::__cxx11::, libc++'s std::__1::) and ABI tags dropped,
 * default template arguments of the standard containers, strings, streams and smart
 * pointers dropped, std::basic_string<char> called std::string, static initialisers called
 * after their file.
 *
 * One pass of a small recursive parser over the demangled name: identifiers, qualified
 * names, template argument lists, and the bracket pairs () [] {} that hold parameters,
 * lambdas ({lambda(int)#1}) and (anonymous namespace). Each template argument list is
 * rewritten as it closes, its arguments already short, so that a default is recognised in
 * its short spelling (std::allocator<std::string> for std::vector<std::string>). Bounds:
 * one output buffer of twice the name's length plus a constant (rewrites only shorten,
 * but ", " may replace ","), one scratch buffer of the same size, recursion depth
 * MAX_DEPTH. A name the parser does not follow (unbalanced brackets, too deep, a buffer
 * overrun) is kept whole: the long name is right, a garbled short one would not be.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "views.h"

#define MAX_DEPTH 64
#define MAX_ARGS 16 /* the standard templates below have at most 5; more are copied as read */
#define NONE ((size_t)-1)

struct parse {
    const char *in;
    size_t pos;
    char *out;
    size_t len, cap;
    char *scratch; /* cap bytes: a template's arguments while it is rewritten */
    size_t name;   /* where the qualified name being read starts in out, or NONE */
    int depth;
    bool bad;
};

static bool is_ident(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '$';
}

static void put(struct parse *q, const char *s, size_t n)
{
    if (q->len + n >= q->cap) {
        q->bad = true;
        return;
    }
    memcpy(q->out + q->len, s, n);
    q->len += n;
    q->out[q->len] = '\0';
}

static void putc_(struct parse *q, char c)
{
    put(q, &c, 1);
}

static bool starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Equal but for spaces: the demanglers write "> >" or ">>", "int const" throughout. */
static bool same(const char *a, size_t alen, const char *b)
{
    size_t i = 0;
    for (;;) {
        while (i < alen && a[i] == ' ')
            i++;
        while (*b == ' ')
            b++;
        if (i == alen || !*b)
            return i == alen && !*b;
        if (a[i++] != *b++)
            return false;
    }
}

/* The operators' spellings after "operator", longest first. */
static const char *const operators[] = {
    "<<=", ">>=", "<=>", "->*", "<<", ">>", "<=", ">=", "->", "()", "[]", "==", "!=",
    "&&",  "||",  "++",  "--",  "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<",
    ">",   "+",   "-",   "*",   "/",  "%",  "&",  "|",  "^",  "~",  "!",  "=",  ",",
};

static void seq(struct parse *q, const char *stops);

/* A template's arguments, each already short: where they start in scratch, their lengths. */
struct targs {
    const char *v[MAX_ARGS];
    size_t n[MAX_ARGS];
    size_t count;
};

/* Whether argument i of t is "prefix" a0 "suffix" (a0 the first argument). */
static bool arg_is(const struct targs *t, size_t i, const char *prefix, const char *suffix,
                   char *buf, size_t cap)
{
    int n = snprintf(buf, cap, "%s%.*s%s", prefix, (int)t->n[0], t->v[0], suffix);
    return n >= 0 && (size_t)n < cap && same(t->v[i], t->n[i], buf);
}

/* Whether argument i of t is the allocator of pair<a0 const, a1> (the maps'). */
static bool pair_alloc(const struct targs *t, size_t i, char *buf, size_t cap)
{
    int n = snprintf(buf, cap, "std::allocator<std::pair<%.*s const, %.*s>>", (int)t->n[0], t->v[0],
                     (int)t->n[1], t->v[1]);
    if (n >= 0 && (size_t)n < cap && same(t->v[i], t->n[i], buf))
        return true;
    n = snprintf(buf, cap, "std::allocator<std::pair<const %.*s, %.*s>>", (int)t->n[0], t->v[0],
                 (int)t->n[1], t->v[1]);
    return n >= 0 && (size_t)n < cap && same(t->v[i], t->n[i], buf);
}

/* Whether argument i of t is the default the standard gives template `name` there. */
static const char *const traits_only[] = {
    "basic_string_view", "basic_ios",     "basic_streambuf", "basic_istream",  "basic_ostream",
    "basic_iostream",    "basic_filebuf", "basic_ifstream",  "basic_ofstream", "basic_fstream"};
static const char *const with_alloc[] = {"basic_string", "basic_stringbuf", "basic_istringstream",
                                         "basic_ostringstream", "basic_stringstream"};

/* Whether std::<name><C> has a typedef std::<C's prefix><name without basic_>. */
static bool renamed(const char *name)
{
    for (size_t k = 0; k < sizeof traits_only / sizeof *traits_only; k++)
        if (!strcmp(name, traits_only[k]))
            return true;
    for (size_t k = 0; k < sizeof with_alloc / sizeof *with_alloc; k++)
        if (!strcmp(name, with_alloc[k]))
            return true;
    return false;
}

static bool is_default(const char *name, const struct targs *t, size_t i, char *buf, size_t cap)
{
#define IS(p, s) arg_is(t, i, p, s, buf, cap)
    static const char *const seqs[] = {"vector", "list", "deque", "forward_list"};
    for (size_t k = 0; k < sizeof seqs / sizeof *seqs; k++)
        if (!strcmp(name, seqs[k]))
            return i == 1 && IS("std::allocator<", ">");
    for (size_t k = 0; k < sizeof traits_only / sizeof *traits_only; k++)
        if (!strcmp(name, traits_only[k]))
            return i == 1 && IS("std::char_traits<", ">");
    for (size_t k = 0; k < sizeof with_alloc / sizeof *with_alloc; k++)
        if (!strcmp(name, with_alloc[k]))
            return (i == 1 && IS("std::char_traits<", ">")) ||
                   (i == 2 && IS("std::allocator<", ">"));
    if (!strcmp(name, "set") || !strcmp(name, "multiset"))
        return (i == 1 && IS("std::less<", ">")) || (i == 2 && IS("std::allocator<", ">"));
    if (!strcmp(name, "map") || !strcmp(name, "multimap"))
        return (i == 2 && IS("std::less<", ">")) || (i == 3 && pair_alloc(t, i, buf, cap));
    if (!strcmp(name, "unordered_set") || !strcmp(name, "unordered_multiset"))
        return (i == 1 && IS("std::hash<", ">")) || (i == 2 && IS("std::equal_to<", ">")) ||
               (i == 3 && IS("std::allocator<", ">"));
    if (!strcmp(name, "unordered_map") || !strcmp(name, "unordered_multimap"))
        return (i == 2 && IS("std::hash<", ">")) || (i == 3 && IS("std::equal_to<", ">")) ||
               (i == 4 && pair_alloc(t, i, buf, cap));
    if (!strcmp(name, "unique_ptr"))
        return i == 1 && IS("std::default_delete<", ">");
    if (!strcmp(name, "stack") || !strcmp(name, "queue"))
        return i == 1 && IS("std::deque<", ">");
    if (!strcmp(name, "priority_queue"))
        return (i == 1 && IS("std::vector<", ">")) || (i == 2 && IS("std::less<", ">"));
    return false;
#undef IS
}

/* std::basic_X<C> with C one of the character types: std::X, std::wX, std::u16X, ... */
static const char *char_prefix(const char *c, size_t n)
{
    static const char *const types[][2] = {
        {"char", ""}, {"wchar_t", "w"}, {"char8_t", "u8"}, {"char16_t", "u16"}, {"char32_t", "u32"},
    };
    for (size_t k = 0; k < sizeof types / sizeof *types; k++)
        if (same(c, n, types[k][0]))
            return types[k][1];
    return NULL;
}

/* The template whose name starts at out[name] and arguments at out[lt + 1] has closed:
 * drops its default arguments and renames the character-type templates. */
static void rewrite(struct parse *q, size_t name, size_t lt, struct targs *t)
{
    char base[32] = "";
    size_t nlen = lt - name;
    if (nlen > 5 && nlen - 5 < sizeof base && starts(q->out + name, "std::")) {
        memcpy(base, q->out + name + 5, nlen - 5);
        base[nlen - 5] = '\0';
    }
    /* Arguments to scratch, so that out can be rewritten in place. */
    size_t used = 0;
    for (size_t i = 0; i < t->count; i++) {
        memcpy(q->scratch + used, t->v[i], t->n[i]);
        t->v[i] = q->scratch + used;
        used += t->n[i];
    }
    char *buf = q->scratch + used;
    size_t cap = q->cap - used;
    size_t keep = t->count;
    while (*base && keep > 1 && is_default(base, t, keep - 1, buf, cap))
        keep--;
    const char *prefix;
    q->len = lt;
    if (*base && keep == 1 && renamed(base) && (prefix = char_prefix(t->v[0], t->n[0]))) {
        q->len = name;
        put(q, "std::", 5);
        put(q, prefix, strlen(prefix));
        put(q, base + 6, strlen(base + 6));
        return;
    }
    putc_(q, '<');
    for (size_t i = 0; i < keep; i++) {
        if (i)
            put(q, ", ", 2);
        put(q, t->v[i], t->n[i]);
    }
    putc_(q, '>');
}

/* A template argument list, at '<' after a name starting at out[name]. */
static void template_args(struct parse *q, size_t name)
{
    size_t lt = q->len;
    putc_(q, '<');
    q->pos++;
    struct targs t = {.count = 0};
    size_t starts_at[MAX_ARGS + 1];
    for (;;) {
        while (q->in[q->pos] == ' ')
            q->pos++;
        size_t from = q->len;
        seq(q, ",>");
        while (q->len > from && q->out[q->len - 1] == ' ')
            q->len--;
        if (t.count < MAX_ARGS) {
            starts_at[t.count] = from;
            t.n[t.count++] = q->len - from;
        } else {
            t.count = MAX_ARGS + 1; /* too many to judge: copied as read */
        }
        char c = q->in[q->pos];
        if (c == ',') {
            put(q, ", ", 2);
            q->pos++;
            continue;
        }
        if (c != '>') {
            q->bad = true;
            return;
        }
        q->pos++;
        break;
    }
    if (q->bad || t.count > MAX_ARGS) {
        putc_(q, '>');
        return;
    }
    for (size_t i = 0; i < t.count; i++)
        t.v[i] = q->out + starts_at[i];
    rewrite(q, name, lt, &t);
}

/* "operator" has been copied: the operator's spelling, if it is a symbol. */
static void operator_symbol(struct parse *q)
{
    for (size_t k = 0; k < sizeof operators / sizeof *operators; k++)
        if (starts(q->in + q->pos, operators[k])) {
            size_t n = strlen(operators[k]);
            put(q, operators[k], n);
            q->pos += n;
            /* "operator< <int>": the space separates the operator from its arguments */
            if (q->in[q->pos] == ' ' && q->in[q->pos + 1] == '<') {
                putc_(q, ' ');
                q->pos++;
            }
            return;
        }
}

static void identifier(struct parse *q)
{
    size_t from = q->pos;
    while (is_ident(q->in[q->pos]))
        q->pos++;
    size_t n = q->pos - from;
    const char *id = q->in + from;
    bool qualified = q->len >= 2 && q->out[q->len - 2] == ':' && q->out[q->len - 1] == ':';
    /* std::__cxx11:: (libstdc++), std::__1:: (libc++), std::__ndk1:: (Android): inline
     * namespaces, the same names to a reader */
    if (qualified && q->name != NONE && q->len - q->name == 5 &&
        starts(q->out + q->name, "std::") && q->in[q->pos] == ':' && q->in[q->pos + 1] == ':' &&
        ((n == 7 && !strncmp(id, "__cxx11", 7)) || (n == 3 && !strncmp(id, "__1", 3)) ||
         (n == 6 && !strncmp(id, "__ndk1", 6)))) {
        q->pos += 2;
        return;
    }
    if (!qualified || q->name == NONE)
        q->name = q->len;
    put(q, id, n);
    if (n == 8 && !strncmp(id, "operator", 8))
        operator_symbol(q);
}

/* Copies and shortens q->in from q->pos up to a character of stops outside brackets (left
 * unread) or the end. */
static void seq(struct parse *q, const char *stops)
{
    if (++q->depth > MAX_DEPTH) {
        q->bad = true;
        return;
    }
    while (!q->bad) {
        char c = q->in[q->pos];
        if (!c || (strchr(stops, c)))
            break;
        if (is_ident(c)) {
            identifier(q);
        } else if (c == ':' && q->in[q->pos + 1] == ':') {
            put(q, "::", 2);
            q->pos += 2;
        } else if (c == '<' && q->name != NONE) {
            size_t name = q->name;
            template_args(q, name);
            /* std::vector<int>::iterator: the name goes on after its arguments */
            q->name = name;
        } else if (c == '[' && starts(q->in + q->pos, "[abi:")) {
            /* an ABI tag ([abi:cxx11]): the library's business, not the reader's */
            const char *end = strchr(q->in + q->pos, ']');
            if (!end) {
                q->bad = true;
                break;
            }
            q->pos = (size_t)(end - q->in) + 1;
        } else if (c == '(' || c == '[' || c == '{') {
            char close = c == '(' ? ')' : c == '[' ? ']' : '}';
            char stop[2] = {close, '\0'};
            size_t open = q->len, before = q->name;
            bool qualified = q->len >= 2 && q->out[q->len - 1] == ':' && q->out[q->len - 2] == ':';
            putc_(q, c);
            q->pos++;
            q->name = NONE;
            seq(q, stop);
            if (q->in[q->pos] != close) {
                q->bad = true;
                break;
            }
            putc_(q, close);
            q->pos++;
            /* (anonymous namespace)::f and f()::{lambda()#1}::operator() go on as names; a
             * parameter list ends one */
            q->name = NONE;
            if (c == '{' || (c == '(' && q->in[q->pos] == ':'))
                q->name = qualified && before != NONE ? before : open;
            continue;
        } else {
            putc_(q, c);
            q->pos++;
            q->name = NONE;
            continue;
        }
    }
    q->depth--;
}

/* "static initialisers of FILE" and the like, for the functions gcc names after nothing
 * a reader knows: NULL when name is not one, or no file is known. */
static char *initialiser(const char *name, const char *file)
{
    const char *what = NULL;
    if (starts(name, "__static_initialization_and_destruction_") ||
        starts(name, "__cxx_global_var_init"))
        what = "static initialisers of ";
    else if (starts(name, "global constructors keyed to ") || starts(name, "_GLOBAL__sub_I_"))
        what = "global constructors of ";
    else if (starts(name, "global destructors keyed to ") || starts(name, "_GLOBAL__sub_D_"))
        what = "global destructors of ";
    if (!what || !file || !*file || !strcmp(file, "~"))
        return NULL;
    /* clang numbers its initialisers (__cxx_global_var_init.1): keep them apart */
    const char *dot = starts(name, "__cxx_global_var_init") ? strchr(name, '.') : NULL;
    const char *base = fnp_base_name(file);
    size_t len = strlen(what) + strlen(base) + (dot ? strlen(dot) + 3 : 0) + 1;
    char *out = malloc(len);
    if (out)
        snprintf(out, len, "%s%s%s%s%s", what, base, dot ? " (" : "", dot ? dot + 1 : "",
                 dot ? ")" : "");
    return out;
}

char *fnp_short_name(const char *name, const char *file)
{
    if (file && !strcmp(file, "~")) /* pstats' built-ins: <built-in method ...> */
        return strdup(name);
    char *init = initialiser(name, file);
    if (init)
        return init;
    size_t n = strlen(name);
    struct parse q = {.in = name, .cap = 2 * n + 64, .name = NONE};
    q.out = malloc(q.cap);
    q.scratch = malloc(q.cap);
    if (!q.out || !q.scratch) {
        free(q.out);
        free(q.scratch);
        return NULL;
    }
    q.out[0] = '\0';
    seq(&q, "");
    free(q.scratch);
    if (q.bad || q.in[q.pos]) {
        free(q.out);
        return strdup(name);
    }
    return q.out;
}
