/*
 * The Chrome trace writer (PROF_TRACE): exact text for small traces, callers before their
 * callees on each track, times converted end by end, metadata escaped, dropped calls
 * labelled, bad input refused, and every output valid JSON.
 *
 * check_trace --write DIR also writes two traces with the profiles they belong to
 * (DIR/full.json with full.prof, DIR/dropped.json with dropped.prof), for the
 * independent checker tests/trace/check_trace.py (tests/trace.cmake).
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "profile.h"

/* ---- a minimal JSON reader: is the text one valid JSON value? -------------------- */

struct json {
    const char *p;
    int depth;
};

static void json_space(struct json *j)
{
    while (*j->p == ' ' || *j->p == '\n' || *j->p == '\t' || *j->p == '\r')
        j->p++;
}

static int json_value(struct json *j);

static int json_string(struct json *j)
{
    if (*j->p++ != '"')
        return 0;
    for (;;) {
        unsigned char c = (unsigned char)*j->p++;
        if (c == '"')
            return 1;
        if (c < 0x20) /* a raw control character, the end of the text included */
            return 0;
        if (c == '\\') {
            c = (unsigned char)*j->p++;
            if (c == 'u') {
                for (int i = 0; i < 4; i++, j->p++)
                    if (!*j->p || !strchr("0123456789abcdefABCDEF", *j->p))
                        return 0;
            } else if (!c || !strchr("\"\\/bfnrt", c)) {
                return 0;
            }
        }
    }
}

static int json_number(struct json *j)
{
    const char *start = j->p;
    if (*j->p == '-')
        j->p++;
    if (*j->p == '0') {
        j->p++;
    } else if (*j->p >= '1' && *j->p <= '9') {
        while (*j->p >= '0' && *j->p <= '9')
            j->p++;
    } else {
        return 0;
    }
    if (*j->p == '.') {
        j->p++;
        if (!(*j->p >= '0' && *j->p <= '9'))
            return 0;
        while (*j->p >= '0' && *j->p <= '9')
            j->p++;
    }
    return j->p > start;
}

static int json_members(struct json *j, char close, int object)
{
    j->p++;
    json_space(j);
    if (*j->p == close) {
        j->p++;
        return 1;
    }
    for (;;) {
        json_space(j);
        if (object) {
            if (!json_string(j))
                return 0;
            json_space(j);
            if (*j->p++ != ':')
                return 0;
        }
        if (!json_value(j))
            return 0;
        json_space(j);
        if (*j->p == close) {
            j->p++;
            return 1;
        }
        if (*j->p++ != ',')
            return 0;
    }
}

static int json_value(struct json *j)
{
    json_space(j);
    if (++j->depth > 64)
        return 0;
    int ok;
    if (*j->p == '{')
        ok = json_members(j, '}', 1);
    else if (*j->p == '[')
        ok = json_members(j, ']', 0);
    else if (*j->p == '"')
        ok = json_string(j);
    else
        ok = json_number(j);
    j->depth--;
    return ok;
}

static int json_valid(const char *text)
{
    struct json j = {text, 0};
    if (!json_value(&j))
        return 0;
    json_space(&j);
    return *j.p == 0;
}

START_TEST(the_json_reader_rejects_what_it_should)
{
    ck_assert(json_valid("{\"a\":[1,2.5,{\"b\":\"\\u0041\\n\"}],\"c\":{}}"));
    ck_assert(!json_valid("{\"a\":[1,2,]}"));
    ck_assert(!json_valid("{\"a\":1,}"));
    ck_assert(!json_valid("{\"a\":\"x\ny\"}"));
    ck_assert(!json_valid("{\"a\":1}}"));
    ck_assert(!json_valid("{\"a\":1.}"));
    ck_assert(!json_valid("[\"\\x\"]"));
}
END_TEST

/* ---- traces built by hand ------------------------------------------------------------ */

enum { MAIN, WORK, WORK_B, REGION, PROCESS, NFUNCS };

/* main (a.c:3), work (a.c:9), work (b.c:4): a name twice, the region "load config"
 * (a.c:5), and fnprof's synthetic <process>, which no event names. */
