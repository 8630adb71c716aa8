/* SPDX-License-Identifier: MIT */
/*
 * Load, exit and on-demand dumps: the one runtime file that calls the stages below it
 * (snapshot -> symbolizer -> profile model -> pstats writer).
 *
 * The exit dump runs as an ELF destructor of libfnprof. For libfnprof.so (linked or
 * preloaded) that is after the program's atexit handlers and its own destructors, so
 * their calls are in the profile; glibc runs library destructors with the loader lock
 * released, so loading the symbolizer there is safe.
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profile.h"
#include "runtime.h"
#include "symbolizer.h"

/* Set by fnp_load before main when PROF_OUTPUT is set; cleared by the exit dump so that
 * code running after it (other threads, later destructors) records nothing. */
uint64_t fnp_recording;

static void warn_line(void *ctx, const char *msg)
{
    (void)ctx;
    fnp_log("%s", msg);
}

/* The modules to name addresses from: those loaded now and those unloaded before.
 * Borrows the paths of map and of the retired list. */
static struct fnp_raw_module *all_modules(const struct fnp_modmap *map, size_t *n)
{
    size_t count = map->n;
    for (struct fnp_retired *r = fnp_retired_list(); r; r = r->next)
        count++;
    struct fnp_raw_module *mods = malloc((count ? count : 1) * sizeof(*mods));
    if (!mods)
        return NULL;
    for (size_t i = 0; i < map->n; i++)
        mods[i] = (struct fnp_raw_module){map->mods[i].path, map->mods[i].bias, map->mods[i].lo,
                                          map->mods[i].hi, UINT32_MAX};
    size_t i = map->n;
    for (struct fnp_retired *r = fnp_retired_list(); r && i < count; r = r->next)
        mods[i++] = r->mod;
    *n = i;
    return mods;
}

/* One symbolizer session at a time: the streamed trace's writer names functions while a
 * dump (at exit, fnprof_dump, PROF_DUMP_SIGNAL) may be naming its own, and libdwarf's
 * deallocation is not safe from two threads (a double free, 1 run in 30 of
 * trace.regions). Taken under control.c's lock, never the other way round. */
static pthread_mutex_t build_lock = PTHREAD_MUTEX_INITIALIZER;
/* This thread holds build_lock; this thread's fork took it (fork handlers). */
static __thread int build_held __attribute__((tls_model("initial-exec")));
static __thread int build_forking __attribute__((tls_model("initial-exec")));
static int dump_build_locked(struct fnp_profile *prof, struct fnp_raw *raw, struct fnp_modmap *map,
                             const struct fnp_symbolizer_api *loaded);

/* Held across fork like the others, but not when this very thread holds it: a signal
 * handler that forks may interrupt a dump here (e2e.memory.signal_fork), and would wait
 * for itself. The child goes on with it held by its one thread, which will release it. */
static void build_prepare(void)
{
    if ((build_forking = !build_held) != 0)
        pthread_mutex_lock(&build_lock);
}

static void build_after(void)
{
    if (build_forking)
        pthread_mutex_unlock(&build_lock);
    build_forking = 0;
}

static void fnp_dump_build_atfork(void)
{
    pthread_atfork(build_prepare, build_after, build_after);
}

int fnp_dump_build(struct fnp_profile *prof, struct fnp_raw *raw)
{
    return fnp_dump_build_kept(prof, raw, NULL);
}

