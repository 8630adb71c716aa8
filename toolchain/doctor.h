/* SPDX-License-Identifier: MIT */
/*
 * fnprof doctor's parts (cmd-doctor.c drives them): doctor-elf.c reads what one ELF file says
 * about the hooks, doctor-load.c asks the dynamic loader which files a program loads.
 */
#ifndef FNPROF_DOCTOR_H
#define FNPROF_DOCTOR_H

#include <stddef.h>
#include <stdint.h>

/* ---- doctor-elf.c ------------------------------------------------------------------ */

/* What one ELF file says about -finstrument-functions' hooks. */
struct fnp_doctor_elf {
    int dynamic;        /* has a PT_DYNAMIC segment */
    int interp;         /* has a PT_INTERP: started through a dynamic loader */
    int executable;     /* ET_EXEC, or ET_DYN with PT_INTERP or DF_1_PIE */
    int pie;            /* an ET_DYN executable */
    int has_symtab;     /* a .symtab (not stripped) */
    int hook_undefined; /* .dynsym or .symtab names __cyg_profile_func_enter undefined */
    int hook_exported;  /* .dynsym defines it: the loader may bind other modules' calls here */
    int hook_defined;   /* .symtab or .dynsym defines it: this file's own calls stay here */
    int fnprof;         /* defines fnprof's runtime (fnp_/fnprof_ symbols beside the hooks) */
    int glibc;          /* is glibc's libc (defines gnu_get_libc_version) */
    long enter_calls;   /* call sites of the enter hook found (x86-64), -1 when not counted */
    long functions;     /* functions (.symtab) holding those call sites; -1: not counted */
    char interp_path[256];
};

/* Reads path. Returns 0, -ENOEXEC (not an ELF file libelf can read) or -errno of open(2). */
int fnp_doctor_elf_read(const char *path, struct fnp_doctor_elf *out);

/* ---- doctor-load.c ----------------------------------------------------------------- */

/* One object the loader maps, in its load order (the executable's symbol search order). */
struct fnp_doctor_lib {
    char *name; /* as listed: "libc.so.6", or a path */
    char *path; /* where the loader found it; NULL: "not found" */
};

struct fnp_doctor_libs {
    struct fnp_doctor_lib *v;
    size_t n;
    char *error; /* the loader's own complaint (stderr, first line), NULL when none */
};

/* Runs interp (the program's PT_INTERP) in trace mode on program, as ldd does: the loader
 * maps and lists the libraries and exits before any code of the program runs. preload,
 * when not NULL, is the LD_PRELOAD to trace with; else the current one applies. Returns 0
 * or -errno (the loader could not be started, or listed nothing: out->error says why).
 * Caller frees with fnp_doctor_libs_free, also after an error. */
int fnp_doctor_libs_load(const char *interp, const char *program, const char *preload,
                         struct fnp_doctor_libs *out);
void fnp_doctor_libs_free(struct fnp_doctor_libs *libs);

/* ---- cmd-run.c --------------------------------------------------------------------- */

/* The libfnprof.so that fnprof run preloads (<bin>/FNPROF_REL_LIBDIR/libfnprof.so, resolved)
 * into out. Returns 0, or -1 after "fnprof: <cmd>: <path>: <why>" on stderr (nothing said
 * when cmd is NULL). */
int fnp_run_library(const char *cmd, char *out, size_t n);

#endif
