/* SPDX-License-Identifier: MIT */
/*
 * PROF_SCHEDULE's text and the action of each step (docs/schedule.md). The rule is
 * torch.profiler.schedule's. A step is placed in its cycle by division and remainder, never
 * by multiplying the period back, and the period's sum is checked before use, so that no
 * uint64_t value of a step or parameter can wrap.
 */
#include "schedule.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Longest piece of the user's text quoted in a reason: the reason stays one short line. */
#define QUOTE_MAX 40

static const char *const key_names[] = {"skip_first", "wait", "warmup", "active", "repeat"};
enum { NKEYS = sizeof(key_names) / sizeof(key_names[0]) };

static bool is_blank(char c)
{
    return c == ' ' || c == '\t';
}

/* [*b, *e) without the blanks at either end. */
static void trim(const char **b, const char **e)
{
    while (*b < *e && is_blank(**b))
        ++*b;
    while (*e > *b && is_blank((*e)[-1]))
        --*e;
}

/*
 * A piece of the user's text fit for a one-line message: at most QUOTE_MAX bytes, then
 * "...", and every byte that is not printable ASCII (a newline would split the line) as '?'.
 */
static void quote(char *dst, size_t cap, const char *b, const char *e)
{
    size_t n = 0;
    for (const char *p = b; p < e && n + 1 < cap && n < QUOTE_MAX; p++)
        dst[n++] = *p >= 0x20 && *p < 0x7f ? *p : '?';
    dst[n] = '\0';
    if ((size_t)(e - b) > n && n + 4 <= cap)
        memcpy(dst + n, "...", 4);
}

static int fail(char *why, size_t whylen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(char *why, size_t whylen, const char *fmt, ...)
{
    if (why && whylen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, whylen, fmt, ap);
        va_end(ap);
    }
    return -EINVAL;
}

/* Unsigned decimal digits only: no sign, no base prefix, no blanks inside. Junk is named
 * before size, so that "99999999999999999999x" is called not a number. */
static int parse_value(const char *b, const char *e, const char *key, uint64_t *v, char *why,
                       size_t whylen)
{
    char q[QUOTE_MAX + 4];
    quote(q, sizeof(q), b, e);
    if (b == e)
        return fail(why, whylen, "missing value for '%s'", key);
    if (*b == '-')
        return fail(why, whylen, "negative value for '%s': '%s'", key, q);
    for (const char *p = b; p < e; p++)
        if (*p < '0' || *p > '9')
            return fail(why, whylen, "value of '%s' is not a decimal number: '%s'", key, q);
    uint64_t x = 0;
    for (const char *p = b; p < e; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (x > (UINT64_MAX - d) / 10)
            return fail(why, whylen, "value of '%s' is out of range (at most 2^64-1): '%s'", key,
                        q);
        x = x * 10 + d;
    }
    *v = x;
    return 0;
}

/* The index of [b, e) in key_names, or NKEYS. Exact and case-sensitive, as torch's names. */
static int find_key(const char *b, const char *e)
{
    size_t len = (size_t)(e - b);
    int k = 0;
    while (k < NKEYS && !(strlen(key_names[k]) == len && memcmp(key_names[k], b, len) == 0))
        k++;
    return k;
}

