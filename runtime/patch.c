/* SPDX-License-Identifier: MIT */
/*
 * Patching the sites of patchable builds (docs/patchable.md) while the program runs: which
 * objects have sites (patch_sites.c), a stub page near each, and the writes, made safe for
 * threads that may be executing any byte of a site at that moment.
 *
 * A write switches a site between its no-op and a call (or jmp) to a stub of its object's
 * page, which jumps on to a trampoline of libfnprof (patch_hooks.c). It never leaves a thread
 * an instruction half old, half new:
 *   1. a site that is no jump yet gets a short jmp over the rest as its first two bytes
 *      (gcc's nop5: eb 03; an XRay sled starts with one, or with a ret);
 *   2. the rest of the site is written, which no thread executes now;
 *   3. the first two bytes get their final value, one atomic 2-byte store (sites straddling
 *      a cache line there are never patched: patch_sites.c).
 * A barrier on every thread of the process follows each phase (membarrier's
 * PRIVATE_EXPEDITED_SYNC_CORE, which also serialises their instruction fetch; where the
 * kernel lacks it, a protection change of a page of ours, whose TLB shootdown interrupts
 * every processor running the process). One batch covers every site that changes: one
 * mprotect per segment to make its code writable (RWX: it keeps running) and one to give it
 * back its PT_LOAD protection, never a system call per site. Unpatching an XRay sled
 * rewrites its first two bytes only: a thread may be stopped between its nop6 and its call.
 *
 * Recording, every site is patched. Paused (fnprof_pause, PROF_START=paused, a NONE step),
 * entries are not, and exits are not either, except those of functions with a call open on
 * some thread, which stay patched so that the open call closes when it really returns
 * (docs/controls.md). The pause first unpatches the entries, then reads the open frames and
 * the functions threads are entering meanwhile (fnp_thread.patch_entering: those calls may
 * yet be pushed).
 * Resuming patches exits before entries (their last phases, a barrier apart), so that no call
 * is entered whose exit is not seen.
 *
 * Nothing here runs, and no file is read, unless fnprof records (PROF_OUTPUT or
 * PROF_MEMORY set at load).
 *
 * Locks: the patch lock is taken inside control.c's (fnp_patch_sync), alone by dlopen and
 * dlclose; its holder takes the loader's lock (dl_iterate_phdr) and malloc's, nothing of
 * fnprof's. fork waits for it (fnp_patch_atfork).
 */
#include "patch.h"

#include <cpuid.h>
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__) && defined(__linux__)

#define PAGE 4096u
#define STUB_SIZE 16u
#define MAX_SEGS 8
#define STUB_TRIES 256
#define STUB_STEP (64u * 1024)
#define REACH ((intptr_t)1 << 31)
/* A pause waits this long at most for a signal handler's entry nested in another entry to
 * end (a thread stopped by a debugger there, say): past it, the call of the outer entry may
 * stay open until its caller's exit closes it. */
#define DRAIN_NS 2000000000ull

/* An executable PT_LOAD of an object: where its sites are, and its protection. */
struct segment {
    uintptr_t lo, hi; /* page-aligned */
    int prot;
};

