/*
 * Score-P filter files (profile/filter.c, docs/filter.md): the rule order (last match wins),
 * files before names, MANGLED and DEMANGLED, wildcards, escapes and comments, and every
 * refusal with its line.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "filter.h"

static char err[256];

static struct fnp_filter *parse(const char *text)
{
    err[0] = 0;
    return fnp_filter_parse(text, strlen(text), "f", err, sizeof(err));
}

/* The verdict on a C function (mangled = name) of file. */
static int out(const struct fnp_filter *f, const char *file, const char *name)
{
    return fnp_filter_excludes(f, file, name, name);
}

START_TEST(last_matching_rule_decides)
{
    struct fnp_filter *f = parse("SCOREP_REGION_NAMES_BEGIN\n"
                                 "  EXCLUDE *\n"
                                 "  INCLUDE main solve*\n"
                                 "          work\n"
                                 "  EXCLUDE solve_tiny\n"
                                 "SCOREP_REGION_NAMES_END\n");
    ck_assert_msg(f, "%s", err);
    ck_assert_int_eq(out(f, "/a.c", "helper"), 1);
    ck_assert_int_eq(out(f, "/a.c", "main"), 0);
    ck_assert_int_eq(out(f, "/a.c", "solve"), 0);
    ck_assert_int_eq(out(f, "/a.c", "solve_big"), 0);
    ck_assert_int_eq(out(f, "/a.c", "work"), 0); /* a pattern on a line of its own */
    ck_assert_int_eq(out(f, "/a.c", "solve_tiny"), 1);
    ck_assert(fnp_filter_has_name_rules(f));
    ck_assert(!fnp_filter_has_file_rules(f));
    fnp_filter_free(f);
}
END_TEST

START_TEST(nothing_matching_is_kept)
{
    struct fnp_filter *f = parse("SCOREP_REGION_NAMES_BEGIN EXCLUDE foo SCOREP_REGION_NAMES_END");
    ck_assert_msg(f, "%s", err);
    ck_assert_int_eq(out(f, "/a.c", "foobar"), 0); /* whole-name match, not a substring */
    ck_assert_int_eq(out(f, "/a.c", "foo"), 1);
    fnp_filter_free(f);
    f = parse("# only a comment\n\n");
    ck_assert_msg(f, "%s", err);
    ck_assert_int_eq(out(f, "/a.c", "foo"), 0);
    fnp_filter_free(f);
}
END_TEST

START_TEST(file_exclusion_beats_names)
{
    struct fnp_filter *f = parse("SCOREP_FILE_NAMES_BEGIN\n"
                                 "  EXCLUDE */vendor/*\n"
                                 "  INCLUDE */vendor/keep.c\n"
                                 "SCOREP_FILE_NAMES_END\n"
                                 "SCOREP_REGION_NAMES_BEGIN\n"
                                 "  INCLUDE *\n"
                                 "  EXCLUDE tiny\n"
                                 "SCOREP_REGION_NAMES_END\n");
    ck_assert_msg(f, "%s", err);
    ck_assert_int_eq(out(f, "/src/vendor/z.c", "main"), 1);    /* INCLUDE * cannot undo it */
    ck_assert_int_eq(out(f, "/src/vendor/sub/y.c", "f"), 1);   /* '*' crosses '/' */
    ck_assert_int_eq(out(f, "/src/vendor/keep.c", "f"), 0);    /* last file rule wins */
    ck_assert_int_eq(out(f, "/src/vendor/keep.c", "tiny"), 1); /* then the names */
    ck_assert_int_eq(out(f, "/src/app.c", "f"), 0);
    ck_assert_int_eq(fnp_filter_excludes(f, NULL, "f", "f"), 0); /* unknown file: names only */
    ck_assert_int_eq(fnp_filter_excludes(f, NULL, "tiny", NULL), 1);
    ck_assert(fnp_filter_has_file_rules(f));
    fnp_filter_free(f);
}
END_TEST

START_TEST(mangled_and_demangled_forms)
{
    struct fnp_filter *f = parse("SCOREP_REGION_NAMES_BEGIN\n"
                                 "  EXCLUDE MANGLED _ZN2ns4util*\n"
                                 "  EXCLUDE ns::tiny(int)\n"
                                 "  INCLUDE MANGLED _ZN2ns4util4keepEv DEMANGLED ns::tiny(int)\n"
                                 "SCOREP_REGION_NAMES_END\n");
    ck_assert_msg(f, "%s", err);
    ck_assert(fnp_filter_has_mangled_rules(f));
    ck_assert_int_eq(fnp_filter_excludes(f, "/a.cc", "ns::util::run()", "_ZN2ns4util3runEv"), 1);
    ck_assert_int_eq(fnp_filter_excludes(f, "/a.cc", "ns::util::keep()", "_ZN2ns4util4keepEv"), 0);
    /* DEMANGLED switches back within the same INCLUDE */
    ck_assert_int_eq(fnp_filter_excludes(f, "/a.cc", "ns::tiny(int)", "_ZN2ns4tinyEi"), 0);
    /* a mangled rule never matches the demangled form, nor the other way */
    ck_assert_int_eq(fnp_filter_excludes(f, "/a.cc", "_ZN2ns4util3runEv", NULL), 0);
    fnp_filter_free(f);
}
END_TEST