int fnp_schedule_parse(const char *text, struct fnp_schedule *out, char *why, size_t whylen)
{
    uint64_t vals[NKEYS] = {0, 0, 0, 1, 0}; /* the defaults, in key_names' order */
    bool seen[NKEYS] = {false};
    char q[QUOTE_MAX + 4];
    if (!text)
        text = "";
    if (text[strspn(text, " \t")] == '\0')
        return fail(why, whylen,
                    "empty schedule (expected key=value items, e.g. "
                    "'wait=1,warmup=1,active=3')");

    const char *item = text;
    for (unsigned n = 1;; n++) {
        const char *end = item + strcspn(item, ",");
        const char *eq = memchr(item, '=', (size_t)(end - item));
        const char *kb = item, *ke = eq ? eq : end;
        trim(&kb, &ke);
        quote(q, sizeof(q), kb, ke);
        if (!eq && kb == ke)
            return fail(why, whylen, "item %u is empty (a comma too many?)", n);
        if (!eq)
            return fail(why, whylen, "missing '=' in item '%s'", q);
        if (kb == ke)
            return fail(why, whylen, "missing key before '=' in item %u", n);
        int k = find_key(kb, ke);
        if (k == NKEYS)
            return fail(why, whylen,
                        "unknown key '%s' (known: skip_first, wait, warmup, active, repeat)", q);
        if (seen[k])
            return fail(why, whylen, "duplicate key '%s'", key_names[k]);
        seen[k] = true;
        const char *vb = eq + 1, *ve = end;
        trim(&vb, &ve);
        int rc = parse_value(vb, ve, key_names[k], &vals[k], why, whylen);
        if (rc)
            return rc;
        if (*end == '\0')
            break;
        item = end + 1;
    }
    if (vals[3] == 0)
        return fail(why, whylen, "active must be at least 1");
    out->skip_first = vals[0];
    out->wait = vals[1];
    out->warmup = vals[2];
    out->active = vals[3];
    out->repeat = vals[4];
    return 0;
}

/*
 * Where step falls: false when outside every cycle (among the first skip_first steps, past
 * the repeat-th cycle, or active 0); else *index, the 0-based cycle, and *pos, the step's
 * place in it (0 .. wait + warmup + active - 1).
 */
static bool locate(const struct fnp_schedule *s, uint64_t step, uint64_t *index, uint64_t *pos)
{
    if (s->active == 0 || step < s->skip_first)
        return false;
    uint64_t offset = step - s->skip_first;
    /* A period past UINT64_MAX is longer than any offset: every step is in the first cycle. */
    bool endless = s->wait > UINT64_MAX - s->warmup || s->wait + s->warmup > UINT64_MAX - s->active;
    if (endless) {
        *index = 0;
        *pos = offset;
    } else {
        uint64_t period = s->wait + s->warmup + s->active;
        *index = offset / period;
        *pos = offset % period;
    }
    /* torch compares step / period >= repeat in true division; for a whole repeat that is
     * the same test as the floor quotient's. */
    return s->repeat == 0 || *index < s->repeat;
}

/* The action at place pos of a cycle: wait NONE, warmup WARMUP, active RECORD, the last
 * RECORD_AND_SAVE. Subtracting phase by phase needs no sum of the parameters. */
static enum fnp_step_action action_at(const struct fnp_schedule *s, uint64_t pos)
{
    if (pos < s->wait)
        return FNP_STEP_NONE;
    pos -= s->wait;
    if (pos < s->warmup)
        return FNP_STEP_WARMUP;
    pos -= s->warmup; /* now pos < active */
    return pos == s->active - 1 ? FNP_STEP_RECORD_AND_SAVE : FNP_STEP_RECORD;
}

enum fnp_step_action fnp_schedule_action(const struct fnp_schedule *s, uint64_t step)
{
    uint64_t index, pos;
    if (!locate(s, step, &index, &pos))
        return FNP_STEP_NONE;
    return action_at(s, pos);
}

uint64_t fnp_schedule_cycle(const struct fnp_schedule *s, uint64_t step)
{
    uint64_t index, pos;
    if (!locate(s, step, &index, &pos) || action_at(s, pos) == FNP_STEP_NONE)
        return 0;
    return index == UINT64_MAX ? UINT64_MAX : index + 1;
}

const char *fnp_step_action_name(enum fnp_step_action a)
{
    switch (a) {
    case FNP_STEP_NONE:
        return "NONE";
    case FNP_STEP_WARMUP:
        return "WARMUP";
    case FNP_STEP_RECORD:
        return "RECORD";
    case FNP_STEP_RECORD_AND_SAVE:
        return "RECORD_AND_SAVE";
    }
    return "INVALID";
}
