#!/usr/bin/env python3
"""PROF_OWNER and PROF_EXEC are fnprof's own marks: a program that prints its environment
(progs/env_print.c), and the programs it starts (exec, fork + exec, posix_spawn, system,
popen),
must print the environment they were given and nothing of fnprof's. The marks must still
reach the images started below, so that no file is overwritten: the parent writes
out.prof, a child out.prof.<pid>, the image after an exec out.prof.exec1."""

import os
import re

from hostile import clean_env, expect, main


def case(ctx):
    prog = ctx.build("env_print.c")
    for how in ("exec", "fork-exec", "spawn", "system", "popen"):
        folder = ctx.path(how)
        os.makedirs(folder)
        extra = {"PROF_OUTPUT": os.path.join(folder, "out.prof"), "PROF_QUIET": "1"}
        given = clean_env()
        given.update(extra)
        p = ctx.run([prog, how, prog], extra)
        expect(p.returncode == 0, "%s: exit status %d: %r" % (how, p.returncode, p.stderr))
        seen = {"parent": set(), "child": set()}
        for line in p.stdout.decode(errors="replace").splitlines():
            who, var = line.split(" ", 1)
            seen[who].add(var)
        want = {"%s=%s" % kv for kv in given.items()}
        for who, got in seen.items():
            if who == "child" and how in ("system", "popen"):
                # sh may add PWD, SHLVL, _: only fnprof's marks matter here
                got = {v for v in got if v.startswith("PROF_")}
                want_here = {v for v in want if v.startswith("PROF_")}
            else:
                want_here = want
            expect(got == want_here, "%s: the %s printed %s more and %s less than it was given"
                   % (how, who, sorted(got - want_here), sorted(want_here - got)))
        files = sorted(os.listdir(folder))
        wanted = (r"out\.prof\.exec1" if how == "exec" else r"out\.prof\.\d+")
        expect(len(files) == 2 and "out.prof" in files and
               any(re.fullmatch(wanted, f) for f in files),
               "%s: files %s: the child's must not overwrite the parent's" % (how, files))


if __name__ == "__main__":
    main(case)
# SPDX-License-Identifier: MIT