struct object {
    char *name; /* dlpi_name, as given */
    uintptr_t bias;
    const void *phdr; /* with bias and name, tells a loaded object from a new one */
    struct segment seg[MAX_SEGS];
    size_t nseg;
    struct fnp_site *sites; /* sorted by address; NULL: none */
    size_t n;
    unsigned char *stub; /* FNP_SLOTS stubs: jmp *target */
    int closing;         /* dlclose under way: not written */
    int refused;         /* mprotect refused: never written */
    int seen;            /* by the scan under way */
    uint64_t id;         /* never reused: dlclose's token (fnp_patch_close_begin) */
    struct object *next;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* Written under the lock. */
static struct object *objects;
static unsigned long long adds_seen, subs_seen; /* dl_iterate_phdr's counts at the last scan */
static int scanned;
static int sync_core = -1; /* membarrier registered: 1; unavailable: 0; not tried: -1 */
static unsigned char *fence_page;
static int refused;
static uint64_t last_id;
/* Every site of the objects listed is patched, but for those closing or refused (which
 * are not written): a recording sync with no new object has nothing to write. Cleared by
 * a pause, a new object with sites, and the end of a dlclose that left its object. */
static int all_on;

/* Written once by fnp_patch_init, before any site is patched. */
static int armed;
static const uintptr_t *targets;

/* dlopen (the wrapper below): the pad is set once armed; the real dlopen may be looked up by
 * any thread before that (fnp_patch_find_dlopen). */
__attribute__((visibility("hidden"))) void *fnp_patch_dl_pad;
__attribute__((visibility("hidden"))) void *fnp_real_dlopen;
uint64_t fnp_patch_xsave_size, fnp_patch_xsave_mask;

FNP_FORK_SAFE_LOCK(lock_atfork, lock)

/*
 * dlopen and dlclose calls under way through the wrappers. A child forked while one was
 * (in another thread) may find the loader's lock held for ever (glibc takes none across
 * fork), and dl_iterate_phdr would wait for it: such a child keeps the objects its parent
 * had (those our list holds, patched as it says) and does not ask the loader until it loads
 * or unloads something itself (forked). Atomic.
 */
static int loader_calls;
static int forked;

static void after_fork_child(void)
{
    forked = __atomic_load_n(&loader_calls, __ATOMIC_RELAXED) != 0;
    loader_calls = 0;
}

void fnp_patch_atfork(void)
{
    lock_atfork();
    pthread_atfork(NULL, NULL, after_fork_child);
}

int fnp_patch_refused(void)
{
    return __atomic_load_n(&refused, __ATOMIC_RELAXED);
}

/* ---- barriers ----------------------------------------------------------------------------- */

static long membarrier(int cmd)
{
    return syscall(SYS_membarrier, cmd, 0, 0);
}

/*
 * Every thread of the process executes a serialising instruction (and a full memory
 * barrier) before this returns. A forked child keeps the registration (seen with strace:
 * its SYNC_CORE barriers succeed); should a kernel not keep it, the failed barrier
 * registers again.
 * Without membarrier, a page of ours made read-only after a write: the kernel flushes its
 * TLB entry on every processor the process runs on, by an interrupt, which serialises.
 */
static void barrier(void)
{
    if (sync_core != 0) {
        if (sync_core == 1 && membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE) == 0)
            return;
        long have = membarrier(MEMBARRIER_CMD_QUERY);
        sync_core = have > 0 && (have & MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE) &&
                    membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE) == 0 &&
                    membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE) == 0;
        if (sync_core)
            return;
    }
    if (!fence_page) {
        void *p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        fence_page = p == MAP_FAILED ? NULL : p;
    }
    if (fence_page && mprotect(fence_page, PAGE, PROT_READ | PROT_WRITE) == 0) {
        __atomic_store_n(fence_page, 1, __ATOMIC_SEQ_CST);
        mprotect(fence_page, PAGE, PROT_READ);
    }
}

/* ---- the extended state the trampolines' cold calls save --------------------------------- */

/* xsave's area for the components the kernel enabled, AMX's tiles left out (never live at
 * a call's entry or return, and 8 KB); 0 (fxsave) without xsave. */
static void size_xsave(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE) || __get_cpuid_max(0, NULL) < 0xd)
        return;
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    uint64_t mask = ((uint64_t)hi << 32 | lo) & ~((uint64_t)3 << 17);
    uint64_t size = 576;
    for (unsigned i = 2; i < 63; i++) {
        if (!(mask & ((uint64_t)1 << i)))
            continue;
        __cpuid_count(0xd, i, a, b, c, d);
        if ((uint64_t)a + b > size)
            size = (uint64_t)a + b;
    }
    fnp_patch_xsave_mask = mask;
    fnp_patch_xsave_size = size + 64; /* and room to align to 64 */
}

/* ---- objects -------------------------------------------------------------------------------- */

/* A page within reach of a rel32 from every site of o, at a free address near its
 * mappings; NULL if none is found. */
