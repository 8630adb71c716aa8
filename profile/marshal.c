/* SPDX-License-Identifier: MIT */
/*
 * The subset of Python's marshal format that a pstats dict needs (docs/pstats.md): no
 * references, so every Python 3 reader accepts it. All integers little-endian.
 */
#include <math.h>
#include <string.h>

#include "profile.h"

void fnp_marshal_dict_begin(struct fnp_sink *s)
{
    fnp_sink_write(s, "{", 1);
}

void fnp_marshal_dict_end(struct fnp_sink *s)
{
    fnp_sink_write(s, "0", 1);
}

static void put_u32(struct fnp_sink *s, uint32_t v)
{
    unsigned char b[4] = {v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff, (v >> 24) & 0xff};
    fnp_sink_write(s, b, 4);
}

void fnp_marshal_tuple(struct fnp_sink *s, uint32_t nitems)
{
    if (nitems < 256) {
        unsigned char b[2] = {')', (unsigned char)nitems};
        fnp_sink_write(s, b, 2);
    } else {
        fnp_sink_write(s, "(", 1);
        put_u32(s, nitems);
    }
}

void fnp_marshal_int(struct fnp_sink *s, uint64_t v)
{
    if (v <= INT32_MAX) {
        fnp_sink_write(s, "i", 1);
        put_u32(s, (uint32_t)v);
        return;
    }
    /* TYPE_LONG: a digit count, then 15-bit digits, least significant first. */
    unsigned char digits[2 * 5];
    uint32_t nd = 0;
    for (; v; v >>= 15, nd++) {
        digits[2 * nd] = v & 0xff;
        digits[2 * nd + 1] = (v >> 8) & 0x7f;
    }
    fnp_sink_write(s, "l", 1);
    put_u32(s, nd);
    fnp_sink_write(s, digits, 2 * nd);
}

void fnp_marshal_float(struct fnp_sink *s, double v)
{
    unsigned char b[9] = {'g'};
    memcpy(b + 1, &v, 8); /* x86_64 and arm64 are little-endian, as marshal wants */
    fnp_sink_write(s, b, 9);
}

size_t fnp_utf8_len(const unsigned char *p)
{
    unsigned char c = p[0];
    if (c < 0x80)
        return 1;
    size_t n;
    uint32_t cp;
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2;
        cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (p[i] & 0x3f);
    }
    /* Overlong forms, surrogates and values past U+10FFFF are invalid for Python too. */
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

void fnp_marshal_str(struct fnp_sink *s, const char *str)
{
    const unsigned char *p = (const unsigned char *)str;
    size_t len = strlen(str), out = 0, ascii = 1;
    for (size_t i = 0; i < len;) {
        size_t n = fnp_utf8_len(p + i);
        if (n != 1)
            ascii = 0;
        out += n ? n : 3; /* U+FFFD is 3 bytes */
        i += n ? n : 1;
    }
    if (ascii && len < 256) {
        unsigned char b[2] = {'z', (unsigned char)len};
        fnp_sink_write(s, b, 2);
        fnp_sink_write(s, str, len);
        return;
    }
    fnp_sink_write(s, "u", 1);
    put_u32(s, (uint32_t)out);
    for (size_t i = 0; i < len;) {
        size_t n = fnp_utf8_len(p + i);
        if (n) {
            fnp_sink_write(s, p + i, n);
            i += n;
        } else {
            fnp_sink_write(s, "\xef\xbf\xbd", 3);
            i++;
        }
    }
}
