/* SPDX-License-Identifier: MIT */
/*
 * JSON strings, for the views and for the runtime's Chrome trace. Names come from DWARF
 * and from files a user hands us, so they may hold any byte: output stays valid JSON
 * whatever they hold.
 */
#include <math.h>

#include "profile.h"

static const char replacement[] = "\xef\xbf\xbd"; /* U+FFFD */

const unsigned char *fnp_utf8_copy(struct fnp_sink *s, const unsigned char *p)
{
    size_t n = fnp_utf8_len(p);
    if (n)
        fnp_sink_write(s, p, n);
    else
        fnp_sink_write(s, replacement, 3);
    return p + (n ? n : 1);
}

void fnp_json_string(struct fnp_sink *s, const char *str)
{
    const unsigned char *p = (const unsigned char *)str;
    fnp_sink_write(s, "\"", 1);
    while (*p) {
        unsigned c = *p;
        if (c == '"' || c == '\\') {
            char esc[2] = {'\\', (char)c};
            fnp_sink_write(s, esc, 2);
            p++;
        } else if (c < 0x20 || c == '<' || c == '>' || c == '&' || c == 0x7f) {
            fnp_sink_printf(s, "\\u%04x", c);
            p++;
        } else {
            p = fnp_utf8_copy(s, p);
        }
    }
    fnp_sink_write(s, "\"", 1);
}

void fnp_json_double(struct fnp_sink *s, double v)
{
    if (isfinite(v))
        fnp_sink_printf(s, "%.17g", v);
    else
        fnp_sink_puts(s, "null");
}

char *fnp_put_u64(char *p, uint64_t v)
{
    char digits[20];
    int n = 0;
    do
        digits[n++] = (char)('0' + v % 10);
    while (v /= 10);
    while (n)
        *p++ = digits[--n];
    return p;
}