static unsigned char *stub_page(const struct object *o)
{
    uintptr_t smin = o->sites[0].addr, smax = o->sites[o->n - 1].addr + 16;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (size_t i = 0; i < o->nseg; i++) {
        lo = o->seg[i].lo < lo ? o->seg[i].lo : lo;
        hi = o->seg[i].hi > hi ? o->seg[i].hi : hi;
    }
    for (int i = 0; i < 2 * STUB_TRIES; i++) {
        uintptr_t k = (uintptr_t)(i / 2 + 1) * STUB_STEP;
        uintptr_t want = i % 2 ? hi + k - STUB_STEP : lo - k;
        if ((i % 2 == 0 && k > lo) || want < PAGE)
            continue;
        void *p = mmap((void *)want, PAGE, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
        if (p == MAP_FAILED)
            continue;
        uintptr_t at = (uintptr_t)p;
        /* a kernel without MAP_FIXED_NOREPLACE takes the address as a hint */
        if ((intptr_t)(at + PAGE - smin) < REACH && (intptr_t)(smax - at) < REACH)
            return p;
        munmap(p, PAGE);
    }
    return NULL;
}

/* The stubs: jmp *target(%rip) for each slot, then read-only. 0, or -errno. */
static int fill_stubs(unsigned char *page)
{
    for (unsigned s = 0; s < FNP_SLOTS; s++) {
        unsigned char *p = page + s * STUB_SIZE;
        static const unsigned char jmp[6] = {0xff, 0x25, 0, 0, 0, 0};
        memcpy(p, jmp, 6);
        memcpy(p + 6, &targets[s], 8);
        p[14] = p[15] = 0xcc;
    }
    if (fnp_config.patch_refuse)
        return -EACCES;
    return mprotect(page, PAGE, PROT_READ | PROT_EXEC) ? -errno : 0;
}

static void say_refused(const char *path, int err)
{
    if (__atomic_exchange_n(&refused, 1, __ATOMIC_RELAXED))
        return;
    fnp_log("cannot patch the code of %s (mprotect: %s): its functions are not recorded", path,
            strerror(err));
}

static void object_free(struct object *o)
{
    if (o->stub)
        munmap(o->stub, PAGE);
    free(o->sites);
    free(o->name);
    free(o);
}

/* Reads an object's sites and makes its stubs; an object without sites is kept too, so
 * that it is read once. NULL when out of memory. */
static struct object *object_new(const struct dl_phdr_info *info, int is_main)
{
    struct object *o = calloc(1, sizeof(*o));
    if (!o || !(o->name = strdup(info->dlpi_name ? info->dlpi_name : ""))) {
        free(o);
        return NULL;
    }
    o->bias = info->dlpi_addr;
    o->phdr = info->dlpi_phdr;
    o->id = ++last_id;
    const char *path = is_main ? "/proc/self/exe" : o->name;
    /* the vdso has no file; a relative path is the loader's, against the same directory
     * unless the program moved since (then the file found is not the one mapped: refused) */
    if (!is_main && !strchr(path, '/'))
        return o;
    for (size_t i = 0; i < info->dlpi_phnum && o->nseg < MAX_SEGS; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        uintptr_t lo = (o->bias + ph->p_vaddr) & ~(uintptr_t)(PAGE - 1);
        uintptr_t hi = (o->bias + ph->p_vaddr + ph->p_memsz + PAGE - 1) & ~(uintptr_t)(PAGE - 1);
        int prot = (ph->p_flags & PF_R ? PROT_READ : 0) | (ph->p_flags & PF_W ? PROT_WRITE : 0) |
                   PROT_EXEC;
        o->seg[o->nseg++] = (struct segment){lo, hi, prot};
    }
    struct fnp_object_view v = {path, o->bias, info->dlpi_phdr, info->dlpi_phnum};
    char why[256];
    if (fnp_sites_read(&v, &o->sites, &o->n, why, sizeof(why))) {
        fnp_log("%s: not patched: %s", is_main ? "the program" : o->name, why);
        return o;
    }
    if (!o->n)
        return o;
    int rc = (o->stub = stub_page(o)) ? fill_stubs(o->stub) : -ENOMEM;
    if (rc == -EACCES || rc == -EPERM) {
        o->refused = 1;
        say_refused(is_main ? "the program" : o->name, -rc);
    } else if (rc) {
        fnp_log("%s: not patched: no page for its stubs within 2 GB of its code",
                is_main ? "the program" : o->name);
    }
    if (rc) {
        free(o->sites);
        o->sites = NULL;
        o->n = 0;
    }
    return o;
}

struct scan {
    struct dl_phdr_info *v;
    char **names;
    size_t n, cap;
    int nomem;
};

/* Copies the loaded objects out of the loader's lock (their files are read afterwards). */
static int collect(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct scan *s = arg;
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 32;
        struct dl_phdr_info *v = realloc(s->v, cap * sizeof(*v));
        char **names = v ? realloc(s->names, cap * sizeof(*names)) : NULL;
        if (v)
            s->v = v;
        if (!names) {
            s->nomem = 1;
            return 1;
        }
        s->names = names;
        s->cap = cap;
    }
    if (!(s->names[s->n] = strdup(info->dlpi_name ? info->dlpi_name : ""))) {
        s->nomem = 1;
        return 1;
    }
    s->v[s->n] = *info;
    s->v[s->n].dlpi_name = s->names[s->n];
    s->n++;
    return 0;
}