static void make_profile(struct fnp_profile *p)
{
    static const struct fnp_key keys[NFUNCS] = {
        {"/src/a.c", 3, "main"},        {"/src/a.c", 9, "work"}, {"/src/b.c", 4, "work"},
        {"/src/a.c", 5, "load config"}, {"~", 0, "<process>"},
    };
    fnp_profile_init(p);
    for (int i = 0; i < NFUNCS; i++)
        ck_assert_int_eq(fnp_profile_func(p, &keys[i]), i);
}

static const uint8_t regions[NFUNCS] = {[REGION] = 1};

static const struct fnp_trace_track two_tracks[] = {{100, "main"}, {101, NULL}};

/* In ticks of 1 ns, each track's calls in the order they ended, the tracks interleaved:
 *   tid 100: main [0, 10000) calls work [1000, 3000), then work [3000, 4000), then the
 *            region [4000, 10000), inside which b.c's work runs for all of its length
 *            (the same span: told apart only by the order they ended);
 *   tid 101: b.c's work [2500, 3500) calls a.c's work at once, [2500, 3000). */
static const struct fnp_trace_event calls[] = {
    {1000, 3000, WORK, 0}, {2500, 3000, WORK, 1},    {2500, 3500, WORK_B, 1},
    {3000, 4000, WORK, 0}, {4000, 10000, WORK_B, 0}, {4000, 10000, REGION, 0},
    {0, 10000, MAIN, 0},
};
#define NCALLS (sizeof(calls) / sizeof(calls[0]))

static void make_trace(struct fnp_trace *t, const struct fnp_profile *p,
                       struct fnp_trace_event *events, size_t n)
{
    memset(t, 0, sizeof(*t));
    t->prof = p;
    t->events = events;
    t->nevents = n;
    t->tracks = two_tracks;
    t->ntracks = 2;
    t->is_region = regions;
    t->pid = 42;
    t->process = "demo";
    t->tick_seconds = 1e-9;
    t->limit = 1000;
}

/* The trace written to memory, as a string; the caller frees it. */
static char *write_trace(const struct fnp_trace *t)
{
    struct fnp_sink s;
    fnp_sink_memory(&s);
    ck_assert_int_eq(fnp_trace_write(&s, t), 0);
    fnp_sink_write(&s, "", 1);
    ck_assert_int_eq(s.err, 0);
    ck_assert_msg(json_valid(s.buf), "not JSON:\n%s", s.buf);
    return s.buf;
}

/* Where line occurs in text, as a whole line (with its leading ",\n" or "[\n"). */
static size_t line_at(const char *text, const char *line)
{
    size_t n = strlen(line);
    for (const char *p = strstr(text, line); p; p = strstr(p + 1, line))
        if (p > text && p[-1] == '\n' && (p[n] == ',' || p[n] == '\n'))
            return (size_t)(p - text);
    ck_abort_msg("no line\n%s\nin\n%s", line, text);
    return 0;
}

static size_t count(const char *text, const char *what)
{
    size_t n = 0;
    for (const char *p = strstr(text, what); p; p = strstr(p + 1, what))
        n++;
    return n;
}

#define X_MAIN                                                                                     \
    "{\"name\":\"main\",\"cat\":\"function\",\"ph\":\"X\",\"ts\":0.000,\"dur\":10.000,"            \
    "\"pid\":42,\"tid\":100,\"args\":{\"file\":\"/src/a.c\",\"line\":3}}"
#define X_WORK1                                                                                    \
    "{\"name\":\"work\",\"cat\":\"function\",\"ph\":\"X\",\"ts\":1.000,\"dur\":2.000,"             \
    "\"pid\":42,\"tid\":100,\"args\":{\"file\":\"/src/a.c\",\"line\":9}}"
#define X_WORK2                                                                                    \
    "{\"name\":\"work\",\"cat\":\"function\",\"ph\":\"X\",\"ts\":3.000,\"dur\":1.000,"             \
    "\"pid\":42,\"tid\":100,\"args\":{\"file\":\"/src/a.c\",\"line\":9}}"
