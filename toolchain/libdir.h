/* SPDX-License-Identifier: MIT */
/* Where the runtime is, seen from the running command (libdir.c). */
#ifndef FNPROF_LIBDIR_H
#define FNPROF_LIBDIR_H

#include <stddef.h>

/*
 * <directory of this executable>/FNPROF_REL_LIBDIR/<file>, resolved (realpath), into out:
 * the build tree and an install share that layout, so fnprof run, fnprof doctor and the
 * compiler wrappers find libfnprof.so alike. Returns 0, or -1 with "<path>: <why>" in why.
 */
int fnp_runtime_file(const char *file, char *out, size_t n, char *why, size_t whylen);
/* The same from another directory: <directory of this executable>/rel/file. */
int fnp_exe_relative_file(const char *rel, const char *file, char *out, size_t n, char *why,
                          size_t whylen);

#endif