static int counts(struct dl_phdr_info *info, size_t size, void *arg)
{
    unsigned long long *c = arg;
    if (size < offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs))
        return 1;
    c[0] = info->dlpi_adds;
    c[1] = info->dlpi_subs;
    return 1;
}

/* Brings the list of objects up to date with the loader's: new ones read, gone ones
 * forgotten (their memory is not ours to write any more). Under the lock. */
static void scan(void)
{
    if (forked)
        return;
    unsigned long long c[2] = {0, 0};
    dl_iterate_phdr(counts, c);
    if (scanned && c[0] == adds_seen && c[1] == subs_seen)
        return;
    struct scan s = {0};
    dl_iterate_phdr(collect, &s);
    if (s.nomem)
        goto out;
    for (struct object *o = objects; o; o = o->next)
        o->seen = 0;
    const ElfW(Phdr) *main_phdr = (const ElfW(Phdr) *)getauxval(AT_PHDR);
    for (size_t i = 0; i < s.n; i++) {
        struct object *o = objects;
        while (o && !(o->bias == s.v[i].dlpi_addr && o->phdr == s.v[i].dlpi_phdr &&
                      strcmp(o->name, s.v[i].dlpi_name) == 0))
            o = o->next;
        if (!o) {
            if (!(o = object_new(&s.v[i], s.v[i].dlpi_phdr == main_phdr)))
                goto out;
            o->next = objects;
            objects = o;
            all_on &= o->n == 0;
        }
        o->seen = 1;
    }
    for (struct object **p = &objects; *p;) {
        struct object *o = *p;
        if (o->seen) {
            p = &o->next;
            continue;
        }
        *p = o->next;
        object_free(o);
    }
    scanned = 1;
    adds_seen = c[0];
    subs_seen = c[1];
out:
    for (size_t i = 0; i < s.n; i++)
        free(s.names[i]);
    free(s.names);
    free(s.v);
}

/* ---- writing ------------------------------------------------------------------------------ */

/* The bytes of site s in its patched form. */
static void patched_bytes(const struct object *o, const struct fnp_site *s, unsigned char *b)
{
    static const unsigned char nop6[6] = {0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00};
    size_t at = 0;
    if (s->form != FNP_SITE_NOP5_ENTRY && s->form != FNP_SITE_NOP5_EXIT) {
        memcpy(b, nop6, 6);
        at = 6;
    }
    b[at] = s->form == FNP_SITE_SLED_EXIT ? 0xe9 : 0xe8;
    int32_t rel =
        (int32_t)((intptr_t)(o->stub + s->slot * STUB_SIZE) - (intptr_t)(s->addr + at + 5));
    memcpy(b + at + 1, &rel, 4);
}

static void store2(unsigned char *at, const unsigned char *v)
{
    uint16_t x;
    memcpy(&x, v, 2);
    __asm__ volatile("movw %1, %0" : "=m"(*(uint16_t *)at) : "r"(x) : "memory");
}

static int is_entry(const struct fnp_site *s)
{
    return s->form == FNP_SITE_NOP5_ENTRY || s->form == FNP_SITE_SLED_ENTRY;
}

/* Writes phase 1, 2 or 3 of the changes of o's sites (phase 3: of its exits, or of its
 * entries when entries is set); whether it wrote anything. */
static int write_phase(const struct object *o, int phase, int entries)
{
    static const unsigned char jmp3[2] = {0xeb, 0x03};
    int wrote = 0;
    for (size_t i = 0; i < o->n; i++) {
        const struct fnp_site *s = &o->sites[i];
        if (s->want == s->patched || (phase == 3 && is_entry(s) != entries))
            continue;
        unsigned char *at = (unsigned char *)s->addr, b[11];
        int nop5 = s->form == FNP_SITE_NOP5_ENTRY || s->form == FNP_SITE_NOP5_EXIT;
        if (phase == 1 && nop5) {
            store2(at, jmp3);
        } else if (phase == 2 && nop5) {
            static const unsigned char rest[3] = {0x44, 0x00, 0x00};
            patched_bytes(o, s, b);
            memcpy(at + 2, s->want ? b + 2 : rest, 3);
        } else if (phase == 2 && s->want) {
            patched_bytes(o, s, b);
            memcpy(at + 2, b + 2, 9);
        } else if (phase == 3) {
            patched_bytes(o, s, b);
            store2(at, s->want ? b : s->head);
        } else {
            continue;
        }
        wrote = 1;
    }
    return wrote;
}

