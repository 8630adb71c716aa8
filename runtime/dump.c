/*
 * Load, exit and on-demand dumps: the one runtime file that calls the stages below it
 * (snapshot -> symbolizer -> profile model -> pstats writer).
 *
 * The exit dump runs as an ELF destructor of libfnprof. For libfnprof.so (linked or
 * preloaded) that is after the program's atexit handlers and its own destructors, so
 * their calls are in the profile; glibc runs library destructors with the loader lock
 * released, so loading the symbolizer there is safe.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"
#include "runtime.h"
#include "symbolizer.h"

/* Set by fnp_load before main when PROF_OUTPUT is set; cleared by the exit dump so that
 * code running after it (other threads, later destructors) records nothing. */
int fnp_recording;

#define SYNTHETIC_FILE "~"
#define PROCESS_NAME "<process>"

struct resolved {
    uint64_t addr;
    uint32_t func;
};

static int by_addr(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void warn_line(void *ctx, const char *msg)
{
    (void)ctx;
    fnp_log("%s", msg);
}

/* A key for an address nothing could name: the object and the offset in it. */
static int64_t address_func(struct fnp_profile *p, const char *object, uint64_t offset)
{
    char name[32];
    snprintf(name, sizeof(name), "0x%llx", (unsigned long long)offset);
    struct fnp_key key = {.file = object, .line = 0, .name = name};
    return fnp_profile_func(p, &key);
}

/* Names every distinct address of the snapshot: addrs (sorted, unique) -> funcs[i]. */
static int name_functions(struct fnp_profile *p, const uint64_t *addrs, size_t n, uint32_t *funcs)
{
    struct fnp_modmap map;
    int rc = fnp_modmap_load(&map);
    if (rc)
        return rc;
    struct fnp_symbolizer_api api;
    struct fnp_symbolizer *sym = NULL;
    if (fnp_symload_get(&api) == 0)
        sym = api.create(warn_line, NULL);
    uint64_t *elf = malloc((n ? n : 1) * sizeof(*elf));
    struct fnp_symbol *out = malloc((n ? n : 1) * sizeof(*out));
    if (!elf || !out) {
        rc = -ENOMEM;
        goto done;
    }
    for (size_t i = 0; i < n && !rc;) {
        const struct fnp_module *m = fnp_modmap_find(&map, addrs[i]);
        size_t j = i + 1;
        if (!m) {
            int64_t f = address_func(p, "<unknown>", addrs[i]);
            rc = f < 0 ? (int)f : 0;
            funcs[i] = (uint32_t)f;
            i = j;
            continue;
        }
        /* Addresses are sorted and modules disjoint: one module's addresses are a run. */
        while (j < n && addrs[j] >= m->lo && addrs[j] < m->hi)
            j++;
        for (size_t k = i; k < j; k++)
            elf[k - i] = addrs[k] - m->bias;
        if (sym)
            api.resolve(sym, m->path, elf, j - i, out);
        for (size_t k = i; k < j && !rc; k++) {
            int64_t f;
            if (sym) {
                struct fnp_key key = {out[k - i].file, out[k - i].line, out[k - i].name};
                f = fnp_profile_func(p, &key);
            } else {
                f = address_func(p, m->path, elf[k - i]);
            }
            rc = f < 0 ? (int)f : 0;
            funcs[k] = (uint32_t)f;
        }
        i = j;
    }
done:
    if (sym)
        api.destroy(sym);
    free(elf);
    free(out);
    fnp_modmap_free(&map);
    return rc;
}

/*
 * The forest handed to the model. With more than one thread or more than one outermost
 * function, every outermost call hangs from one synthetic function ('~', 0, '<process>'):
 * snakeviz draws only the caller-less function with the largest cumtime, so without it a
 * multi-threaded run would show the main thread alone. pstats prints it as {process}, the
 * way it prints cProfile's own built-ins.
 */
static int build_tree(struct fnp_profile *p, const struct fnp_snapshot *s, const uint64_t *addrs,
                      const uint32_t *funcs, size_t naddrs, struct fnp_tree_node **out,
                      size_t *nout)
{
    uint32_t first_root = UINT32_MAX;
    int several = s->threads > 1;
    struct fnp_tree_node *nodes = malloc((s->n + 1) * sizeof(*nodes));
    if (!nodes)
        return -ENOMEM;
    struct fnp_tree_node *body = nodes + 1;
    for (size_t i = 0; i < s->n; i++) {
        const uint64_t *a = bsearch(&s->nodes[i].fn, addrs, naddrs, sizeof(*addrs), by_addr);
        body[i].func = funcs[a - addrs];
        body[i].parent = s->nodes[i].parent;
        body[i].ncalls = s->nodes[i].ncalls;
        body[i].ticks = s->nodes[i].ticks;
        if (body[i].parent == UINT32_MAX) {
            if (first_root == UINT32_MAX)
                first_root = body[i].func;
            else if (body[i].func != first_root)
                several = 1;
        }
    }
    if (!several) {
        memmove(nodes, body, s->n * sizeof(*nodes));
        *out = nodes;
        *nout = s->n;
        return 0;
    }
    struct fnp_key key = {.file = SYNTHETIC_FILE, .line = 0, .name = PROCESS_NAME};
    int64_t root = fnp_profile_func(p, &key);
    if (root < 0) {
        free(nodes);
        return (int)root;
    }
    nodes[0] = (struct fnp_tree_node){.func = (uint32_t)root, .parent = FNP_NO_PARENT, .ncalls = 1};
    for (size_t i = 0; i < s->n; i++) {
        if (body[i].parent == UINT32_MAX) {
            body[i].parent = 0;
            nodes[0].ticks += body[i].ticks;
        } else {
            body[i].parent++;
        }
    }
    *out = nodes;
    *nout = s->n + 1;
    return 0;
}

/*
 * Count-only mode (PROF_TIMER=none) took no timestamps. Rather than all-zero times, which
 * snakeviz draws as nothing, every call weighs one tick: a node's ticks become the calls
 * in its subtree, itself included. The model then gives tottime = a function's own calls
 * and cumtime = the calls made under it, so the charts show where the calls happen.
 * Snapshot nodes come parent first, so one backward pass sums the subtrees.
 */
static void count_as_ticks(struct fnp_snapshot *s)
{
    for (size_t i = 0; i < s->n; i++)
        s->nodes[i].ticks = s->nodes[i].ncalls;
    for (size_t i = s->n; i-- > 0;)
        if (s->nodes[i].parent != UINT32_MAX)
            s->nodes[s->nodes[i].parent].ticks += s->nodes[i].ticks;
}

static int write_pstats(struct fnp_sink *sink, void *profile)
{
    return fnp_pstats_write(profile, sink);
}

int fnp_dump(const char *path, int quiet)
{
    uint64_t now = fnp_clock_now();
    double tick_seconds = fnp_clock_tick_seconds();
    struct fnp_snapshot snap;
    struct fnp_profile prof;
    fnp_profile_init(&prof);
    uint64_t *addrs = NULL;
    uint32_t *funcs = NULL;
    struct fnp_tree_node *tree = NULL;
    size_t ntree = 0, naddrs = 0;

    int rc = fnp_snapshot_take(&snap, now);
    if (rc)
        goto out;
    if (snap.n == 0) {
        fnp_log("no instrumented call was recorded (is the program built with "
                "-finstrument-functions?); %s not written",
                path);
        rc = -ENODATA;
        goto out;
    }
    if (fnp_clock_kind == FNP_CLOCK_NONE)
        count_as_ticks(&snap);
    rc = -ENOMEM;
    addrs = malloc(snap.n * sizeof(*addrs));
    funcs = malloc(snap.n * sizeof(*funcs));
    if (!addrs || !funcs)
        goto out;
    for (size_t i = 0; i < snap.n; i++)
        addrs[i] = snap.nodes[i].fn;
    qsort(addrs, snap.n, sizeof(*addrs), by_addr);
    for (size_t i = 0; i < snap.n; i++)
        if (naddrs == 0 || addrs[naddrs - 1] != addrs[i])
            addrs[naddrs++] = addrs[i];

    rc = name_functions(&prof, addrs, naddrs, funcs);
    if (!rc)
        rc = build_tree(&prof, &snap, addrs, funcs, naddrs, &tree, &ntree);
    if (!rc)
        rc = fnp_profile_add_tree(&prof, tree, ntree, tick_seconds);
    if (!rc)
        rc = fnp_write_file_atomic(path, write_pstats, &prof);
    if (rc) {
        fnp_log("%s: cannot write the profile: %s", path, strerror(-rc));
        goto out;
    }
    if (snap.dropped)
        fnp_log("%llu calls were not recorded (out of memory, or a signal handler that "
                "interrupted the profiler); their callers' times include them",
                (unsigned long long)snap.dropped);
    if (snap.unmatched)
        fnp_log("%llu function exits had no matching entry and were ignored",
                (unsigned long long)snap.unmatched);
    if (prof.nfuncs == 1)
        fnp_log("only one function was recorded: snakeviz draws nothing without calls "
                "between functions");
    if (!quiet) {
        uint64_t calls = 0;
        for (size_t i = 0; i < snap.n; i++)
            calls += snap.nodes[i].ncalls;
        uint64_t threads = fnp_thread_count();
        fnp_log("wrote %s (%zu functions, %llu calls, %llu thread%s%s)", path, prof.nfuncs,
                (unsigned long long)calls, (unsigned long long)threads, threads == 1 ? "" : "s",
                fnp_clock_kind == FNP_CLOCK_NONE
                    ? "; count-only: no times taken, 1 call counts as 1 second"
                    : "");
    }
out:
    if (rc == -ENOMEM)
        fnp_log("%s: out of memory while writing the profile", path);
    free(tree);
    free(addrs);
    free(funcs);
    fnp_profile_free(&prof);
    fnp_snapshot_free(&snap);
    return rc;
}

/* A forked child writes its own profile, of what it does from now on, to its own file. */
static void fnp_forked_child(void)
{
    if (!__atomic_load_n(&fnp_recording, __ATOMIC_RELAXED))
        return;
    fnp_config.child = 1;
    fnp_thread_after_fork(fnp_clock_now());
}

__attribute__((constructor)) static void fnp_load(void)
{
    /* The wrappers of interpose.c are live whether or not anything is recorded. */
    fnp_interpose_init();
    if (fnp_env_load()) {
        fnp_log("PROF_OUTPUT: cannot resolve the path: %s", strerror(errno));
        return;
    }
    if (!fnp_config.output)
        return;
    fnp_clock_init(fnp_config.timer);
    fnp_symload_init();
    pthread_atfork(NULL, NULL, fnp_forked_child);
    __atomic_store_n(&fnp_recording, 1, __ATOMIC_RELEASE);
}

__attribute__((destructor)) static void fnp_unload(void)
{
    if (!__atomic_exchange_n(&fnp_recording, 0, __ATOMIC_ACQ_REL))
        return;
    char *path = fnp_env_output_path();
    if (!path) {
        fnp_log("out of memory; profile not written");
        return;
    }
    fnp_dump(path, fnp_config.quiet);
    free(path);
}