#define X_REGION                                                                                   \
    "{\"name\":\"load config\",\"cat\":\"region\",\"ph\":\"X\",\"ts\":4.000,\"dur\":6.000,"        \
    "\"pid\":42,\"tid\":100,\"args\":{\"file\":\"/src/a.c\",\"line\":5}}"
#define X_WORK_B                                                                                   \
    "{\"name\":\"work\",\"cat\":\"function\",\"ph\":\"X\",\"ts\":4.000,\"dur\":6.000,"             \
    "\"pid\":42,\"tid\":100,\"args\":{\"file\":\"/src/b.c\",\"line\":4}}"
#define X_OTHER                                                                                    \
    "{\"name\":\"work\",\"cat\":\"function\",\"ph\":\"X\",\"ts\":2.500,\"dur\":1.000,"             \
    "\"pid\":42,\"tid\":101,\"args\":{\"file\":\"/src/b.c\",\"line\":4}}"
#define X_OTHER_CALLEE                                                                             \
    "{\"name\":\"work\",\"cat\":\"function\",\"ph\":\"X\",\"ts\":2.500,\"dur\":0.500,"             \
    "\"pid\":42,\"tid\":101,\"args\":{\"file\":\"/src/a.c\",\"line\":9}}"

START_TEST(calls_come_per_track_callers_before_callees)
{
    struct fnp_profile p;
    struct fnp_trace t;
    struct fnp_trace_event ev[NCALLS];
    memcpy(ev, calls, sizeof(calls));
    make_profile(&p);
    make_trace(&t, &p, ev, NCALLS);
    char *text = write_trace(&t);

    size_t main_at = line_at(text, X_MAIN), work1 = line_at(text, X_WORK1);
    size_t work2 = line_at(text, X_WORK2), region = line_at(text, X_REGION);
    size_t work_b = line_at(text, X_WORK_B), other = line_at(text, X_OTHER);
    size_t other_callee = line_at(text, X_OTHER_CALLEE);
    ck_assert_uint_lt(main_at, work1);
    ck_assert_uint_lt(work1, work2);
    ck_assert_uint_lt(work2, region);
    /* One span: the call that ended later (the region) is the caller. */
    ck_assert_uint_lt(region, work_b);
    /* Tracks one after the other, in the order given. */
    ck_assert_uint_lt(work_b, other);
    /* Two calls that start together: the longer is the caller. */
    ck_assert_uint_lt(other, other_callee);
    ck_assert_uint_eq(count(text, "\"ph\":\"X\""), NCALLS);
    /* The events are left as they were given. */
    ck_assert_mem_eq(ev, calls, sizeof(calls));
    free(text);
    fnp_profile_free(&p);
}
END_TEST

START_TEST(tracks_are_named_and_keep_their_order)
{
    struct fnp_profile p;
    struct fnp_trace t;
    struct fnp_trace_event ev[NCALLS];
    memcpy(ev, calls, sizeof(calls));
    make_profile(&p);
    make_trace(&t, &p, ev, NCALLS);
    char *text = write_trace(&t);
    ck_assert_ptr_eq(strstr(text, "{\"traceEvents\":[\n{\"name\":\"process_name\",\"ph\":\"M\","
                                  "\"pid\":42,\"tid\":0,\"args\":{\"name\":\"demo\"}},\n"),
                     text);
    size_t main_name = line_at(text, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":42,"
                                     "\"tid\":100,\"args\":{\"name\":\"main\"}}");
    size_t main_sort = line_at(text, "{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":42,"
                                     "\"tid\":100,\"args\":{\"sort_index\":0}}");
    /* A track without a name gets one from its tid. */
    size_t other_name = line_at(text, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":42,"
                                      "\"tid\":101,\"args\":{\"name\":\"thread 101\"}}");
    size_t other_sort = line_at(text, "{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":42,"
                                      "\"tid\":101,\"args\":{\"sort_index\":1}}");
    ck_assert_uint_lt(main_name, main_sort);
    ck_assert_uint_lt(main_sort, other_name);
    ck_assert_uint_lt(other_sort, line_at(text, X_MAIN));
    free(text);
    fnp_profile_free(&p);
}
END_TEST