START_TEST(wildcards_escapes_and_comments)
{
    struct fnp_filter *f = parse("SCOREP_REGION_NAMES_BEGIN  # names\n"
                                 "  EXCLUDE get_? [ab]x operator\\[\\]* a\\ b(int,\\ char)\n"
                                 "  EXCLUDE hash\\#tag # the rest is a comment: EXCLUDE main\n"
                                 "SCOREP_REGION_NAMES_END\n");
    ck_assert_msg(f, "%s", err);
    ck_assert_int_eq(out(f, "/a.c", "get_x"), 1);
    ck_assert_int_eq(out(f, "/a.c", "get_xy"), 0);
    ck_assert_int_eq(out(f, "/a.c", "ax"), 1);
    ck_assert_int_eq(out(f, "/a.c", "cx"), 0);
    ck_assert_int_eq(out(f, "/a.c", "operator[](unsigned long)"), 1);
    ck_assert_int_eq(out(f, "/a.c", "a b(int, char)"), 1);
    ck_assert_int_eq(out(f, "/a.c", "hash#tag"), 1);
    ck_assert_int_eq(out(f, "/a.c", "main"), 0);
    ck_assert_int_eq(out(f, "/a.c", "Get_x"), 0); /* case-sensitive */
    fnp_filter_free(f);
}
END_TEST

/* Each malformed text is refused, naming its line and what is wrong. */
START_TEST(refusals_name_the_line)
{
    static const struct {
        const char *text, *reason;
    } bad[] = {
        {"EXCLUDE foo\n", "f:1: EXCLUDE outside a SCOREP_FILE_NAMES or SCOREP_REGION_NAMES block"},
        {"\nfoo\n", "f:2: 'foo' outside a SCOREP_FILE_NAMES or SCOREP_REGION_NAMES block"},
        {"SCOREP_REGION_NAMES_BEGIN\n  foo\nSCOREP_REGION_NAMES_END\n",
         "f:2: 'foo' before EXCLUDE or INCLUDE"},
        {"SCOREP_REGION_NAMES_BEGIN\n  EXCLUDE\nSCOREP_REGION_NAMES_END\n",
         "f:2: EXCLUDE without a pattern"},
        {"SCOREP_REGION_NAMES_BEGIN\n  EXCLUDE MANGLED\n  INCLUDE x\nSCOREP_REGION_NAMES_END\n",
         "f:2: EXCLUDE without a pattern"},
        {"SCOREP_REGION_NAMES_BEGIN\n  EXCLUDE a\n", "f:3: the block opened on line 1 has no END"},
        {"SCOREP_REGION_NAMES_BEGIN\nSCOREP_FILE_NAMES_BEGIN\n",
         "f:2: SCOREP_FILE_NAMES_BEGIN inside a block opened on line 1"},
        {"SCOREP_REGION_NAMES_BEGIN\nSCOREP_FILE_NAMES_END\n",
         "f:2: SCOREP_FILE_NAMES_END without its BEGIN"},
        {"SCOREP_REGION_NAMES_END\n", "f:1: SCOREP_REGION_NAMES_END without its BEGIN"},
        {"SCOREP_FILE_NAMES_BEGIN\n EXCLUDE MANGLED x\nSCOREP_FILE_NAMES_END\n",
         "f:2: MANGLED belongs after EXCLUDE or INCLUDE in a SCOREP_REGION_NAMES block"},
        {"SCOREP_REGION_NAMES_BEGIN\n DEMANGLED x\nSCOREP_REGION_NAMES_END\n",
         "f:2: DEMANGLED belongs after EXCLUDE or INCLUDE in a SCOREP_REGION_NAMES block"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct fnp_filter *f = parse(bad[i].text);
        ck_assert_msg(!f, "accepted: %s", bad[i].text);
        ck_assert_str_eq(err, bad[i].reason);
    }
    /* a NUL byte: not a text file */
    static const char nul[] = "SCOREP_REGION_NAMES_BEGIN\n EXCLUDE a\0b\nSCOREP_REGION_NAMES_END\n";
    ck_assert(!fnp_filter_parse(nul, sizeof(nul) - 1, "f", err, sizeof(err)));
    ck_assert_str_eq(err, "f:2: a NUL byte: not a text file");
}
END_TEST

START_TEST(load_reports_a_missing_file)
{
    ck_assert(!fnp_filter_load("/nonexistent/filter.txt", err, sizeof(err)));
    ck_assert_str_eq(err, "/nonexistent/filter.txt: No such file or directory");
}
END_TEST

/* Messages quote what the file says: a token ending in "\<newline>" (fuzz_filter found
 * it), a carriage return or an escape sequence becomes '?', so that the message stays one
 * line and drives no terminal. */
START_TEST(a_refusal_is_one_printable_line)
{
    static const char *const texts[] = {"C\\\n\nS\n", "a\r\x1b[2Jb\n",
                                        "SCOREP_REGION_NAMES_END\x1b\n"};
    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
        ck_assert(!parse(texts[i]));
        for (const char *c = err; *c; c++)
            ck_assert_msg((unsigned char)*c >= 0x20 && *c != 0x7f, "%zu: %s", i, err);
    }
    ck_assert_str_eq(err, "f:1: 'SCOREP_REGION_NAMES_END?' outside a SCOREP_FILE_NAMES or "
                          "SCOREP_REGION_NAMES block");
    ck_assert(!fnp_filter_load("/nonexistent/a\nb", err, sizeof(err)));
    ck_assert_str_eq(err, "/nonexistent/a?b: No such file or directory");
}
END_TEST