int fnp_dump_build_kept(struct fnp_profile *prof, struct fnp_raw *raw, struct fnp_symbolizer **kept)
{
    /* What takes the loader's lock (the module list, the symbolizer's dlopen) is done
     * before build_lock: a library's constructor that forks holds the loader's lock inside
     * dlopen and waits for build_lock in the fork handler, while the streamed trace's
     * writer, holding build_lock, would wait for the loader's lock. */
    struct fnp_modmap map = {0};
    struct fnp_symbolizer_api api;
    int rc = fnp_modmap_load(&map);
    int named = !rc && fnp_symload_get(&api) == 0;
    pthread_mutex_lock(&build_lock);
    if (named && kept) {
        if (!*kept && (*kept = api.create(warn_line, NULL)) && api.debug_dirs && api.set_debug_dirs)
            api.set_debug_dirs(*kept, api.debug_dirs);
        api.kept = *kept;
        named = *kept != NULL;
    }
    build_held = 1;
    int out = rc ? rc : dump_build_locked(prof, raw, &map, named ? &api : NULL);
    build_held = 0;
    pthread_mutex_unlock(&build_lock);
    fnp_modmap_free(&map);
    return out;
}

static int dump_build_locked(struct fnp_profile *prof, struct fnp_raw *raw, struct fnp_modmap *map,
                             const struct fnp_symbolizer_api *loaded)
{
    int rc = 0;
    struct fnp_raw_module *mods = all_modules(map, &raw->nmods);
    if (!mods)
        rc = -ENOMEM;
    if (!rc) {
        struct fnp_symbolizer_api api = loaded ? *loaded : (struct fnp_symbolizer_api){0};
        int named = loaded != NULL;
        api.warn = warn_line;
        raw->mods = mods;
        if (!raw->regions) /* the memory dump brings its own list (memory_dump.c) */
            raw->regions = fnp_regions(&raw->nregions);
        rc = fnp_profile_build(prof, raw, named ? &api : NULL);
        raw->mods = NULL;
        /* once per run: a memory profile beside a timing one leaves it to that one */
        if (!rc && named && !(raw->mem && fnp_config.output) && !fnp_frames_keyed())
            fnp_coverage_note(prof, map, &api);
    }
    free(mods);
    return rc;
}

void fnp_dump_build_end(struct fnp_symbolizer *kept)
{
    struct fnp_symbolizer_api api;
    if (kept && fnp_symload_get(&api) == 0) {
        pthread_mutex_lock(&build_lock);
        api.destroy(kept);
        pthread_mutex_unlock(&build_lock);
    }
}

static int dump(const char *path, struct fnp_dump_opts *o);

/* The dump's allocations are fnprof's, not the program's (memory.c). */
int fnp_dump(const char *path, struct fnp_dump_opts *o)
{
    fnp_mem_hold();
    int rc = dump(path, o);
    fnp_mem_release();
    return rc;
}

