/* SPDX-License-Identifier: MIT */
/*
 * fnprof: a deterministic function profiler for C and C++ that writes cProfile's pstats.
 *
 * Nothing here is needed to profile a program: build it with -g -finstrument-functions,
 * link -lfnprof (or LD_PRELOAD libfnprof.so) and run it with PROF_OUTPUT=out.prof. These
 * calls serve programs that want more control: named regions, pause and resume, a step
 * schedule, resets, dumps at a moment of their choosing, metadata (docs/controls.md).
 * Every call is thread-safe, costs nothing when PROF_OUTPUT is unset, and none is
 * async-signal-safe but fnprof_version. Define FNPROF_DISABLE to compile every call away.
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

/*
 * Named regions. FNPROF_REGION("load config"); at block scope opens a region that ends with
 * the enclosing block (however it is left: return, break, goto, a C++ exception). The name
 * must be a string literal. A region is an entry of its own in every output, keyed
 * (source file, line, name) like a function, nested among the functions: its caller is the
 * function or region it opened in, its callees what ran inside it.
 *
 * fnprof_region_begin(name) / fnprof_region_end() serve spans that do not fit a block; the
 * name may be any string (copied on first use). A region ends in the function that began
 * it, and at the latest when that function returns; an end with no region open in the
 * calling function is ignored, with one warning.
 */
struct fnprof_site {
    const char *file;
    int line;
    const char *name;
    uintptr_t key; /* fnprof's: 0 until first used */
};

FNPROF_API void fnprof_region_enter(struct fnprof_site *site);
FNPROF_API void fnprof_region_begin_at(const char *file, int line, const char *name);
FNPROF_API void fnprof_region_begin(const char *name); /* file "<unknown>", line 0 */
FNPROF_API void fnprof_region_end(void);

#define fnprof_region_begin(name) fnprof_region_begin_at(__FILE__, __LINE__, (name))

/* Helpers of FNPROF_REGION: never instrumented, always inlined, so that the region is
 * opened and closed from the function that names it. */
#define FNPROF_ATTRS_ __attribute__((always_inline, no_instrument_function))
#define FNPROF_INLINE_ static inline FNPROF_ATTRS_

#ifdef __cplusplus
}
struct fnprof_region_guard_ {
    FNPROF_ATTRS_ explicit fnprof_region_guard_(fnprof_site *site)
    {
        fnprof_region_enter(site);
    }
    FNPROF_ATTRS_ ~fnprof_region_guard_()
    {
        fnprof_region_end();
    }
    fnprof_region_guard_(const fnprof_region_guard_ &) = delete;
    fnprof_region_guard_ &operator=(const fnprof_region_guard_ &) = delete;
};
#define FNPROF_REGION_(name, id)                                                                   \
    static fnprof_site fnprof_site_##id = {__FILE__, __LINE__, "" name "", 0};                     \
    fnprof_region_guard_ fnprof_region_##id(&fnprof_site_##id)
extern "C" {
#else
FNPROF_INLINE_ void fnprof_region_cleanup_(int *unused)
{
    (void)unused;
    fnprof_region_end();
}
FNPROF_INLINE_ int fnprof_region_open_(struct fnprof_site *site)
{
    fnprof_region_enter(site);
    return 0;
}
#define FNPROF_REGION_(name, id)                                                                   \
    static struct fnprof_site fnprof_site_##id = {__FILE__, __LINE__, "" name "", 0};              \
    __attribute__((cleanup(fnprof_region_cleanup_), unused)) int fnprof_region_##id =              \
        fnprof_region_open_(&fnprof_site_##id)
#endif
#define FNPROF_REGION_ID_(name, id) FNPROF_REGION_(name, id)
#define FNPROF_REGION(name) FNPROF_REGION_ID_(name, __COUNTER__)

/*
 * Pause and resume (PROF_START=paused starts paused): calls and regions entered while
 * paused are not recorded, nor anything they call, unless recording resumes before they
 * return: calls made after that are recorded as calls of the nearest recorded caller. A
 * call open when the pause begins stays open; its time runs on through the pause.
 */
FNPROF_API void fnprof_pause(void);
FNPROF_API void fnprof_resume(void);

/*
 * The end of a step of the program's main loop, for PROF_SCHEDULE (docs/schedule.md):
 * steps count from 0; the schedule pauses and resumes recording, discards warmups and
 * writes each active cycle when it ends. Without PROF_SCHEDULE it only counts.
 */
FNPROF_API void fnprof_step(void);

/* Forgets what was recorded so far (every thread): the next dump holds what follows. A
 * call open now counts as one call beginning now. */
FNPROF_API void fnprof_reset(void);

/* A pair shown in the report's header, the HTML view and the trace (copied; a key given
 * twice keeps its last value). Returns 0, -EINVAL (NULL or empty key, a key over 256 bytes,
 * a value over 4096 bytes) or -ENOMEM. */
FNPROF_API int fnprof_add_metadata(const char *key, const char *value);

/*
 * Frames of an interpreted language (the Python package: docs/python.md). A function of
 * the language is keyed (file, line, name) like a region and recorded on the calling
 * thread's tree among the native calls: a native function nests under the interpreted call
 * that reached it, and an interpreted callback under the native function that made it.
 *
 * fnprof_frame_key interns (file, line, name) by value (the strings are copied) and
 * returns its key, the same for the same three for the life of the process, so that the
 * caller caches it; 0 when there is no room (it shares the regions' 65,536) or memory,
 * or when PROF_FILTER leaves (file, name) out (docs/filter.md).
 * fnprof_frame_enter and fnprof_frame_exit push and pop a frame of that key (key 0: no-op);
 * an exit of a frame not open on the thread (entered before recording began) is ignored.
 * fnprof_frame_unwind closes the frames of the language open above the innermost native
 * one (the interpreter's profiler stops: their exits will not come).
 * fnprof_frame_start starts recording in a process whose environment did not (no
 * PROF_OUTPUT): frames and regions are recorded, fnprof_dump writes them, and nothing is
 * written at exit; native calls are recorded only when PROF_OUTPUT was set at load.
 * Returns 0, or -ESRCH once the process is exiting.
 * Thread-safe; the calling thread's frames only; not async-signal-safe.
 */
FNPROF_API uintptr_t fnprof_frame_key(const char *file, int line, const char *name);
FNPROF_API void fnprof_frame_enter(uintptr_t key);
FNPROF_API void fnprof_frame_exit(uintptr_t key);
FNPROF_API void fnprof_frame_unwind(void);
FNPROF_API int fnprof_frame_start(void);

#else

#define fnprof_version() "0.1.0"
#define fnprof_dump(path) ((void)(path), 0)
#define FNPROF_REGION(name) typedef int fnprof_unused_region_
#define fnprof_region_begin(name) ((void)(name))
#define fnprof_region_end() ((void)0)
#define fnprof_pause() ((void)0)
#define fnprof_resume() ((void)0)
#define fnprof_step() ((void)0)
#define fnprof_reset() ((void)0)
#define fnprof_add_metadata(key, value) ((void)(key), (void)(value), 0)
#define fnprof_frame_key(file, line, name) ((void)(file), (void)(line), (void)(name), (uintptr_t)0)
#define fnprof_frame_enter(key) ((void)(key))
#define fnprof_frame_exit(key) ((void)(key))
#define fnprof_frame_unwind() ((void)0)
#define fnprof_frame_start() 0

#endif

#ifdef __cplusplus
}
#endif

#endif
