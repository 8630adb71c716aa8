/*
 * libFuzzer target for the Perfetto trace reader of `fnprof convert FILE.pftrace --to
 * chrome-trace` (toolchain/pftrace-chrome.c). Beyond "no crash, no leak, no undefined
 * behaviour, no allocation past -malloc_limit_mb", it checks what the converter promises:
 * 0, -EINVAL or -ENOMEM; when 0, every packet of the file was well-formed protobuf at its
 * top level (a malformed one ends the conversion with an error), and the output is one
 * JSON object (checked by the small strict parser below: syntax, escapes, UTF-8). It does
 * not check B/E balance: the converter copies slices in the file's order and promises no
 * more than that. Seeds: tests/data/pftrace_seeds (real traces and regression inputs).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "pftrace-chrome.h"
#include "profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_DEPTH 16 /* the converter writes objects three deep */

struct json {
    const unsigned char *p, *end;
};

static int ws(struct json *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\n' || *j->p == '\t' || *j->p == '\r'))
        j->p++;
    return j->p < j->end;
}

static int lit(struct json *j, const char *w)
{
    size_t n = strlen(w);
    if ((size_t)(j->end - j->p) < n || memcmp(j->p, w, n))
        return 0;
    j->p += n;
    return 1;
}

static int digits(struct json *j)
{
    const unsigned char *at = j->p;
    while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
        j->p++;
    return j->p > at;
}

static int number(struct json *j)
{
    if (j->p < j->end && *j->p == '-')
        j->p++;
    if (!digits(j))
        return 0;
    if (j->p < j->end && *j->p == '.' && (j->p++, !digits(j)))
        return 0;
    if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
        j->p++;
        if (j->p < j->end && (*j->p == '+' || *j->p == '-'))
            j->p++;
        return digits(j);
    }
    return 1;
}

/* One UTF-8 sequence, well-formed (no overlong forms, surrogates or code points past
 * U+10FFFF): what fnp_json_string promises to write. */
static int utf8(struct json *j)
{
    unsigned c = *j->p++, n, min;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        n = 1, min = 0x80;
    else if (c >= 0xe0 && c <= 0xef)
        n = 2, min = 0x800;
    else if (c >= 0xf0 && c <= 0xf4)
        n = 3, min = 0x10000;
    else
        return 0;
    unsigned cp = c & (0x3f >> n);
    for (unsigned i = 0; i < n; i++, j->p++) {
        if (j->p == j->end || (*j->p & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (*j->p & 0x3f);
    }
    return cp >= min && cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff);
}

static int string(struct json *j)
{
    j->p++; /* the opening quote */
    while (j->p < j->end && *j->p != '"') {
        if (*j->p < 0x20)
            return 0;
        if (*j->p != '\\') {
            if (!utf8(j))
                return 0;
            continue;
        }
        if (++j->p == j->end)
            return 0;
        unsigned char e = *j->p++;
        if (e == 'u') {
            for (int i = 0; i < 4; i++, j->p++)
                if (j->p == j->end || !strchr("0123456789abcdefABCDEF", *j->p) || !*j->p)
                    return 0;
        } else if (!strchr("\"\\/bfnrt", e) || !e) {
            return 0;
        }
    }
    return j->p < j->end && j->p++;
}

static int value(struct json *j, int depth);

/* An object ('{') or array ('['): members separated by commas, no trailing comma. */
static int container(struct json *j, int depth)
{
    unsigned char close = *j->p++ == '{' ? '}' : ']';
    if (depth > MAX_DEPTH || !ws(j))
        return 0;
    if (*j->p == close)
        return j->p++, 1;
    for (;;) {
        if (close == '}') {
            if (!ws(j) || *j->p != '"' || !string(j) || !ws(j) || *j->p++ != ':')
                return 0;
        }
        if (!value(j, depth + 1) || !ws(j))
            return 0;
        unsigned char c = *j->p++;
        if (c == close)
            return 1;
        if (c != ',')
            return 0;
    }
}

static int value(struct json *j, int depth)
{
    if (!ws(j))
        return 0;
    switch (*j->p) {
    case '{':
    case '[':
        return container(j, depth);
    case '"':
        return string(j);
    case 't':
        return lit(j, "true");
    case 'f':
        return lit(j, "false");
    case 'n':
        return lit(j, "null");
    default:
        return number(j);
    }
}

static int json_object(const char *s, size_t n)
{
    struct json j = {(const unsigned char *)s, (const unsigned char *)s + n};
    if (!n || *s != '{' || !value(&j, 0))
        return 0;
    ws(&j);
    return j.p == j.end;
}

static int varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    *v = 0;
    for (int shift = 0; shift < 64 && *p < end; shift += 7) {
        uint8_t c = *(*p)++;
        *v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80))
            return 1;
    }
    return 0;
}

/* Whether every packet of the file is a sequence of whole protobuf fields: the converter
 * returned 0, so it must have read them all (written independently of its reader). */
static int packets_well_formed(const uint8_t *p, size_t size)
{
    const uint8_t *end = p + size;
    uint64_t key, len;
    while (p < end) {
        if (!varint(&p, end, &key) || key != (1 << 3 | 2) || !varint(&p, end, &len) ||
            len > (uint64_t)(end - p))
            return 0;
        const uint8_t *q = p, *qend = p + len;
        p = qend;
        while (q < qend) {
            uint64_t v;
            if (!varint(&q, qend, &key))
                return 0;
            switch (key & 7) {
            case 0:
                if (!varint(&q, qend, &v))
                    return 0;
                break;
            case 1:
            case 5:
                if ((size_t)(qend - q) < ((key & 7) == 1 ? 8u : 4u))
                    return 0;
                q += (key & 7) == 1 ? 8 : 4;
                break;
            case 2:
                if (!varint(&q, qend, &v) || v > (uint64_t)(qend - q))
                    return 0;
                q += v;
                break;
            default:
                return 0;
            }
        }
    }
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const uint8_t none[1];
    /* fmemopen refuses a size of 0 in older C libraries: the empty file is a 0-byte
     * window on a 1-byte buffer read to its end at once. */
    FILE *in = fmemopen((void *)(size ? data : none), size ? size : 1, "rb");
    if (!in)
        return 0;
    if (!size)
        (void)getc(in);
    struct fnp_sink s;
    fnp_sink_memory(&s);
    int rc = fnp_pftrace_to_chrome(in, &s);
    fclose(in);
    CHECK(rc == 0 || rc == -EINVAL || rc == -ENOMEM);
    if (rc == 0 && size)
        CHECK(packets_well_formed(data, size));
    if (rc == 0 && !s.err)
        CHECK(json_object(s.buf, s.len));
    fnp_sink_free(&s);
    return 0;
}
/* SPDX-License-Identifier: MIT */
