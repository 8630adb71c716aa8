#!/usr/bin/env python3
"""The hooks picked at relocation (runtime/peek.c, hooks.c): the no-op pair exactly when
the process starts without a non-empty PROF_OUTPUT, judged from the environment block
alone (a name that only starts or ends like it, or the text inside another value, is not
it); the counting pair exactly when PROF_TIMER is "none" as well, the general pair
otherwise. Usage: run_pick_test.py PROG [PROG ...] (linked with libfnprof.so, .a)."""
import os
import subprocess
import sys
import tempfile

CASES = [
    ({}, "none"),
    ({"PROF_OUTPUT": ""}, "none"),
    ({"PROF_OUTPUTX": "a.prof"}, "none"),
    ({"XPROF_OUTPUT": "a.prof"}, "none"),
    ({"OTHER": "PROF_OUTPUT=a.prof"}, "none"),
    ({"PROF_OUTPUT": "OUT"}, "real"),
    # far into a long environment: the reader goes through it in pieces
    ({"PAD": "x" * 5000, "PROF_OUTPUT": "OUT"}, "real"),
    ({"PAD": "x" * 511, "PROF_OUTPUT": "OUT", "ZED": "1"}, "real"),
    # which real pair: "count" where the counting pair must be picked
    ({"PROF_OUTPUT": "OUT", "PROF_TIMER": "none"}, "count"),
    ({"PROF_TIMER": "none", "PAD": "x" * 600, "PROF_OUTPUT": "OUT"}, "count"),
    ({"PROF_OUTPUT": "OUT", "PROF_TIMER": "tsc"}, "real"),
    ({"PROF_OUTPUT": "OUT", "PROF_TIMER": "nonex"}, "real"),
    ({"PROF_OUTPUT": "OUT", "PROF_TIMERS": "none"}, "real"),
    ({"PROF_TIMER": "none"}, "none"),
]


def main():
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "pick.prof")
        for prog in sys.argv[1:]:
            general = None  # the general pair's "real <offset>", from the first such case
            for extra, want in CASES:
                env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
                env.update({k: (out if v == "OUT" else v) for k, v in extra.items()})
                r = subprocess.run([prog], env=env, capture_output=True, text=True, timeout=60)
                got = r.stdout.strip()
                shown = {k: (v if len(v) < 20 else v[:8] + "...") for k, v in extra.items()}
                if want == "real" and got.startswith("real "):
                    general = general or got
                    ok = got == general
                elif want == "count":
                    ok = got.startswith("real ") and general is not None and got != general
                else:
                    ok = got == want
                if r.returncode != 0 or not ok:
                    failures.append(f"{os.path.basename(prog)} {shown}: got {got!r} "
                                    f"(status {r.returncode}), want {want!r} (general pair: {general}); "
                                    f"{r.stderr.strip()}")
                else:
                    print(f"ok {os.path.basename(prog)} {shown}: {got}")
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
# SPDX-License-Identifier: MIT
