"""A script using markupsafe (Debian's sources, built with fnprof-cc): escape through the
C speedups, Markup's methods in Python, a __html__ object the C calls back."""
import markupsafe
from markupsafe import Markup, escape, escape_silent, soft_str


class Link:
    def __init__(self, href):
        self.href = href

    def __html__(self):
        return '<a href="%s">link</a>' % escape(self.href)


def page(n):
    rows = []
    for i in range(n):
        rows.append(escape("<td>%d & 'x'</td>" % i))
        rows.append(escape(Link("/r?a=%d&b=<%d>" % (i, i))))
        rows.append(escape_silent(None if i % 3 else "ok"))
        rows.append(soft_str(i))
        rows.append(escape("plain ascii %d" % i))
        rows.append(escape("日本 <%d>" % i))
        rows.append(escape("😀 <%d>" % i))
    return Markup("").join(rows)


def main():
    assert "&lt;td&gt;" in page(1)
    total = 0
    for _ in range(5):
        total += len(page(40))
    print(total, markupsafe.__name__)


main()
# SPDX-License-Identifier: MIT