START_TEST(the_main_thread_comes_first)
{
    /* The main thread's tid is the pid; given in the middle, it is listed first and the
     * others keep their order after it. */
    struct fnp_profile p;
    struct fnp_trace t;
    struct fnp_trace_track tracks[] = {{100, "w1"}, {42, "main"}, {101, "w2"}};
    struct fnp_trace_event ev[] = {
        {5, 6, WORK, 0}, {1, 9, MAIN, 1}, {2, 3, WORK, 2}, {7, 8, WORK, 1}, {4, 5, WORK, 0},
    };
    make_profile(&p);
    make_trace(&t, &p, ev, 5);
    t.tracks = tracks;
    t.ntracks = 3;
    char *text = write_trace(&t);
    size_t at[3];
    const int tids[3] = {42, 100, 101};
    for (int r = 0; r < 3; r++) {
        char line[160];
        snprintf(line, sizeof(line),
                 "{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":42,\"tid\":%d,"
                 "\"args\":{\"sort_index\":%d}}",
                 tids[r], r);
        at[r] = line_at(text, line);
    }
    ck_assert_uint_lt(at[0], at[1]);
    ck_assert_uint_lt(at[1], at[2]);
    /* Calls in the same order: main's track, then 100's, then 101's. */
    const char *main_call = strstr(text, "\"ts\":0.007,");
    const char *w1_call = strstr(text, "\"ts\":0.004,");
    const char *w2_call = strstr(text, "\"ts\":0.002,");
    ck_assert_ptr_nonnull(main_call);
    ck_assert_ptr_nonnull(w1_call);
    ck_assert_ptr_nonnull(w2_call);
    ck_assert(main_call < w1_call);
    ck_assert(w1_call < w2_call);
    ck_assert(strstr(text, "\"ts\":0.001,") < main_call);
    free(text);
    fnp_profile_free(&p);
}
END_TEST

START_TEST(an_empty_trace_is_the_exact_minimal_file)
{
    struct fnp_profile p;
    struct fnp_trace t;
    make_profile(&p);
    make_trace(&t, &p, NULL, 0);
    t.ntracks = 0;
    t.process = NULL;
    char *text = write_trace(&t);
    ck_assert_str_eq(text, "{\"traceEvents\":[\n"
                           "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":42,\"tid\":0,"
                           "\"args\":{\"name\":\"process 42\"}}\n"
                           "],\n"
                           "\"displayTimeUnit\":\"ns\",\n"
                           "\"otherData\":{\"fnprof_events_limit\":1000,"
                           "\"fnprof_events_dropped\":0}}\n");
    free(text);
    fnp_profile_free(&p);
}
END_TEST

START_TEST(times_convert_each_end_so_callees_stay_inside)
{
    /* Ticks of 0.6 ns. main [5000, 5002) is 3000 ns to 3001.2, so [3000, 3001); its
     * callee [5001, 5002) is [3000.6, 3001.2), so [3001, 3001): of no length, where a
     * rounded duration (0.6 ns: 1) would end it at 3002, after main. */
    struct fnp_profile p;
    struct fnp_trace t;
    struct fnp_trace_event ev[] = {
        {5001, 5002, WORK, 0},
        {5000, 5002, MAIN, 0},
        /* 2^40 ticks: 659706976665.6 ns; the microseconds printed whole, not as a
         * double's digits */
        {UINT64_C(1) << 40, (UINT64_C(1) << 40) + 5, MAIN, 1},
        /* a clock read backwards: no length, never negative */
        {9000, 8000, WORK_B, 1},
    };
    make_profile(&p);
    make_trace(&t, &p, ev, 4);
    t.tick_seconds = 0.6e-9;
    char *text = write_trace(&t);
    ck_assert_ptr_nonnull(strstr(text, "\"name\":\"main\",\"cat\":\"function\",\"ph\":\"X\","
                                       "\"ts\":3.000,\"dur\":0.001,"));
    ck_assert_ptr_nonnull(strstr(text, "\"name\":\"work\",\"cat\":\"function\",\"ph\":\"X\","
                                       "\"ts\":3.001,\"dur\":0.000,"));
    ck_assert_ptr_nonnull(strstr(text, "\"ts\":659706976.666,\"dur\":0.003,"));
    ck_assert_ptr_nonnull(strstr(text, "\"ts\":5.400,\"dur\":0.000,\"pid\":42,\"tid\":101"));
    free(text);
    fnp_profile_free(&p);
}
END_TEST

