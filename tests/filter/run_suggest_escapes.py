#!/usr/bin/env python3
"""fnprof suggest-filter on names and paths that hold what a line or a terminal reserves:
newline, carriage return, escape sequences, tab, DEL, C1 controls, invalid UTF-8, and the
characters fnmatch and the filter syntax give a meaning (docs/filter.md).

The output must be printable ASCII lines (a newline only at a line's end), one EXCLUDE with
one pattern per function, and each pattern, read the way the filter parser reads it
(a backslash keeps the next character, \\xHH is that byte), must give back the name.
"""
import argparse
import marshal
import re
import subprocess
import sys
import tempfile
from pathlib import Path

# Names as bytes: marshal writes str as UTF-8 with surrogatepass, so an undecodable byte
# travels as a lone surrogate (as CPython's cProfile writes such names).
NAMES = [b"a\nb", b"cr\r", b"\x1b]0;title\x07\x1b[2J", b"tab\tx", b"del\x7f", b"c1\xc2\x9b",
         b"bad\xff", b"ns::f(int, char*)", b"op[]#?", b"back\\slash", b"x\\x41",
         "caf\u00e9".encode(), b"INCLUDE"]


def fail(msg):
    sys.exit(f"FAIL: {msg}")


def unescape(pattern):
    """The bytes the filter parser makes of a pattern, wildcards aside."""
    out = bytearray()
    i = 0
    while i < len(pattern):
        if pattern[i:i + 2] == b"\\x" and re.fullmatch(rb"[0-9a-fA-F]{2}", pattern[i + 2:i + 4]):
            out.append(int(pattern[i + 2:i + 4], 16))
            i += 4
        elif pattern[i:i + 1] == b"\\" and i + 1 < len(pattern):
            out.append(pattern[i + 1])
            i += 2
        else:
            out.append(pattern[i])
            i += 1
    return bytes(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fnprof", required=True)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        stats = {}
        main_key = ("/src/main.c", 1, "main")
        stats[main_key] = (1, 1, 1.0, 2.0, {})
        for i, name in enumerate(NAMES):
            key = (f"/src/a\n\x1b[2Jb{i}.c", 10 + i,
                   name.decode("utf-8", errors="surrogateescape"))
            stats[key] = (5, 5, 1e-7, 1e-7, {main_key: (5, 5, 1e-7, 1e-7)})
        prof = Path(tmp) / "names\n\x1b[31m.prof"
        prof.write_bytes(marshal.dumps(stats))
        r = subprocess.run([args.fnprof, "suggest-filter", "--min-calls", "1",
                            "--max-per-call", "1s", str(prof)], capture_output=True)
        if r.returncode != 0:
            fail(f"exit {r.returncode}: {r.stderr!r}")
        out = r.stdout
        if not out.endswith(b"\n"):
            fail(f"no final newline: {out!r}")
        for line in out[:-1].split(b"\n"):
            bad = [c for c in line if c < 0x20 or c >= 0x7f]
            if bad:
                fail(f"bytes {bad} in line {line!r}")
        patterns = [m.group(1) for m in re.finditer(rb"^  EXCLUDE (.+)$", out, re.M)]
        got = sorted(unescape(p) for p in patterns)
        # the name as the reader keeps it: an undecodable byte as its encoded surrogate
        want = sorted(n.decode("utf-8", errors="surrogateescape").encode(
            "utf-8", errors="surrogatepass") for n in NAMES)
        if got != want:
            fail(f"patterns read back as {got}, want {want}:\n{out.decode(errors='replace')}")
        comments = [ln for ln in out.split(b"\n") if ln.lstrip().startswith(b"#")]
        if len(comments) != 3 + len(NAMES):
            fail(f"{len(comments)} comment lines, want {3 + len(NAMES)}:\n{out!r}")
    print(f"ok: {len(NAMES)} names, one printable line each")


if __name__ == "__main__":
    main()
# SPDX-License-Identifier: MIT
