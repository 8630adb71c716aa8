/* SPDX-License-Identifier: MIT */
/*
 * Named regions (include/fnprof.h): a span of code the program names, recorded as a
 * function of its own keyed (source file, line, name) and nested among the functions on
 * the thread's shadow stack, so that every rule and view of functions serves it too.
 *
 * A region's key is FNP_REGION_TAG | its number, interned here once per distinct (file,
 * line, name): FNPROF_REGION keeps the key in its static site, so that after the first
 * time a region costs about what an instrumented call does; fnprof_region_begin looks it
 * up by a hash of its name, as the name may change from call to call.
 *
 * The frames of an interpreted language (fnprof_frame_key and the calls after it: the
 * Python package) are keyed the same way, in the same table, but by the file's contents:
 * an interpreter's strings move and die with the code that named them. Their keys are
 * cached by the caller (the Python package keeps one in each code object), so that a
 * frame costs what a region does.
 */
#include <pthread.h>
#include <string.h>

#include "fnprof.h"
#include "runtime.h"

#define MAX_REGIONS 65536
#define SLOTS (2 * MAX_REGIONS) /* at most half full */

/* The frame measure of the caller of an exported function, as the hooks take it
 * (hooks.c); a region's frame sits one above, so that a catch or a cut in the function
 * that opened it, which closes frames below that function's, leaves it open. */
#define CALLER_SP() ((uintptr_t)__builtin_dwarf_cfa() - 16)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct fnp_raw_region *regions; /* MAX_REGIONS, mapped on first use */
static size_t nregions;                /* published with release after the entry */
/* (file pointer, line, name) -> region number + 1; the file's address stands for it, as
 * one file's __FILE__ is one string of its module. A frame's key (by value) has NULL for
 * its file pointer, which no region has: the two never match each other. */
static uint32_t *slots;
static const char **files_seen; /* the caller's file pointer of each region; NULL: a frame */
static int full_warned, unbalanced_warned;

/* s copied into pages of the region table's own (under lock): never freed, like the table,
 * and out of the program's heap, where a leak checker would count them. NULL when out of
 * memory. */
static char *copy(const char *s)
{
    static char *cur, *end;
    size_t n = strlen(s) + 1;
    if ((size_t)(end - cur) < n) {
        size_t size = n > 65536 ? n : 65536;
        if (!(cur = fnp_pages(size)))
            return end = NULL;
        end = cur + size;
    }
    char *out = memcpy(cur, s, n);
    cur += n;
    return out;
}

/* by_value: the file's bytes are hashed, not its address. */
static uint64_t hash(const char *file, int line, const char *name, int by_value)
{
    uint64_t h = 0xcbf29ce484222325ull;
    if (by_value)
        for (const unsigned char *p = (const unsigned char *)file; *p; p++)
            h = (h ^ *p) * 0x100000001b3ull;
    else
        h = (uint64_t)(uintptr_t)file * 0x9e3779b97f4a7c15ull;
    h ^= (uint64_t)(unsigned)line;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        h = (h ^ *p) * 0x100000001b3ull;
    return h * 0xff51afd7ed558ccdull;
}

/* The slot holding (file, line, name), or the empty one where it would go. */
static size_t find(const uint32_t *s, const char *file, int line, const char *name, uint64_t h,
                   int by_value)
{
    size_t j = (size_t)(h >> 47) % SLOTS;
    for (;;) {
        uint32_t v = __atomic_load_n(&s[j], __ATOMIC_ACQUIRE);
        if (!v)
            return j;
        const struct fnp_raw_region *r = &regions[v - 1];
        if (files_seen[v - 1] == (by_value ? NULL : file) && r->line == (uint32_t)line &&
            strcmp(r->name, name) == 0 && (!by_value || strcmp(r->file, file) == 0))
            return j;
        j = (j + 1) % SLOTS;
    }
}

