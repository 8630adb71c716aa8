/*
 * Escaping for the text formats. Names come from DWARF and from files a user hands us, so
 * they may hold any byte: output stays valid JSON or XML whatever they hold.
 */
#include "views.h"

int fnp_utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    if (c < 0x80)
        return 1;
    int n = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
    if (!n)
        return 0;
    for (int i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    if (n == 3 && ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] >= 0xa0)))
        return 0;
    if (n == 4 && ((c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] >= 0x90)))
        return 0;
    return n;
}

static const char replacement[] = "\xef\xbf\xbd"; /* U+FFFD */

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
            int n = fnp_utf8_len(p);
            if (n)
                fnp_sink_write(s, p, (size_t)n);
            else
                fnp_sink_write(s, replacement, 3);
            p += n ? n : 1;
        }
    }
    fnp_sink_write(s, "\"", 1);
}

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
            int n = fnp_utf8_len(p);
            if (n)
                fnp_sink_write(s, p, (size_t)n);
            else
                fnp_sink_write(s, replacement, 3);
            p += n ? n : 1;
        }
    }
}
