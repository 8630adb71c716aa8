#!/usr/bin/env python3
"""fnprof convert on bad input: a tree cut short or damaged, its tick_seconds damaged (under
version 4's checksum; in an older file, against the dict's times), a missing file, an
unwritable output, a bad format. Each gives one 'fnprof: convert:' line on stderr, the right
exit status (1 failure, 2 usage) and no output file, for every format."""
import os
import struct
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
    # tick_seconds, which multiplies every time a view shows: a bit of its exponent flipped
    # (2^4 = 16 times the tick), and an older version's file (no checksum over the header)
    # written with a tick 1000 times too long, its checksum right.
    at = good.rindex(viewlib.fnptree.MAGIC)
    tick_flip = os.path.join(w, "tick-flipped.prof")
    with open(tick_flip, "wb") as f:
        f.write(good[:at + 42] + bytes([good[at + 42] ^ 0x01]) + good[at + 43:])
    stats, tree, meta = viewlib.fnptree.read_all(os.path.join(a.workdir, "paths.prof"))
    old = os.path.join(w, "v3.prof")
    with open(old, "wb") as f:
        f.write(viewlib.fnptree.encode(stats, tree, meta, version=3))
    rc, _, err = run(a.fnprof, old, "--to", "collapsed", "-o", os.path.join(w, "v3.txt"))
    v.check(rc == 0 and not err, "a version 3 file with its own tick: exit %d, %r" % (rc, err))
    tree.tick_seconds *= 1000
    tick_old = os.path.join(w, "tick-v3.prof")
    data = viewlib.fnptree.encode(stats, tree, meta, version=3)
    with open(tick_old, "wb") as f:
        f.write(data)
    v.check(struct.unpack_from("<I", data, data.rindex(viewlib.fnptree.MAGIC) + 8)[0] == 3,
            "%s is not a version 3 file" % tick_old)
    for bad, why in ((cut, "cut short"), (flipped, "checksum"), (tick_flip, "checksum"),
                     (tick_old, "the tick or the dict was changed")):
        for fmt in FORMATS:
            out = os.path.join(w, "out." + fmt)
            if os.path.exists(out):
                os.unlink(out)  # an earlier run's
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
