/* SPDX-License-Identifier: MIT */
/*
 * fnprof-cc --patchable: the compile flags of the patchable build (docs/patchable.md), which
 * replace -finstrument-functions. Functions get no-op sites at their entry and before each
 * return, after inlining, which the runtime patches into calls only when it records.
 *
 *   gcc:   -pg -mfentry -mrecord-mcount -minstrument-return=nop5 -mrecord-return
 *          -B<patchdir>/   (fnprof-as and the start files, patchable.cmake)
 *   clang: -fxray-instrument -fxray-instruction-threshold=1, and where the same command links,
 *          -fno-xray-link-deps (clang 16 and older: -fnoxray-link-deps), else the driver
 *          links XRay's runtime, which fnprof never uses.
 *
 * Where a source is compiled; a link-only command gets the runtime alone (no -pg: the start
 * file it picks is gprof's; nothing of XRay), except gcc's LTO link: gcc compiles there, and
 * -pg is not among the options an LTO object carries to it, so the link gets the gcc flags
 * again (-B: the start files there are the plain ones). clang's LTO keeps XRay's attributes
 * in the bitcode.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "cc-wrapper.h"
#include "libdir.h"

#ifndef FNPROF_REL_PATCHDIR
#error "the build passes FNPROF_REL_PATCHDIR, the path from bin/ to the patchable directory"
#endif

/* An argument that makes the compiler target something other than x86_64. */
static const char *other_target(const struct fnp_cc_args *a)
{
    for (size_t i = 0; i < a->argc; i++) {
        const char *s = a->argv[i];
        if (strcmp(s, "-m32") == 0 || strcmp(s, "-mx32") == 0 || strcmp(s, "-m16") == 0)
            return s;
        const char *t = NULL;
        if ((strcmp(s, "-target") == 0 || strcmp(s, "--target") == 0) && i + 1 < a->argc)
            t = a->argv[i + 1];
        else if (strncmp(s, "--target=", 9) == 0)
            t = s + 9;
        if (t && strncmp(t, "x86_64", 6) != 0)
            return s;
    }
    return NULL;
}

int fnp_cc_patchable_lto_link(const struct fnp_cc_args *a)
{
    if (a->mode != FNP_CC_LINK)
        return 0;
    int on = 0;
    for (size_t i = 0; i < a->argc; i++) {
        const char *s = a->argv[i];
        if (strcmp(s, "-flto") == 0 || strncmp(s, "-flto=", 6) == 0)
            on = 1;
        else if (strcmp(s, "-fno-lto") == 0)
            on = 0;
    }
    /* gcc's linker plugin takes LTO objects linked without -flto too. */
    for (size_t i = 0; i < a->nobjects && !on; i++)
        on = fnp_cc_object_lto(a->objects[i]) == 1;
    return on;
}

int fnp_cc_patchable_args(enum fnp_cc_kind kind, const struct fnp_cc_target *t,
                          const struct fnp_cc_args *a, char *out[FNP_CC_PATCHABLE_MAX_ARGS],
                          size_t *n)
{
    *n = 0;
    const char *other = other_target(a);
    if (!t->x86_64 || other) {
        fnp_cc_error("--patchable: x86_64 only (the compiler targets %s)",
                     other ? other : "another architecture");
        return -1;
    }
    if (a->instr == FNP_CC_INSTR_ON) {
        fnp_cc_error("--patchable replaces -finstrument-functions: give one or the other");
        return -1;
    }
    if (kind == FNP_CC_KIND_CLANG) {
        if (!a->nsources)
            return 0; /* an LTO link: the bitcode has XRay's attributes */
        out[(*n)++] = "-fxray-instrument";
        out[(*n)++] = "-fxray-instruction-threshold=1";
        /* The spelling changed in clang 17; a link-only command gets neither (no XRay). */
        if (a->mode == FNP_CC_LINK)
            out[(*n)++] = t->clang_major && t->clang_major <= 16 ? "-fnoxray-link-deps"
                                                                 : "-fno-xray-link-deps";
        return 0;
    }
    if (kind != FNP_CC_KIND_GCC) {
        fnp_cc_error("--patchable: gcc or clang only (FNPROF_CC_KIND=gcc or clang if it is one)");
        return -1;
    }
    /* The directory holds fnprof-as (`as`): the driver runs the first it finds there. */
    static char dir[PATH_MAX], bflag[PATH_MAX + 4];
    char why[PATH_MAX + 128];
    if (fnp_exe_relative_file(FNPROF_REL_PATCHDIR, "as", dir, sizeof(dir), why, sizeof(why))) {
        fnp_cc_error("--patchable: %s", why);
        return -1;
    }
    *strrchr(dir, '/') = '\0';
    snprintf(bflag, sizeof(bflag), "-B%s/", dir);
    static char *const gcc_flags[] = {"-pg", "-mfentry", "-mrecord-mcount",
                                      "-minstrument-return=nop5", "-mrecord-return"};
    for (size_t i = 0; i < sizeof(gcc_flags) / sizeof(gcc_flags[0]); i++)
        out[(*n)++] = gcc_flags[i];
    out[(*n)++] = bflag;
    return 0;
}
