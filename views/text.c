/* SPDX-License-Identifier: MIT */
/*
 * Escaping for the text formats. Names come from DWARF and from files a user hands us, so
 * they may hold any byte: output stays valid JSON or XML whatever they hold.
 */
#include "views.h"

static const char replacement[] = "\xef\xbf\xbd"; /* U+FFFD */

void fnp_xml_text(struct fnp_sink *s, const char *str)
{
    const unsigned char *p = (const unsigned char *)str;
    while (*p) {
        unsigned c = *p;
        const char *esc = c == '&'    ? "&amp;"
                          : c == '<'  ? "&lt;"
                          : c == '>'  ? "&gt;"
                          : c == '"'  ? "&quot;"
                          : c == '\'' ? "&#39;"
                                      : NULL;
        if (esc) {
            fnp_sink_puts(s, esc);
            p++;
        } else if ((c < 0x20 && c != '\t') || c == 0x7f) {
            fnp_sink_write(s, replacement, 3); /* XML 1.0 allows no other control character */
            p++;
        } else if (c == 0xef && p[1] == 0xbf && (p[2] == 0xbe || p[2] == 0xbf)) {
            fnp_sink_write(s, replacement, 3); /* U+FFFE, U+FFFF: not XML characters either */
            p += 3;
        } else {
            p = fnp_utf8_copy(s, p);
        }
    }
}