START_TEST(metadata_and_names_are_escaped)
{
    struct fnp_profile p;
    struct fnp_trace t;
    make_profile(&p);
    struct fnp_key odd = {"/src/<odd>.c", 1, "op\"er\\ator\x01"};
    int64_t f = fnp_profile_func(&p, &odd);
    ck_assert_int_ge(f, 0);
    ck_assert_int_eq(fnp_profile_set_meta(&p, "program", "/bin/demo"), 0);
    ck_assert_int_eq(fnp_profile_set_meta(&p, "note \"1\"", "a\\b\nc<d>&e\xff"), 0);
    /* A pair named like one of the writer's own keys is left out: no key twice. */
    ck_assert_int_eq(fnp_profile_set_meta(&p, "fnprof_events_dropped", "many"), 0);
    struct fnp_trace_track tracks[] = {{7, "wor\"ker\n"}};
    struct fnp_trace_event ev[] = {{0, 10, (uint32_t)f, 0}};
    make_trace(&t, &p, ev, 1);
    uint8_t is_region[NFUNCS + 1] = {[REGION] = 1}; /* one per function, the new one too */
    t.is_region = is_region;
    t.tracks = tracks;
    t.ntracks = 1;
    t.process = "de\"mo";
    t.dropped = 2;
    char *text = write_trace(&t);
    ck_assert_ptr_nonnull(strstr(text, "\"args\":{\"name\":\"de\\\"mo\"}"));
    ck_assert_ptr_nonnull(strstr(text, "\"args\":{\"name\":\"wor\\\"ker\\u000a\"}"));
    ck_assert_ptr_nonnull(strstr(text, "{\"name\":\"op\\\"er\\\\ator\\u0001\","));
    ck_assert_ptr_nonnull(strstr(text, "\"file\":\"/src/\\u003codd\\u003e.c\",\"line\":1}"));
    ck_assert_ptr_nonnull(strstr(text, "\"otherData\":{\"program\":\"/bin/demo\","
                                       "\"note \\\"1\\\"\":\"a\\\\b\\u000ac\\u003cd\\u003e"
                                       "\\u0026e\xef\xbf\xbd\","
                                       "\"fnprof_events_limit\":1000,"
                                       "\"fnprof_events_dropped\":2}}\n"));
    ck_assert_uint_eq(count(text, "fnprof_events_dropped"), 1);
    free(text);
    fnp_profile_free(&p);
}
END_TEST

START_TEST(dropped_calls_are_labelled_where_the_timeline_stops)
{
    struct fnp_profile p;
    struct fnp_trace t;
    struct fnp_trace_event ev[NCALLS];
    memcpy(ev, calls, sizeof(calls));
    make_profile(&p);
    make_trace(&t, &p, ev, NCALLS);
    char *text = write_trace(&t);
    ck_assert_ptr_null(strstr(text, "not traced"));
    ck_assert_ptr_null(strstr(text, "\"ph\":\"i\""));
    free(text);

    t.dropped = 7;
    t.limit = 6;
    text = write_trace(&t);
    /* After every call, at the last end (10 us, on main's track), global. */
    size_t label = line_at(text, "{\"name\":\"fnprof: 7 calls not traced (PROF_TRACE_EVENTS=6)\","
                                 "\"cat\":\"fnprof\",\"ph\":\"i\",\"s\":\"g\",\"ts\":10.000,"
                                 "\"pid\":42,\"tid\":100,\"args\":{\"dropped\":7,\"limit\":6}}");
    ck_assert_uint_gt(label, line_at(text, X_OTHER_CALLEE));
    ck_assert_ptr_nonnull(strstr(text, "\"fnprof_events_limit\":6,\"fnprof_events_dropped\":7}"));
    free(text);
    fnp_profile_free(&p);
}
END_TEST

