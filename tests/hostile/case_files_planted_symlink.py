#!/usr/bin/env python3
"""A symlink planted at a name fnprof writes never gets its target written: the raw
snapshot a signal's death leaves (its temporary was <out>.raw.tmp-<pid>, opened
O_CREAT|O_TRUNC), fnprof-cc's cache (<file>.<pid>.tmp, fopen "w"), <out>.raw itself, and
PROF_OUTPUT when it is a symlink another user owns in a sticky folder anyone may write to
(/tmp; the kernel's protected_symlinks rule, kept where the sysctl is off). Each target
keeps its bytes; the program its output and its death by the signal."""

import os
import signal
import stat

import files_common as fc
from hostile import expect, main, need_root

VICTIM = b"not fnprof's file\n"


def case(ctx):
    need_root("a symlink owned by another user")
    prog = ctx.build("files_work.c")
    checks = fc.Checks()

    def victim(name):
        path = ctx.path(name)
        with open(path, "wb") as f:
            f.write(VICTIM)
        return path

    def expect_untouched(path):
        with open(path, "rb") as f:
            data = f.read()
        expect(data == VICTIM, "the symlink's target %s was written: %r" % (path, data[:40]))

    def raw_temporary():
        out = ctx.path("killed.prof")
        target = victim("victim-raw-tmp")
        other = victim("victim-raw")
        os.symlink(other, out + ".raw")

        def plant():  # in the child, before exec: the pid the runtime will use
            os.symlink(target, "%s.raw.tmp-%d" % (out, os.getpid()))

        p = ctx.run([prog, "0", "kill"], {"PROF_OUTPUT": out}, preexec_fn=plant)
        expect_untouched(target)
        expect_untouched(other)
        expect(p.returncode == -signal.SIGTERM, "status %d, not death by SIGTERM" % p.returncode)
        expect(p.stdout == fc.OUTPUT, "the program's output changed: %r" % p.stdout)
        expect(os.path.isfile(out), "no profile from the killed program: %s" % p.stderr)

    def sticky_folder():
        shared = ctx.path("shared")
        os.mkdir(shared)
        os.chmod(shared, 0o1777)
        target = victim("victim-sticky")
        out = os.path.join(shared, "o.prof")
        os.symlink(target, out)
        os.lchown(out, 65534, 65534)  # planted by nobody
        p = ctx.run([prog], {"PROF_OUTPUT": out})
        expect_untouched(target)
        fc.expect_unharmed(p)
        fc.expect_one_line(p.stderr, out)
        fc.expect_link(out, target)

    def cc_cache():
        home = ctx.path("home")
        os.mkdir(home)
        src = ctx.path("unit.c")
        with open(src, "w") as f:
            f.write("int unit(void) { return 1; }\n")
        cc = [os.path.join(ctx.bin_dir, "fnprof-cc"), "-c", src, "-o", ctx.path("unit.o")]
        env = {"HOME": home, "FNPROF_CC": "gcc"}
        # A first compile shows the cache's name; then it is removed and trapped.
        expect(ctx.run(cc, env).returncode == 0, "fnprof-cc failed")
        folder = os.path.join(home, ".cache", "fnprof", "cc-kind")
        names = os.listdir(folder)
        expect(len(names) == 1, "fnprof-cc's cache holds %s" % names)
        cache = os.path.join(folder, names[0])
        os.unlink(cache)
        target = victim("victim-cc")

        def plant():
            os.symlink(target, "%s.%d.tmp" % (cache, os.getpid()))

        p = ctx.run(cc, env, preexec_fn=plant)
        expect_untouched(target)
        expect(p.returncode == 0, "fnprof-cc failed: %s" % p.stderr)
        expect(os.path.isfile(cache) and not os.path.islink(cache), "no cache written")

    checks.part("raw snapshot's temporary and <out>.raw", raw_temporary)
    checks.part("PROF_OUTPUT, another user's symlink in a sticky folder", sticky_folder)
    checks.part("fnprof-cc's cache temporary", cc_cache)
    checks.done()


if __name__ == "__main__":
    main(case)
# SPDX-License-Identifier: MIT
