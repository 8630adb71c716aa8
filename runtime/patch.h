/* SPDX-License-Identifier: MIT */
/*
 * Patchable builds (docs/patchable.md): what patch.c (the writes), patch_sites.c (the
 * sites of an object) and patch_hooks.c (the trampolines) share. runtime.h has what the
 * rest of the runtime calls.
 */
#ifndef FNPROF_PATCH_H
#define FNPROF_PATCH_H

#include "runtime.h"

enum fnp_site_form {
    FNP_SITE_NOP5_ENTRY, /* gcc: a 5-byte nop, a function's first instruction: call */
    FNP_SITE_NOP5_EXIT,  /* gcc: a 5-byte nop before a ret or a tail jmp: call */
    FNP_SITE_SLED_ENTRY, /* XRay: jmp +9 and 9 bytes, a function's first: nop6, call */
    FNP_SITE_SLED_EXIT,  /* XRay: ret and 10 bytes: nop6, jmp (the stub returns) */
    FNP_SITE_SLED_TAIL,  /* XRay: jmp +9 and 9 bytes before a tail jmp: nop6, call */
};

/* Bytes a site of form spans. */
static inline size_t fnp_site_len(uint8_t form)
{
    return form == FNP_SITE_NOP5_ENTRY || form == FNP_SITE_NOP5_EXIT ? 5 : 11;
}

/* fnp_thread.patch_entering of an entry inside another (no code address has it) */
#define FNP_ENTERING_NESTED (UINT64_C(1) << 63)

/* Which trampoline a patched site reaches (patch_hooks.c); entries by the distance from the
 * call's return address back to the function. */
enum fnp_patch_slot {
    FNP_SLOT_ENTER5,  /* gcc */
    FNP_SLOT_ENTER9,  /* gcc after an endbr64 */
    FNP_SLOT_ENTER11, /* XRay */
    FNP_SLOT_ENTER15, /* XRay after an endbr64 */
    FNP_SLOT_EXIT_CALL,
    FNP_SLOT_EXIT_JMP,
    FNP_SLOTS
};

struct fnp_site {
    uintptr_t addr;
    uintptr_t fn;    /* the function's address, its key as the hooks would give it; 0: not
                        known (a gcc exit outside the unwind range of every entry site) */
    uint8_t form;    /* enum fnp_site_form */
    uint8_t slot;    /* enum fnp_patch_slot */
    uint8_t patched; /* patch.c, under its lock */
    uint8_t want;    /* patch.c, under its lock: the state the next batch writes */
    uint8_t head[2]; /* the first two bytes as found */
};

/* What dl_iterate_phdr says of a loaded object. */
struct fnp_object_view {
    const char *path; /* the file to read: /proc/self/exe for the program */
    uintptr_t bias;
    const void *phdr; /* ElfW(Phdr)[phnum] in memory */
    size_t phnum;
};

/* Sites of an object, sorted by address; *sites NULL and *n 0 when it has none (or its file
 * cannot be read). Functions PROF_FILTER leaves out have none. Returns 0, or -1 with why set
 * when the object has sites but cannot be patched (its file is not what is mapped, a site's
 * bytes are not the expected no-op). Caller frees *sites. */
int fnp_sites_read(const struct fnp_object_view *v, struct fnp_site **sites, size_t *n, char *why,
                   size_t whylen);
/* patch_hooks.c: the trampolines' addresses for the run's mode (timed, count-only, trace),
 * by enum fnp_patch_slot. */
const uintptr_t *fnp_patch_targets(uint64_t modes);
/* patch.c: the extended state's save area (xsave) for the trampolines' cold calls
 * (patch_hooks.c: fnp_patch_cold), sized before the first patch; 0 bytes: fxsave. */
extern uint64_t fnp_patch_xsave_size, fnp_patch_xsave_mask;

#endif