/* Makes the code of o's changing sites writable (prot: RWX) or gives it back its own
 * protection (prot 0); 0, or -errno. */
static int protect(const struct object *o, int writable)
{
    for (size_t g = 0; g < o->nseg; g++) {
        uintptr_t lo = UINTPTR_MAX, hi = 0;
        for (size_t i = 0; i < o->n; i++) {
            const struct fnp_site *s = &o->sites[i];
            if (s->want == s->patched || s->addr < o->seg[g].lo || s->addr >= o->seg[g].hi)
                continue;
            /* the site's own bytes (patch_sites.c checked they lie in the segment): 11
             * for a nop5 near the segment's end would reach the page after it */
            uintptr_t end = s->addr + fnp_site_len(s->form);
            lo = s->addr < lo ? s->addr : lo;
            hi = end > hi ? end : hi;
        }
        if (lo > hi)
            continue;
        lo &= ~(uintptr_t)(PAGE - 1);
        hi = (hi + PAGE - 1) & ~(uintptr_t)(PAGE - 1);
        int prot = writable ? PROT_READ | PROT_WRITE | PROT_EXEC : o->seg[g].prot;
        if (writable && fnp_config.patch_refuse)
            return -EACCES;
        if (mprotect((void *)lo, hi - lo, prot))
            return -errno;
    }
    return 0;
}

static int changes(const struct object *o)
{
    if (o->closing || o->refused)
        return 0;
    for (size_t i = 0; i < o->n; i++)
        if (o->sites[i].want != o->sites[i].patched)
            return 1;
    return 0;
}

/* Writes every site whose want differs from its state, in the three phases. */
static void batch(void)
{
    int any = 0;
    for (struct object *o = objects; o; o = o->next) {
        if (!changes(o))
            continue;
        int rc = protect(o, 1);
        if (rc) {
            protect(o, 0);
            o->refused = 1;
            say_refused(o->name[0] ? o->name : "the program", -rc);
            continue;
        }
        any = 1;
    }
    if (!any)
        return;
    /* the exits' last step before the entries': no call is entered (and pushed) whose
     * exit may still be a nop */
    for (int step = 0; step < 4; step++) {
        int wrote = 0;
        for (struct object *o = objects; o; o = o->next)
            if (changes(o))
                wrote |= write_phase(o, step < 3 ? step + 1 : 3, step == 3);
        if (wrote)
            barrier();
    }
    for (struct object *o = objects; o; o = o->next) {
        if (!changes(o))
            continue;
        if (protect(o, 0))
            fnp_log("%s: cannot give its code back its protection: %s",
                    o->name[0] ? o->name : "the program", strerror(errno));
        for (size_t i = 0; i < o->n; i++)
            o->sites[i].patched = o->sites[i].want;
    }
}

/* want of every site: entries (entries != 0) or exits set to on, the others left. */
static void want_all(int entries, int on)
{
    for (struct object *o = objects; o; o = o->next)
        for (size_t i = 0; i < o->n; i++)
            if (is_entry(&o->sites[i]) == entries)
                o->sites[i].want = (uint8_t)on;
}

/* ---- pausing ------------------------------------------------------------------------------ */

/*
 * The functions other threads are entering through a patched entry now: such a call may
 * still be pushed once the open frames are read, so its function's exits stay patched as if
 * it were open. Entries are unpatched and the pause published before this (a barrier after
 * both), so a thread seen outside an entry has pushed what it pushes, and one that enters
 * next reads the pause. A signal handler's entry inside another entry hides the outer one's
 * function: that thread is waited for (DRAIN_NS at most). Appends to v (room for one per
 * thread); returns how many.
 */
static size_t entering(uintptr_t *v, size_t room)
{
    size_t k = 0;
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (struct fnp_thread *th = fnp_thread_list(); th && k < room; th = th->next) {
        uintptr_t fn;
        while ((fn = __atomic_load_n(&th->patch_entering, __ATOMIC_ACQUIRE)) &
               FNP_ENTERING_NESTED) {
            if (th == fnp_tls)
                break; /* a signal handler pausing inside its own thread's entries */
            clock_gettime(CLOCK_MONOTONIC, &t);
            if ((uint64_t)(t.tv_sec - t0.tv_sec) * 1000000000u + (uint64_t)t.tv_nsec -
                    (uint64_t)t0.tv_nsec >
                DRAIN_NS)
                break;
            sched_yield();
        }
        if (fn)
            v[k++] = fn & ~FNP_ENTERING_NESTED;
    }
    return k;
}