START_TEST(bad_input_is_refused_before_anything_is_written)
{
    struct fnp_profile p;
    struct fnp_trace t;
    struct fnp_sink s;
    struct fnp_trace_event ev[NCALLS];
    make_profile(&p);
    for (int bad = 0; bad < 4; bad++) {
        memcpy(ev, calls, sizeof(calls));
        make_trace(&t, &p, ev, NCALLS);
        if (bad == 0)
            ev[3].func = NFUNCS; /* no such function */
        else if (bad == 1)
            ev[2].track = 2; /* no such track */
        else if (bad == 2)
            t.tick_seconds = 0;
        else
            t.prof = NULL;
        fnp_sink_memory(&s);
        ck_assert_int_eq(fnp_trace_write(&s, &t), -EINVAL);
        ck_assert_uint_eq(s.total, 0);
        fnp_sink_free(&s);
    }
    fnp_profile_free(&p);
}
END_TEST

/* ---- files for tests/trace/check_trace.py ------------------------------------------ */

/* Where --write puts the files; NULL: the suite runs instead. */
static const char *write_dir;

static void write_pair(const char *name, struct fnp_profile *p, struct fnp_trace *t)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s.json", write_dir, name);
    int rc = fnp_write_file_atomic(path, fnp_trace_write_fn, t);
    ck_assert_msg(!rc, "%s: %s", path, strerror(-rc));
    snprintf(path, sizeof(path), "%s/%s.prof", write_dir, name);
    rc = fnp_write_file_atomic(path, fnp_profile_write_fn, p);
    ck_assert_msg(!rc, "%s: %s", path, strerror(-rc));
}

/* The calls above with the profile they make: every function's ncalls its number of
 * events (<process>: one call per thread), so that the checker can match them; then the
 * same profile with a trace that kept only the first three calls to end. */
START_TEST(files_for_the_checker)
{
    struct fnp_profile p;
    struct fnp_trace t;
    struct fnp_trace_event ev[NCALLS];
    memcpy(ev, calls, sizeof(calls));
    make_profile(&p);
    for (size_t i = 0; i < NCALLS; i++)
        p.funcs[calls[i].func].st.ncalls++;
    p.funcs[PROCESS].st.ncalls = 2;
    for (int i = 0; i < NFUNCS; i++)
        p.funcs[i].st.pcalls = p.funcs[i].st.ncalls;
    ck_assert_int_eq(fnp_profile_set_meta(&p, "program", "demo \"quoted\"\n"), 0);
    make_trace(&t, &p, ev, NCALLS);
    write_pair("full", &p, &t);
    t.nevents = 3;
    t.dropped = NCALLS - 3;
    t.limit = 3;
    write_pair("dropped", &p, &t);
    fnp_profile_free(&p);
}
END_TEST

int main(int argc, char **argv)
{
    Suite *s = suite_create("trace");
    TCase *tc = tcase_create("trace");
    if (argc == 3 && !strcmp(argv[1], "--write")) {
        write_dir = argv[2];
        tcase_add_test(tc, files_for_the_checker);
        suite_add_tcase(s, tc);
        return fnp_check_run(s);
    }
    tcase_add_test(tc, the_json_reader_rejects_what_it_should);
    tcase_add_test(tc, calls_come_per_track_callers_before_callees);
    tcase_add_test(tc, tracks_are_named_and_keep_their_order);
    tcase_add_test(tc, the_main_thread_comes_first);
    tcase_add_test(tc, an_empty_trace_is_the_exact_minimal_file);
    tcase_add_test(tc, times_convert_each_end_so_callees_stay_inside);
    tcase_add_test(tc, metadata_and_names_are_escaped);
    tcase_add_test(tc, dropped_calls_are_labelled_where_the_timeline_stops);
    tcase_add_test(tc, bad_input_is_refused_before_anything_is_written);
    suite_add_tcase(s, tc);
    return fnp_check_run(s);
}
/* SPDX-License-Identifier: MIT */
