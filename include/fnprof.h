/*
 * fnprof: a deterministic function profiler for C and C++ that writes cProfile's pstats.
 *
 * Nothing here is needed to profile a program: build it with -g -finstrument-functions,
 * link -lfnprof (or LD_PRELOAD libfnprof.so) and run it with PROF_OUTPUT=out.prof. These
 * calls serve programs that want to write a profile at a moment of their choosing.
 * Define FNPROF_DISABLE to compile every call away.
 */
#ifndef FNPROF_H
#define FNPROF_H

#include <stddef.h>
#include <stdint.h>

#define FNPROF_VERSION_MAJOR 0
#define FNPROF_VERSION_MINOR 1
#define FNPROF_VERSION_PATCH 0

#ifndef FNPROF_API
#define FNPROF_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

#ifndef FNPROF_DISABLE

/* The library's version, "MAJOR.MINOR.PATCH". Static storage; thread- and
 * async-signal-safe. */
FNPROF_API const char *fnprof_version(void);

/*
 * Writes the profile recorded so far to path (NULL: PROF_OUTPUT's path), every thread
 * included, calls still open counted up to now; recording goes on. The file is written
 * whole or not at all. Returns 0, -EINVAL when path is NULL and PROF_OUTPUT is unset,
 * -ENODATA when no call has been recorded, or another negative errno when the file cannot
 * be written (also reported on stderr). Thread-safe; not async-signal-safe (it allocates
 * and loads the symbolizer).
 */
FNPROF_API int fnprof_dump(const char *path);

#else

#define fnprof_version() "0.1.0"
#define fnprof_dump(path) ((void)(path), 0)

#endif

#ifdef __cplusplus
}
#endif

#endif