static int cmp_uintptr(const void *a, const void *b)
{
    uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
    return x < y ? -1 : x > y;
}

/* The functions with a call open on some thread, or being entered, sorted (*n of them);
 * *any: some frame is open at all. NULL when out of memory, which the caller takes as
 * every function. */
static uintptr_t *open_functions(size_t *n, int *any)
{
    size_t cap = 0, threads = 0, k;
    *any = 0;
    for (struct fnp_thread *t = fnp_thread_list(); t; t = t->next) {
        cap += __atomic_load_n(&t->depth, __ATOMIC_ACQUIRE);
        threads++;
    }
    uintptr_t *v = malloc((cap + threads + 1) * sizeof(*v));
    if (!v)
        return NULL;
    k = entering(v, threads);
    *any = k > 0;
    cap += k;
    for (struct fnp_thread *t = fnp_thread_list(); t && k < cap; t = t->next) {
        uint32_t d = __atomic_load_n(&t->depth, __ATOMIC_ACQUIRE);
        const struct fnp_frame *f = __atomic_load_n(&t->frames, __ATOMIC_ACQUIRE);
        for (uint32_t i = 0; i < d && k < cap; i++) {
            const struct fnp_node *node = __atomic_load_n(&f[i].node, __ATOMIC_RELAXED);
            if (!node)
                continue;
            *any = 1;
            uintptr_t fn = __atomic_load_n(&node->fn, __ATOMIC_RELAXED) & FNP_ADDR_MASK;
            if (!(fn & FNP_REGION_TAG))
                v[k++] = fn;
        }
    }
    qsort(v, k, sizeof(*v), cmp_uintptr);
    *n = k;
    return v;
}

static void pause_all(void)
{
    all_on = 0;
    want_all(1, 0);
    batch();
    size_t n = 0;
    int any = 1;
    uintptr_t *open = open_functions(&n, &any);
    for (struct object *o = objects; o; o = o->next)
        for (size_t i = 0; i < o->n; i++) {
            struct fnp_site *s = &o->sites[i];
            if (is_entry(s))
                continue;
            s->want = !open ||
                      (s->fn ? bsearch(&s->fn, open, n, sizeof(*open), cmp_uintptr) != NULL : any);
        }
    free(open);
    batch();
}

static void sync_locked(void)
{
    uint64_t rec = __atomic_load_n(&fnp_recording, __ATOMIC_ACQUIRE);
    if (!rec)
        return; /* after the exit dump: left as it is */
    if (rec & FNP_ON_PAUSED) {
        if (scanned)
            pause_all();
        return;
    }
    scan();
    if (all_on)
        return; /* a step, say, that changed nothing: no walk over every site */
    want_all(0, 1);
    want_all(1, 1);
    batch();
    all_on = 1;
}

/* A pause, resume or dlclose opens and mprotects on the program's thread: a failure there
 * must not leave its errno changed. */
void fnp_patch_sync(void)
{
    if (!armed)
        return;
    int saved = errno;
    fnp_mem_hold();
    pthread_mutex_lock(&lock);
    sync_locked();
    pthread_mutex_unlock(&lock);
    fnp_mem_release();
    errno = saved;
}

/* ---- dlopen, dlclose ---------------------------------------------------------------------- */

/*
 * dlopen is interposed so that an object loaded while recording is patched before the
 * program calls it. glibc's dlopen looks at its return address to find its caller, whose
 * search path (RUNPATH, $ORIGIN) and namespace the new object gets; a call from a wrapper
 * would make that libfnprof. So, off or unsure, the wrapper jumps to the real dlopen with the
 * caller's return address in place; otherwise it calls the real dlopen from a pad, two
 * instructions in an anonymous page, which glibc takes for the program (an address in no
 * object is the program's), when fnp_patch_dlopen_pad says that comes to the same.
 */

__attribute__((visibility("hidden"))) void *fnp_patch_find_dlopen(void)
{
    void *real = __atomic_load_n(&fnp_real_dlopen, __ATOMIC_ACQUIRE);
    if (!real) {
        real = dlsym(RTLD_NEXT, "dlopen");
        __atomic_store_n(&fnp_real_dlopen, real, __ATOMIC_RELEASE);
    }
    return real;
}