static int dump(const char *path, struct fnp_dump_opts *o)
{
    int quiet = o->quiet;
    uint64_t now = fnp_clock_now();
    double tick_seconds = fnp_clock_tick_seconds();
    struct fnp_snapshot snap;
    struct fnp_profile prof;
    fnp_profile_init(&prof);
    struct fnp_raw raw = {0};

    int rc = fnp_snapshot_take(&snap, now, o->since, o->next);
    if (rc)
        goto out;
    o->next_taken = o->next != NULL;
    if (snap.n == 0) {
        if (o->since)
            fnp_log("no call was recorded since the last reset; %s not written", path);
        else {
            /* The hooks the program's calls reach may be another library's: libc's empty
             * pair wins the lookup when libfnprof.so came in after libc, as the dependency
             * of libfnprof-mpi.so preloaded alone (docs/mpi.md). Linked into the program
             * (libfnprof.a, the first link map), the program's calls bind to ours. */
            Dl_info hook, self;
            struct link_map *own = NULL;
            void *enter = dlsym(RTLD_DEFAULT, "__cyg_profile_func_enter");
            if (enter && dladdr(enter, &hook) && hook.dli_fname &&
                dladdr1((void *)fnp_dump, &self, (void **)&own, RTLD_DL_LINKMAP) && own &&
                own->l_prev && hook.dli_fbase != self.dli_fbase)
                fnp_log("no instrumented call was recorded: the program's calls reach the "
                        "hooks of %s, not fnprof's; preload libfnprof.so (LD_PRELOAD=%s) or "
                        "link -lfnprof; %s not written",
                        hook.dli_fname, self.dli_fname, path);
            else if (!fnp_patch_refused()) /* which said why already */
                fnp_log("no instrumented call was recorded (is the program built with "
                        "-finstrument-functions?); %s not written",
                        path);
        }
        rc = -ENODATA;
        goto out;
    }
    raw.nodes = snap.nodes;
    raw.n = snap.n;
    raw.threads = snap.threads;
    raw.tick_seconds = tick_seconds;
    raw.count_only = fnp_clock_kind == FNP_CLOCK_NONE;
    raw.merged = snap.merged;
    raw.merge_causes = snap.merge_causes;
    raw.max_nodes = fnp_max_nodes();
    rc = fnp_dump_build(&prof, &raw);
    if (!rc)
        rc = fnp_meta_fill(&prof);
    if (!rc)
        fnp_calibrate_note(&prof);
    if (!rc && o->cycle) {
        char num[24];
        snprintf(num, sizeof(num), "%llu", (unsigned long long)o->cycle);
        rc = fnp_profile_set_meta(&prof, "cycle", num);
    }
    if (!rc)
        rc = fnp_write_file_atomic(path, fnp_profile_write_fn, &prof);
    if (rc) {
        fnp_log("%s: cannot write the profile: %s", path, fnp_write_file_strerror(rc));
        goto out;
    }
    if (snap.dropped)
        fnp_log("%llu calls were not recorded (out of memory, or a signal handler that "
                "interrupted the profiler); their callers' times include them",
                (unsigned long long)snap.dropped);
    char line[512];
    if (fnp_raw_merged_line(line, sizeof(line), &raw))
        fnp_log("%s", line);
    if (snap.unmatched)
        fnp_log("%llu function exits had no matching entry and were ignored",
                (unsigned long long)snap.unmatched);
    if (prof.nfuncs == 1)
        fnp_log("only one function was recorded: snakeviz draws nothing without calls "
                "between functions");
    if (!quiet) {
        fnp_raw_wrote_line(line, sizeof(line), &raw, path, prof.nfuncs, fnp_thread_count());
        fnp_log("%s", line);
    }
out:
    if (rc == -ENOMEM)
        fnp_log("%s: out of memory while writing the profile", path);
    fnp_profile_free(&prof);
    fnp_snapshot_free(&snap);
    return rc;
}

/* A forked child writes its own profile, of what it does from now on, to its own file. */
static void fnp_forked_child(void)
{
    fnp_signals_after_fork();
    if (!__atomic_load_n(&fnp_recording, __ATOMIC_RELAXED))
        return;
    fnp_mem_hold(); /* fnprof's own allocations, not the child's */
    fnp_config.child = 1;
    fnp_config.pid = (int)getpid();
    fnp_config.image = 0;
    fnp_thread_after_fork(fnp_clock_now());
    fnp_config.inherited_calls = fnp_thread_nodes();
    fnp_signals_paths();
    fnp_dumpsig_after_fork();
    fnp_mem_release();
}

/* Set by the exit dump: recording never starts again after it (fnp_start_frames). */
static int exited;
static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;

/* The exit dump: every file of the run. A signal that comes meanwhile waits for its end
 * (signals.c), so that the files are written whole before the process dies by it. */
static void exit_dump(void)
{
    __atomic_store_n(&exited, 1, __ATOMIC_RELEASE);
    fnp_signals_exit_begin();
    if (fnp_config.output)
        fnp_control_exit(); /* stops recording */
    else
        __atomic_store_n(&fnp_recording, 0, __ATOMIC_RELEASE);
    fnp_mem_dump();
    fnp_signals_exit_end();
}