/* The key of (file, line, name), interned if new; 0 when there is no room or memory. */
static uintptr_t intern_as(const char *file, int line, const char *name, int by_value)
{
    if (!file)
        file = "<unknown>";
    if (!name)
        name = "<unnamed region>";
    uint64_t h = hash(file, line, name, by_value);
    uint32_t *s = __atomic_load_n(&slots, __ATOMIC_ACQUIRE);
    if (s) {
        uint32_t v = __atomic_load_n(&s[find(s, file, line, name, h, by_value)], __ATOMIC_ACQUIRE);
        if (v)
            return FNP_REGION_TAG | v;
    }
    uintptr_t key = 0;
    pthread_mutex_lock(&lock);
    if (!slots) {
        regions = fnp_pages(MAX_REGIONS * sizeof(*regions));
        files_seen = fnp_pages(MAX_REGIONS * sizeof(*files_seen));
        uint32_t *fresh = fnp_pages(SLOTS * sizeof(*slots));
        if (regions && files_seen && fresh)
            __atomic_store_n(&slots, fresh, __ATOMIC_RELEASE);
    }
    if (!slots)
        goto out;
    size_t j = find(slots, file, line, name, h, by_value);
    uint32_t v = slots[j];
    if (!v) {
        size_t n = nregions;
        char *f = n < MAX_REGIONS ? copy(file) : NULL, *nm = f ? copy(name) : NULL;
        if (!nm) {
            if (!full_warned++)
                fnp_log("%s: more than %d distinct regions; the others are not recorded", name,
                        MAX_REGIONS);
            goto out;
        }
        regions[n] = (struct fnp_raw_region){f, line < 0 ? 0 : (uint32_t)line, nm};
        files_seen[n] = by_value ? NULL : file;
        v = (uint32_t)n + 1;
        __atomic_store_n(&nregions, n + 1, __ATOMIC_RELEASE);
        __atomic_store_n(&slots[j], v, __ATOMIC_RELEASE);
    }
    key = FNP_REGION_TAG | v;
out:
    pthread_mutex_unlock(&lock);
    return key;
}

static uintptr_t intern(const char *file, int line, const char *name)
{
    return intern_as(file, line, name, 0);
}

uintptr_t fnp_region_key(const char *file, int line, const char *name)
{
    return intern(file, line, name);
}

/* A child would otherwise wait for ever in its first new region. */
FNP_FORK_SAFE_LOCK(fnp_region_atfork, lock)

const struct fnp_raw_region *fnp_regions(size_t *n)
{
    *n = __atomic_load_n(&nregions, __ATOMIC_ACQUIRE);
    return regions;
}

static FNP_NOINSTR void enter(uint64_t rec, uintptr_t key, uintptr_t sp)
{
    struct fnp_thread *t = fnp_tls;
    if (!t && !(t = fnp_thread_attach()))
        return;
    if (rec & FNP_ON_PAUSED)
        fnp_cct_enter_ghost(t, FNP_GHOST_REGION, sp);
    else if (key)
        fnp_cct_enter(t, key, fnp_clock_now(), sp);
}

FNPROF_API void fnprof_region_enter(struct fnprof_site *site)
{
    uint64_t rec = __atomic_load_n(&fnp_recording, __ATOMIC_RELAXED);
    if (!rec)
        return;
    uintptr_t key = __atomic_load_n(&site->key, __ATOMIC_RELAXED);
    if (FNP_UNLIKELY(!key)) {
        key = intern(site->file, site->line, site->name);
        __atomic_store_n(&site->key, key, __ATOMIC_RELAXED);
    }
    enter(rec, key, CALLER_SP() + 1);
}

FNPROF_API void fnprof_region_begin_at(const char *file, int line, const char *name)
{
    uint64_t rec = __atomic_load_n(&fnp_recording, __ATOMIC_RELAXED);
    if (rec)
        enter(rec, intern(file, line, name), CALLER_SP() + 1);
}

/* For callers that cannot use the macro (a pointer to it, another language). */
FNPROF_API void(fnprof_region_begin)(const char *name)
{
    uint64_t rec = __atomic_load_n(&fnp_recording, __ATOMIC_RELAXED);
    if (rec)
        enter(rec, intern("<unknown>", 0, name), CALLER_SP() + 1);
}

FNPROF_API void fnprof_region_end(void)
{
    uint64_t rec = __atomic_load_n(&fnp_recording, __ATOMIC_RELAXED);
    if (!rec)
        return;
    struct fnp_thread *t = fnp_tls;
    uint64_t now = fnp_clock_now();
    /* Callees the stack has left without their exits (an exception with clang's exit-less
     * unwinding) close first; a region open in the caller is then on top. */
    if (t)
        fnp_cct_unwind(t, CALLER_SP(), now);
    uint32_t d = t ? t->depth : 0;
    uintptr_t top = d ? t->frames[d - 1].node->fn & FNP_ADDR_MASK : 0;
    if (d && (fnp_key_is_region(top) || top == FNP_GHOST_REGION)) {
        fnp_cct_exit_cold(t, top, now);
        return;
    }
    /* Ended by another function than the one that began it, or never begun (a region a
     * function left open closed when that function returned). */
    if (!__atomic_exchange_n(&unbalanced_warned, 1, __ATOMIC_RELAXED))
        fnp_log("fnprof_region_end: no region is open in the calling function; ignored (a "
                "region ends in the function that began it, and at the latest when that "
                "function returns)");
}