/* Whether the object's dynamic section has tag. */
static int has_dynamic(const struct link_map *l, ElfW(Sxword) tag)
{
    for (const ElfW(Dyn) *d = l->l_ld; d && d->d_tag != DT_NULL; d++)
        if (d->d_tag == tag)
            return 1;
    return 0;
}

/*
 * The pad, if the real dlopen called from it finds what it would find called from caller:
 * glibc takes an address in no object for the program. The same when the name says where
 * the file is (a '/', and no $ORIGIN to expand), or when caller is the program; for a
 * library, when neither it nor the program has a search path of its own (DT_RPATH,
 * DT_RUNPATH). Never for a caller in another namespace (dlmopen). NULL otherwise: the
 * wrapper then jumps to the real dlopen, and the object is patched at the next pause,
 * resume, dlopen or dlclose.
 */
__attribute__((visibility("hidden"))) void *fnp_patch_dlopen_pad(const char *file, int mode,
                                                                 void *caller)
{
    (void)mode;
    void *pad = __atomic_load_n(&fnp_patch_dl_pad, __ATOMIC_RELAXED);
    if (!fnp_patch_find_dlopen() || (file && strchr(file, '$')))
        return NULL;
    Dl_info info;
    struct link_map *l = NULL, *main_map = NULL;
    Lmid_t ns = LM_ID_BASE;
    int same = 1; /* in no object: the program's already */
    if (dladdr1(caller, &info, (void **)&l, RTLD_DL_LINKMAP) && l) {
        main_map = l;
        while (main_map->l_prev)
            main_map = main_map->l_prev;
        if (dlinfo(l, RTLD_DI_LMID, &ns) || ns != LM_ID_BASE)
            same = 0;
        else if (file && !strchr(file, '/') && l != main_map)
            same = !has_dynamic(l, DT_RPATH) && !has_dynamic(l, DT_RUNPATH) &&
                   !has_dynamic(main_map, DT_RUNPATH);
    }
    if (!same || !pad)
        return NULL;
    __atomic_add_fetch(&loader_calls, 1, __ATOMIC_RELAXED); /* until fnp_patch_loaded */
    return pad;
}

/* After a dlopen through the pad: the new objects are patched if recording. */
__attribute__((visibility("hidden"))) void fnp_patch_loaded(void)
{
    int saved = errno; /* dlerror's state is glibc's; errno is the program's */
    __atomic_sub_fetch(&loader_calls, 1, __ATOMIC_RELAXED);
    fnp_mem_hold();
    pthread_mutex_lock(&lock);
    forked = 0; /* the loader answered this process: asking it is safe */
    sync_locked();
    pthread_mutex_unlock(&lock);
    fnp_mem_release();
    fnp_libcalls_loaded(); /* PROF_LIBCALLS: the new object's library calls */
    errno = saved;
}

/* The token: the object's id, UINT64_MAX for an object not listed, 0 when not armed. */
uint64_t fnp_patch_close_begin(void *handle)
{
    struct link_map *l = NULL;
    uint64_t id = UINT64_MAX;
    if (!armed)
        return 0;
    __atomic_add_fetch(&loader_calls, 1, __ATOMIC_RELAXED);
    if (dlinfo(handle, RTLD_DI_LINKMAP, &l) || !l)
        return id;
    int saved = errno;
    fnp_mem_hold();
    pthread_mutex_lock(&lock);
    /* listed first if it is not yet (loaded while paused): a pause or resume meanwhile must
     * know to leave it alone, as it may be unmapped any time now */
    forked = 0;
    scan();
    for (struct object *o = objects; o; o = o->next)
        if (o->bias == l->l_addr && strcmp(o->name, l->l_name) == 0) {
            o->closing++;
            id = o->id;
        }
    pthread_mutex_unlock(&lock);
    fnp_mem_release();
    errno = saved;
    return id;
}

/* The object is forgotten if it was unmapped; still there (other references,
 * RTLD_NODELETE), it is written again as the state asks. */
void fnp_patch_close_end(uint64_t id)
{
    if (!id)
        return;
    __atomic_sub_fetch(&loader_calls, 1, __ATOMIC_RELAXED);
    int saved = errno;
    fnp_mem_hold();
    pthread_mutex_lock(&lock);
    scanned = 0; /* a rescan, whatever the counts say */
    forked = 0;
    scan();
    for (struct object *o = objects; o; o = o->next)
        if (o->id == id)
            o->closing--;
    all_on = 0; /* the object, if still there, is written again */
    sync_locked();
    pthread_mutex_unlock(&lock);
    fnp_mem_release();
    errno = saved;
}