__attribute__((constructor)) static void fnp_load(void)
{
    /*
     * Every lock a forked child may take is held by the forking thread across the fork
     * (pthread_atfork), so that none is held in the child by a thread it does not have.
     * The prepare handlers run in the reverse order of registration, so that the locks
     * are taken outside in: control.c's (a dump under it takes the metadata lock), then
     * memory.c's shards, then the metadata, region and exec.c's (system and popen)
     * locks, which are leaves (their holders allocate only under fnp_mem_hold, which keeps
     * off the shards). These three are registered first, whatever the environment:
     * fnprof_add_metadata takes its lock even when nothing is recorded.
     */
    fnp_meta_atfork();
    fnp_region_atfork();
    fnp_exec_atfork();
    fnp_dump_build_atfork(); /* between control.c's lock and these leaves */
    /* The wrappers of interpose.c are live whether or not anything is recorded. */
    fnp_interpose_init();
    fnp_unload_init();
    fnp_exec_init();
    if (fnp_env_load()) {
        fnp_log("PROF_OUTPUT: cannot resolve the path: %s", strerror(errno));
        return;
    }
    /* PROF_MEMORY alone records the calls too (the memory profile is their tree), counted
     * only: no timing file is written, so no timestamp is taken (peek.c picks the counting
     * hooks for it). */
    int memory = fnp_config.memory && fnp_mem_init() == 0;
    if (!fnp_config.output && !memory)
        return;
    fnp_clock_init(fnp_config.output ? fnp_config.timer : "none", fnp_config.compensate);
    fnp_meta_init();
    fnp_symload_init();
    fnp_signals_init(fnp_symload_tool(), memory);
    if (fnp_config.filter && *fnp_config.filter)
        fnp_exclude_init(fnp_config.filter);
    if (fnp_config.libcalls && *fnp_config.libcalls && strcmp(fnp_config.libcalls, "0") != 0)
        fnp_libcalls_init(fnp_config.libcalls);
    uint64_t modes = FNP_ON | fnp_clock_mode();
    if (fnp_config.output && fnp_config.trace && fnp_trace_init() == 0)
        modes |= FNP_ON_TRACE;
    fnp_control_init(modes);
    fnp_patch_atfork(); /* inside control.c's lock: its prepare handler runs after */
    fnp_control_atfork();
    if (fnp_config.output)
        fnp_calibrate(modes);
    pthread_atfork(NULL, NULL, fnp_forked_child);
    if (fnp_config.output)
        fnp_dumpsig_init(); /* PROF_DUMP_SIGNAL, PROF_TOGGLE_SIGNAL */
    /* quick_exit runs no destructor, only its own handlers: ours, registered first, runs
     * after the program's, as the destructor runs after its atexit handlers. */
    at_quick_exit(exit_dump);
    __atomic_store_n(&fnp_recording, fnp_control_modes(), __ATOMIC_RELEASE);
    fnp_patch_init();
}

/*
 * Recording asked for by an interpreter's profiler (the Python package's Profile.enable)
 * in a process that PROF_OUTPUT did not start it in: frames, regions and the controls
 * work, and fnprof_dump writes them; there is no exit dump, no signal handler, no trace.
 * The hooks picked at load stay what they are (glibc's no-op pair without PROF_OUTPUT).
 */
int fnp_start_frames(void)
{
    static int ready;
    int rc = 0;
    pthread_mutex_lock(&start_lock);
    if (__atomic_load_n(&fnp_recording, __ATOMIC_ACQUIRE))
        goto out;
    if (__atomic_load_n(&exited, __ATOMIC_ACQUIRE)) {
        rc = -ESRCH;
        goto out;
    }
    if (!ready) {
        fnp_clock_init(fnp_config.timer, 0); /* frames are never compensated */
        fnp_meta_init();
        fnp_symload_init();
        fnp_control_init(FNP_ON | fnp_clock_mode());
        fnp_control_atfork();
        ready = 1;
    }
    __atomic_store_n(&fnp_recording, fnp_control_modes(), __ATOMIC_RELEASE);
out:
    pthread_mutex_unlock(&start_lock);
    return rc;
}

__attribute__((destructor)) static void fnp_unload(void)
{
    exit_dump();
}
