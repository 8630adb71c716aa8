/* SPDX-License-Identifier: MIT */
/*
 * fnprof-as, the assembler filter of the patchable build (docs/patchable.md): patch-as.c
 * runs it (arguments, temporary files, the real assembler), patch-sites.c holds the rewrite
 * of gcc's profiling sites into fnprof_sites entries.
 */
#ifndef FNPROF_PATCH_AS_H
#define FNPROF_PATCH_AS_H

#include <stddef.h>

/* The rewrite's state across the inputs of one assembler run (the assembler reads them as
 * one text: the current section and the label numbers carry over). */
struct fnp_patch_rewrite {
    struct rewrite *r;
};

/* 0, or -1 (out of memory). Freed with fnp_patch_rewrite_free (NULL-safe). */
int fnp_patch_rewrite_new(struct fnp_patch_rewrite *rw);
void fnp_patch_rewrite_free(struct fnp_patch_rewrite *rw);

/* Rewrites in[0..len): *out (borrowed until the next call or the free) holds the text to
 * assemble, *changed is 1 when it differs from in (a site was found). 0, or -1 (out of
 * memory). */
int fnp_patch_rewrite(struct fnp_patch_rewrite *rw, const char *in, size_t len, char **out,
                      size_t *outlen, int *changed);

#endif