/* ---- load ----------------------------------------------------------------------------------- */

/* The wrapper (see the top of this file's dlopen section). */
__asm__(".text\n"
        "    .globl  dlopen\n"
        "    .type   dlopen, @function\n"
        "dlopen:\n"
        "    .cfi_startproc\n"
        "    mov     fnp_patch_dl_pad(%rip), %rax\n"
        "    test    %rax, %rax\n"
        "    jz      3f\n"
        "    /* recording here: may the pad stand for the caller? (file, mode, caller) */\n"
        "    push    %rdi\n"
        "    .cfi_adjust_cfa_offset 8\n"
        "    push    %rsi\n"
        "    .cfi_adjust_cfa_offset 8\n"
        "    sub     $8, %rsp\n"
        "    .cfi_adjust_cfa_offset 8\n"
        "    mov     24(%rsp), %rdx\n"
        "    call    fnp_patch_dlopen_pad\n"
        "    add     $8, %rsp\n"
        "    .cfi_adjust_cfa_offset -8\n"
        "    pop     %rsi\n"
        "    .cfi_adjust_cfa_offset -8\n"
        "    pop     %rdi\n"
        "    .cfi_adjust_cfa_offset -8\n"
        "    test    %rax, %rax\n"
        "    jz      3f\n"
        "    mov     %rax, %r11\n"
        "    mov     fnp_real_dlopen(%rip), %rax\n"
        "    call    *%r11 /* the pad: call *%rax; ret */\n"
        "    push    %rax\n"
        "    .cfi_adjust_cfa_offset 8\n"
        "    call    fnp_patch_loaded\n"
        "    pop     %rax\n"
        "    .cfi_adjust_cfa_offset -8\n"
        "    ret\n"
        "3:  mov     fnp_real_dlopen(%rip), %rax\n"
        "    test    %rax, %rax\n"
        "    jz      4f\n"
        "    jmp     *%rax\n"
        "4:  /* before fnprof's constructor: find the real one first */\n"
        "    push    %rdi\n"
        "    .cfi_adjust_cfa_offset 8\n"
        "    push    %rsi\n"
        "    .cfi_adjust_cfa_offset 8\n"
        "    sub     $8, %rsp\n"
        "    .cfi_adjust_cfa_offset 8\n"
        "    call    fnp_patch_find_dlopen\n"
        "    add     $8, %rsp\n"
        "    .cfi_adjust_cfa_offset -8\n"
        "    pop     %rsi\n"
        "    .cfi_adjust_cfa_offset -8\n"
        "    pop     %rdi\n"
        "    .cfi_adjust_cfa_offset -8\n"
        "    jmp     *%rax\n"
        "    .cfi_endproc\n"
        "    .size   dlopen, .-dlopen\n");

/* An anonymous page holding "call *%rax; ret" (the wrapper's pad), or NULL. */
static void *make_pad(void)
{
    static const unsigned char code[3] = {0xff, 0xd0, 0xc3};
    void *p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    memcpy(p, code, sizeof(code));
    if (mprotect(p, PAGE, PROT_READ | PROT_EXEC)) {
        munmap(p, PAGE);
        return NULL;
    }
    return p;
}

void fnp_patch_init(void)
{
    uint64_t rec = __atomic_load_n(&fnp_recording, __ATOMIC_ACQUIRE);
    if (!rec)
        return;
    size_xsave();
    targets = fnp_patch_targets(fnp_control_running_modes());
    fnp_patch_find_dlopen();
    __atomic_store_n(&fnp_patch_dl_pad, make_pad(), __ATOMIC_RELEASE);
    armed = 1;
    fnp_patch_sync();
}

#else /* patchable builds are x86_64's only: nothing is ever patched */

uint64_t fnp_patch_xsave_size, fnp_patch_xsave_mask;

int fnp_patch_refused(void)
{
    return 0;
}

void fnp_patch_init(void)
{
}

void fnp_patch_sync(void)
{
}

uint64_t fnp_patch_close_begin(void *handle)
{
    (void)handle;
    return 0;
}

void fnp_patch_close_end(uint64_t token)
{
    (void)token;
}

void fnp_patch_atfork(void)
{
}

#endif
