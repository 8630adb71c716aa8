#!/usr/bin/env python3
"""fnprof convert on bad input: a tree cut short or damaged, a missing file, an unwritable
output, a bad format. Each gives one 'fnprof: convert:' line on stderr, the right exit
status (1 failure, 2 usage) and no output file, for every format."""
import os
import subprocess
import sys

import viewlib

FORMATS = ["collapsed", "callgrind", "speedscope", "flamegraph", "dot", "pprof", "html"]


def run(fnprof, *argv):
    r = subprocess.run([fnprof, "convert", *argv], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    return r.returncode, r.stdout, r.stderr.decode(errors="replace")


def main():
    a = viewlib.args()
    v = viewlib.Verdict("errors")
    w = os.path.join(a.workdir, "errors")
    os.makedirs(w, exist_ok=True)
    with open(os.path.join(a.workdir, "paths.prof"), "rb") as f:
        good = f.read()
    cut = os.path.join(w, "cut.prof")
    with open(cut, "wb") as f:
        f.write(good[:-7])
    flipped = os.path.join(w, "flipped.prof")
    with open(flipped, "wb") as f:
        f.write(good[:-3] + bytes([good[-3] ^ 0x10]) + good[-2:])
    for bad, why in ((cut, "cut short"), (flipped, "checksum")):
        for fmt in FORMATS:
            out = os.path.join(w, "out." + fmt)
            rc, _, err = run(a.fnprof, bad, "--to", fmt, "-o", out)
            v.check(rc == 1, "%s --to %s: exit %d" % (bad, fmt, rc))
            v.check(err.count("\n") == 1 and err.startswith("fnprof: convert: " + bad + ": ")
                    and "calling-context tree" in err and why in err,
                    "%s --to %s: stderr %r" % (bad, fmt, err))
            v.check(not os.path.exists(out), "%s --to %s: an output file was left" % (bad, fmt))
            v.check(not [n for n in os.listdir(w) if ".fnprof-" in n], "a temporary file left")
    prof = os.path.join(a.workdir, "paths.prof")
    cases = [
        ((os.path.join(w, "absent.prof"), "--to", "html"), 1, "No such file"),
        ((prof, "--to", "html", "-o", "/nonexistent/dir/r.html"), 1, "/nonexistent/dir/r.html"),
        ((prof, "--to", "jpeg"), 2, "unknown format 'jpeg'"),
        ((prof,), 2, "no format given"),
        (("--to", "html"), 2, "no profile given"),
        ((prof, prof, "--to", "html"), 2, "one profile at a time"),
        ((prof, "--to", "dot", "--node-threshold", "150"), 2, "percentage"),
    ]
    for argv, want_rc, want in cases:
        rc, out, err = run(a.fnprof, *argv)
        v.check(rc == want_rc and err.count("\n") == 1 and err.startswith("fnprof: convert: ")
                and want in err and not out, "%s: exit %d, %r" % (argv, rc, err))
    return v.done()


if __name__ == "__main__":
    sys.exit(main())
# SPDX-License-Identifier: MIT