/* The rule on fnp_filter_pattern(name) alone. */
static struct fnp_filter *exclude_only(const char *name, char **pattern)
{
    *pattern = fnp_filter_pattern(name);
    ck_assert_ptr_nonnull(*pattern);
    char text[1024];
    snprintf(text, sizeof(text),
             "SCOREP_REGION_NAMES_BEGIN\n EXCLUDE %s\nSCOREP_REGION_NAMES_END\n", *pattern);
    struct fnp_filter *f = parse(text);
    ck_assert_msg(f, "%s: %s", *pattern, err);
    return f;
}

/* What suggest-filter writes for a name matches that name and no other, and is one line
 * of printable ASCII whatever bytes the name holds. */
START_TEST(a_pattern_reads_back_as_its_name)
{
    static const char *const names[] = {"a\nb",
                                        "\r",
                                        "\x1b[31mred\x1b[0m",
                                        "tab\there",
                                        "*",
                                        "?x[a]",
                                        "\\",
                                        "x\\x41",
                                        "\\x1b",
                                        "op# 1",
                                        "\xff\xfe",
                                        "\xc2\x9b!",
                                        "caf\xc3\xa9",
                                        "\xe4\xb8\xad",
                                        "\x7f",
                                        "\xed\xa0\x80",
                                        "INCLUDE",
                                        "MANGLED",
                                        "SCOREP_REGION_NAMES_END"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        char *pattern;
        struct fnp_filter *f = exclude_only(names[i], &pattern);
        for (const char *c = pattern; *c; c++)
            ck_assert_msg((unsigned char)*c >= 0x20 && (unsigned char)*c < 0x7f, "%zu: %s", i,
                          pattern);
        ck_assert_msg(out(f, NULL, names[i]) == 1, "%zu: %s", i, pattern);
        char other[64];
        snprintf(other, sizeof(other), "%sx", names[i]);
        ck_assert_msg(out(f, NULL, other) == 0, "%zu: %s", i, pattern);
        fnp_filter_free(f);
        free(pattern);
    }
    /* every byte, alone and between two others */
    for (int b = 1; b < 256; b++) {
        char name[4] = {'a', (char)b, 'z', 0}, *pattern;
        struct fnp_filter *f = exclude_only(name, &pattern);
        ck_assert_msg(out(f, NULL, name) == 1, "byte %d: %s", b, pattern);
        name[1] = (char)(b == 'q' ? 'r' : 'q');
        ck_assert_msg(out(f, NULL, name) == 0, "byte %d: %s", b, pattern);
        fnp_filter_free(f);
        free(pattern);
    }
    /* "\x00" names no name */
    ck_assert(!parse("SCOREP_REGION_NAMES_BEGIN\n EXCLUDE a\\x00\nSCOREP_REGION_NAMES_END\n"));
    ck_assert_str_eq(err, "f:2: \\x00: a name holds no NUL byte");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("filter");
    TCase *tc = tcase_create("filter");
    tcase_add_test(tc, last_matching_rule_decides);
    tcase_add_test(tc, nothing_matching_is_kept);
    tcase_add_test(tc, file_exclusion_beats_names);
    tcase_add_test(tc, mangled_and_demangled_forms);
    tcase_add_test(tc, wildcards_escapes_and_comments);
    tcase_add_test(tc, refusals_name_the_line);
    tcase_add_test(tc, load_reports_a_missing_file);
    tcase_add_test(tc, a_refusal_is_one_printable_line);
    tcase_add_test(tc, a_pattern_reads_back_as_its_name);
    suite_add_tcase(s, tc);
    return fnp_check_run(s);
}
/* SPDX-License-Identifier: MIT */