/* ---- frames of an interpreted language (include/fnprof.h: fnprof_frame_key) ---------- */

/* Set once a frame key is made: the process runs an interpreter (fnp_frames_keyed). */
static int frames_keyed;

int fnp_frames_keyed(void)
{
    return __atomic_load_n(&frames_keyed, __ATOMIC_RELAXED);
}

FNPROF_API uintptr_t fnprof_frame_key(const char *file, int line, const char *name)
{
    __atomic_store_n(&frames_keyed, 1, __ATOMIC_RELAXED);
    if (fnp_exclude_frame(file, name))
        return 0; /* PROF_FILTER: entered and exited as a call not instrumented */
    return intern_as(file, line, name, 1);
}

/* key is a frame's (interned by value), not a region's. */
static int is_frame(uintptr_t key)
{
    size_t v = (size_t)(key & FNP_ADDR_MASK & ~FNP_REGION_TAG);
    if (!fnp_key_is_region(key) || v == 0 || v > __atomic_load_n(&nregions, __ATOMIC_ACQUIRE))
        return 0;
    return files_seen[v - 1] == NULL;
}

int fnp_region_is_frame(uintptr_t key)
{
    return is_frame(key);
}

FNPROF_API void fnprof_frame_enter(uintptr_t key)
{
    uint64_t rec = __atomic_load_n(&fnp_recording, __ATOMIC_RELAXED);
    if (!rec || !key)
        return;
    struct fnp_thread *t = fnp_tls;
    if (FNP_UNLIKELY(!t) && !(t = fnp_thread_attach()))
        return;
    /* A frame entered while paused is a call's ghost, not a region's: its exit, which is
     * no region's end, pops it (fnp_cct_exit_mismatch). */
    if (FNP_UNLIKELY(rec & FNP_ON_PAUSED))
        fnp_cct_enter_ghost(t, FNP_GHOST_CALL, CALLER_SP() + 1);
    else
        fnp_cct_enter(t, key, fnp_clock_now(), CALLER_SP() + 1);
}

/* The exit of fn, not the innermost frame's: something to repair (frames above it that
 * lost their exits, a ghost, an enter that was dropped), or a frame entered before
 * recording began, whose exit is no fault and is not counted as unmatched. */
static int exit_expected(const struct fnp_thread *t, uintptr_t fn)
{
    if (t->skipped)
        return 1;
    uint32_t k = t->depth;
    while (k > 0 && (t->frames[k - 1].node->fn & FNP_ADDR_MASK) != fn) {
        if ((t->frames[k - 1].node->fn & FNP_ADDR_MASK) == FNP_GHOST_CALL)
            return 1;
        k--;
    }
    return k > 0;
}

FNPROF_API void fnprof_frame_exit(uintptr_t key)
{
    uint64_t rec = __atomic_load_n(&fnp_recording, __ATOMIC_RELAXED);
    struct fnp_thread *t = fnp_tls;
    if (!rec || !key || !t)
        return;
    uintptr_t fn = key & FNP_ADDR_MASK;
    uint32_t d = t->depth;
    uint64_t now = fnp_clock_now();
    if (FNP_LIKELY(d && (t->frames[d - 1].node->fn & FNP_ADDR_MASK) == fn))
        fnp_cct_exit_cold(t, fn, now);
    else if (exit_expected(t, fn))
        fnp_cct_exit_mismatch(t, fn, now);
}

FNPROF_API void fnprof_frame_unwind(void)
{
    uint64_t rec = __atomic_load_n(&fnp_recording, __ATOMIC_RELAXED);
    struct fnp_thread *t = fnp_tls;
    if (!rec || !t)
        return;
    uint32_t d = t->depth;
    while (d > 0 && (is_frame(t->frames[d - 1].node->fn) ||
                     (t->frames[d - 1].node->fn & FNP_ADDR_MASK) == FNP_GHOST_CALL))
        d--;
    fnp_cct_cut(t, d, fnp_clock_now());
}
