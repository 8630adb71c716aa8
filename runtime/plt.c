/* SPDX-License-Identifier: MIT */
/*
 * PROF_LIBCALLS (docs/libcalls.md): the calls instrumented code makes into other shared
 * objects, recorded as functions of the tree keyed (library, 0, function), e.g.
 * ('libc.so.6', 0, 'memmove'), interned like a region (region.c).
 *
 * At load, and again when a new object shows up, every loaded object is looked at:
 * - an object is instrumented when its relocations name __cyg_profile_func_enter (or it is
 *   the program with libfnprof.a linked in), or when it has fnprof_sites or xray_instr_map
 *   sections (patchable builds). Only those objects' slots are touched: code that is not
 *   instrumented (libc calling itself, a library calling another) is never recorded;
 * - its JUMP_SLOT relocations, and the GLOB_DAT ones of functions it calls without the PLT
 *   (-fno-plt) and has no JUMP_SLOT for, give the slots; a slot whose function lies in
 *   another object, not instrumented and not fnprof's own, gets a stub (plt.h). A slot
 *   still lazy (pointing into the object's own PLT) is resolved here as the loader would
 *   (dlvsym with the version the object asks for, in the global scope, then its own);
 * - a slot in the read-only part of the object (RELRO: -z relro -z now) is made writable
 *   for the write and read-only again; when that is refused, one line, and that object's
 *   library calls are not recorded.
 * Never hooked: functions that look at their caller or return twice (plt.c: never[]),
 * what fnprof interposes itself (longjmp, malloc, exec, dlclose, signal: their slots lead
 * into libfnprof), and, unless a pattern names them exactly, the runtime's plumbing.
 *
 * New objects: the tree's cold path reports a function whose address no scanned object
 * holds (fnp_libcalls_seen): a library dlopen'd since (or one dlclose'd and another mapped
 * there: the module generation moved). That is before its first call into anything, since
 * instrumented code enters itself first. A dlopen wrapper of fnprof's own would have to
 * call the real dlopen from libfnprof, which makes glibc search libfnprof's RUNPATH, not
 * the caller's: a plugin found through the program's RUNPATH would no longer load.
 * fnp_libcalls_loaded serves a wrapper that has other reasons to exist.
 */
#include "plt.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fnprof.h"

int fnp_libcalls_watch;

#if defined(FNP_HAVE_LIBCALLS) && defined(__GLIBC__)

/* Never hooked, whatever the patterns say: they return twice, switch stacks, look at
 * their caller's address or belong to the loader; the hooks; and _exit, which ends the
 * process without a profile, and in the child of vfork would leave its frame and record
 * in the parent's state (the child shares its memory). Sorted at init. */
static const char *never[] = {
    "___tls_get_addr",
    "__cyg_profile_func_enter",
    "__cyg_profile_func_exit",
    "__libc_start_main",
    "__longjmp_chk",
    "__sigsetjmp",
    "__tls_get_addr",
    "__vfork",
    "_Exit",
    "_exit",
    "_dl_find_object",
    "_longjmp",
    "_setjmp",
    "dladdr",
    "dladdr1",
    "dlclose",
    "dlerror",
    "dlinfo",
    "dlmopen",
    "dlopen",
    "dlsym",
    "dlvsym",
    "getcontext",
    "longjmp",
    "makecontext",
    "savectx",
    "setcontext",
    "setjmp",
    "siglongjmp",
    "sigsetjmp",
    "swapcontext",
    "vfork",
};

/* Called by code the compiler writes, not the programmer: left out unless named exactly. */
static const char *plumbing_names[] = {
    "__ctype_b_loc",    "__ctype_tolower_loc", "__ctype_toupper_loc", "__cxa_atexit",
    "__cxa_finalize",   "__cxa_guard_abort",   "__cxa_guard_acquire", "__cxa_guard_release",
    "__errno_location", "__h_errno_location",  "__stack_chk_fail",    "_Unwind_Resume",
};

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int listed(const char *const *list, size_t n, const char *name)
{
    return bsearch(&name, list, n, sizeof(*list), cmp_str) != NULL;
}

/* ---- stubs ------------------------------------------------------------------------ */

/*
 * A page of stubs: a 16-byte header (jmp *0(%rip) to the trampoline, then its address),
 * then STUBS_PER_PAGE stubs, each "movabs $entry, %r11; jmp header", entry its own row of
 * the page's entries (data, in another mapping). A page is written whole while writable
 * and then made executable once (never both): its stubs are handed out one by one after.
 */
#define PAGE 4096
#define STUBS_PER_PAGE (PAGE / FNP_LC_STUB_SIZE - 1)
#define MAX_PAGES 4096

struct stub_page {
    unsigned char *code;
    struct fnp_lc_entry *entries;
};

/* Under lock. */
static struct stub_page pages[MAX_PAGES];
static size_t npages, used_in_last = STUBS_PER_PAGE;
static int stubs_failed;

static int stub_page_new(void)
{
    if (npages == MAX_PAGES)
        return -ENOSPC;
    unsigned char *code =
        mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (code == MAP_FAILED)
        return -errno;
    struct fnp_lc_entry *entries = fnp_pages(STUBS_PER_PAGE * sizeof(*entries));
    if (!entries) {
        munmap(code, PAGE);
        return -ENOMEM;
    }
    memset(code, 0xcc, PAGE);
    /* jmp *0(%rip); .quad fnp_lc_tramp */
    static const unsigned char jmp_rip[6] = {0xff, 0x25, 0, 0, 0, 0};
    memcpy(code, jmp_rip, 6);
    uint64_t tramp = (uint64_t)(uintptr_t)fnp_lc_tramp;
    memcpy(code + 6, &tramp, 8);
    for (size_t i = 0; i < STUBS_PER_PAGE; i++) {
        unsigned char *s = code + FNP_LC_STUB_SIZE * (i + 1);
        uint64_t entry = (uint64_t)(uintptr_t)&entries[i];
        s[0] = 0x49; /* movabs $entry, %r11 */
        s[1] = 0xbb;
        memcpy(s + 2, &entry, 8);
        int32_t rel = -(int32_t)(FNP_LC_STUB_SIZE * (i + 1) + 15);
        s[10] = 0xe9; /* jmp rel32 to the header */
        memcpy(s + 11, &rel, 4);
    }
    if (mprotect(code, PAGE, PROT_READ | PROT_EXEC) != 0) {
        int e = errno;
        munmap(code, PAGE);
        return -e;
    }
    pages[npages++] = (struct stub_page){code, entries};
    used_in_last = 0;
    return 0;
}

/* A free stub and its entry; NULL when none can be made (said once). */
static unsigned char *stub_take(struct fnp_lc_entry **entry)
{
    if (used_in_last == STUBS_PER_PAGE) {
        int rc = stub_page_new();
        if (rc) {
            if (!stubs_failed++)
                fnp_log("PROF_LIBCALLS: cannot make the trampolines executable: %s; %s",
                        strerror(-rc),
                        npages ? "the library calls hooked so far are recorded"
                               : "no library call is recorded");
            return NULL;
        }
    }
    struct stub_page *p = &pages[npages - 1];
    size_t i = used_in_last++;
    *entry = &p->entries[i];
    return p->code + FNP_LC_STUB_SIZE * (i + 1);
}

static int is_stub(uintptr_t a)
{
    for (size_t i = 0; i < npages; i++)
        if (a - (uintptr_t)pages[i].code < PAGE)
            return 1;
    return 0;
}

/* ---- the objects ------------------------------------------------------------------- */

struct object {
    char *path; /* as the loader names it; "" for the program */
    uintptr_t bias;
    uintptr_t lo, hi;             /* its mapped addresses */
    uintptr_t relro_lo, relro_hi; /* pages read-only after relocation */
    const ElfW(Dyn) * dyn;
    const ElfW(Phdr) * phdr;
    int phnum;
    int instrumented;
    int ours; /* libfnprof*.so: never a caller, never a callee */
};

/* The objects seen by the last scan, sorted by lo: an address in none of them is new
 * (fnp_libcalls_seen). Replaced whole under lock, read without it; old arrays stay. */
struct seen {
    size_t n;
    uint32_t generation; /* the module generation they were seen under */
    struct {
        uintptr_t lo, hi;
    } r[];
};
static struct seen *seen_now;

static struct fnp_lc_spec *spec;
static const char *spec_text;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static __thread int scanning __attribute__((tls_model("initial-exec")));
static size_t hooked_slots, hooked_objects;
static uintptr_t own_base; /* where libfnprof's code is (the program, for libfnprof.a) */

struct collect {
    struct object *v;
    size_t n, cap;
    int nomem;
};

static int collect_one(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct collect *c = arg;
    struct object o = {.bias = info->dlpi_addr,
                       .lo = UINTPTR_MAX,
                       .phdr = info->dlpi_phdr,
                       .phnum = info->dlpi_phnum};
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD) {
            o.lo = lo < o.lo ? lo : o.lo;
            o.hi = lo + ph->p_memsz > o.hi ? lo + ph->p_memsz : o.hi;
        } else if (ph->p_type == PT_DYNAMIC) {
            o.dyn = (const ElfW(Dyn) *)lo;
        } else if (ph->p_type == PT_GNU_RELRO) {
            o.relro_lo = lo & ~(uintptr_t)(PAGE - 1);
            o.relro_hi = (lo + ph->p_memsz) & ~(uintptr_t)(PAGE - 1);
        }
    }
    if (o.lo == UINTPTR_MAX)
        return 0;
    if (!(o.path = strdup(info->dlpi_name ? info->dlpi_name : ""))) {
        c->nomem = 1;
        return 1;
    }
    const char *base = strrchr(o.path, '/');
    base = base ? base + 1 : o.path;
    o.ours = strncmp(base, "libfnprof", 9) == 0;
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 32;
        struct object *v = realloc(c->v, cap * sizeof(*v));
        if (!v) {
            free(o.path);
            c->nomem = 1;
            return 1;
        }
        c->v = v;
        c->cap = cap;
    }
    c->v[c->n++] = o;
    return 0;
}

static void collect_free(struct collect *c)
{
    for (size_t i = 0; i < c->n; i++)
        free(c->v[i].path);
    free(c->v);
}

/* The dynamic section's addresses: glibc has relocated them in place, other loaders may
 * not have. */
static uintptr_t dyn_addr(const struct object *o, uintptr_t v)
{
    return v >= o->lo && v < o->hi ? v : v + o->bias;
}

struct dyninfo {
    const ElfW(Sym) * symtab;
    const char *strtab;
    const ElfW(Rela) * jmprel, *rela;
    size_t njmprel, nrela;
    const ElfW(Half) * versym;
    const ElfW(Verneed) * verneed;
    size_t nverneed;
};

static int read_dynamic(const struct object *o, struct dyninfo *d)
{
    memset(d, 0, sizeof(*d));
    if (!o->dyn)
        return -1;
    int pltrela = 1;
    for (const ElfW(Dyn) *e = o->dyn; e->d_tag != DT_NULL; e++) {
        uintptr_t v = e->d_un.d_ptr;
        switch (e->d_tag) {
        case DT_SYMTAB:
            d->symtab = (const ElfW(Sym) *)dyn_addr(o, v);
            break;
        case DT_STRTAB:
            d->strtab = (const char *)dyn_addr(o, v);
            break;
        case DT_JMPREL:
            d->jmprel = (const ElfW(Rela) *)dyn_addr(o, v);
            break;
        case DT_PLTRELSZ:
            d->njmprel = e->d_un.d_val / sizeof(ElfW(Rela));
            break;
        case DT_PLTREL:
            pltrela = e->d_un.d_val == DT_RELA;
            break;
        case DT_RELA:
            d->rela = (const ElfW(Rela) *)dyn_addr(o, v);
            break;
        case DT_RELASZ:
            d->nrela = e->d_un.d_val / sizeof(ElfW(Rela));
            break;
        case DT_VERSYM:
            d->versym = (const ElfW(Half) *)dyn_addr(o, v);
            break;
        case DT_VERNEED:
            d->verneed = (const ElfW(Verneed) *)dyn_addr(o, v);
            break;
        case DT_VERNEEDNUM:
            d->nverneed = e->d_un.d_val;
            break;
        }
    }
    if (!pltrela)
        d->jmprel = NULL;
    if (!d->jmprel)
        d->njmprel = 0;
    if (!d->rela)
        d->nrela = 0;
    return d->symtab && d->strtab ? 0 : -1;
}

static const char *sym_name(const struct dyninfo *d, const ElfW(Rela) * r)
{
    return d->strtab + d->symtab[ELF64_R_SYM(r->r_info)].st_name;
}

/* The version the object asks for symbol index i, or NULL. */
static const char *sym_version(const struct dyninfo *d, size_t i)
{
    if (!d->versym || !d->verneed)
        return NULL;
    ElfW(Half) want = d->versym[i] & 0x7fff;
    if (want < 2)
        return NULL;
    const ElfW(Verneed) *vn = d->verneed;
    for (size_t k = 0; k < d->nverneed; k++) {
        const ElfW(Vernaux) *a = (const ElfW(Vernaux) *)((const char *)vn + vn->vn_aux);
        for (unsigned j = 0; j < vn->vn_cnt; j++) {
            if (a->vna_other == want)
                return d->strtab + a->vna_name;
            a = (const ElfW(Vernaux) *)((const char *)a + a->vna_next);
        }
        if (!vn->vn_next)
            break;
        vn = (const ElfW(Verneed) *)((const char *)vn + vn->vn_next);
    }
    return NULL;
}

static int is_instrumented(const struct object *o, const struct dyninfo *d)
{
    if (o->ours)
        return 0;
    if (own_base >= o->lo && own_base < o->hi)
        return 1; /* the program, with libfnprof.a linked in (not hooked: fnp_libcalls_init) */
    for (size_t i = 0; i < d->njmprel; i++)
        if (!strcmp(sym_name(d, &d->jmprel[i]), "__cyg_profile_func_enter"))
            return 1;
    for (size_t i = 0; i < d->nrela; i++)
        if (ELF64_R_TYPE(d->rela[i].r_info) == R_X86_64_GLOB_DAT &&
            !strcmp(sym_name(d, &d->rela[i]), "__cyg_profile_func_enter"))
            return 1;
    return fnp_sites_in_file(*o->path ? o->path : "/proc/self/exe"); /* a patchable build */
}

static const struct object *object_at(const struct collect *c, uintptr_t a)
{
    for (size_t i = 0; i < c->n; i++)
        if (a >= c->v[i].lo && a < c->v[i].hi)
            return &c->v[i];
    return NULL;
}

/* a lies in an executable segment of o: a function, not data. */
static int in_code(const struct object *o, uintptr_t a)
{
    for (int i = 0; i < o->phnum; i++) {
        const ElfW(Phdr) *ph = &o->phdr[i];
        uintptr_t lo = o->bias + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && a >= lo && a < lo + ph->p_memsz)
            return 1;
    }
    return 0;
}

/* s is in a segment of o that is writable now or made read-only after relocation. */
static int slot_writable(const struct object *o, uintptr_t s)
{
    if (s >= o->relro_lo && s < o->relro_hi)
        return 1;
    for (int i = 0; i < o->phnum; i++) {
        const ElfW(Phdr) *ph = &o->phdr[i];
        uintptr_t lo = o->bias + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_W) && s >= lo && s + 8 <= lo + ph->p_memsz)
            return 1;
    }
    return 0;
}

/* ---- keys: (library, 0, name), the library's name copied once ---------------------- */

/* Under lock. Never freed: the region table tells files apart by these addresses. */
static const char *lib_names[256];
static size_t nlib_names, lib_bytes;
static char lib_text[16384];

/* A stable copy of the file name of path (its last component); NULL past 256 libraries. */
static const char *lib_name(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    for (size_t i = 0; i < nlib_names; i++)
        if (!strcmp(lib_names[i], base))
            return lib_names[i];
    size_t n = strlen(base) + 1;
    if (nlib_names == sizeof(lib_names) / sizeof(lib_names[0]) || n > sizeof(lib_text) - lib_bytes)
        return NULL;
    char *copy = memcpy(lib_text + lib_bytes, base, n);
    lib_bytes += n;
    return lib_names[nlib_names++] = copy;
}

/* The program's path, for calls into it from a library (an interpreter's API called by an
 * instrumented extension module). */
static const char *program_path(void)
{
    static char exe[4096];
    if (!exe[0]) {
        ssize_t k = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
        if (k <= 0)
            return "<program>";
        exe[k] = 0;
    }
    return exe;
}

typedef char *demangle_fn(const char *, char *, size_t *, int *);

/* name demangled (malloc'd), or NULL: a C name, or no C++ runtime loaded. */
static char *demangled(const char *name)
{
    static demangle_fn *demangle;
    if (strncmp(name, "_Z", 2) != 0)
        return NULL;
    if (!demangle)
        demangle = (demangle_fn *)dlsym(RTLD_DEFAULT, "__cxa_demangle");
    int status = -1;
    char *out = demangle ? demangle(name, NULL, NULL, &status) : NULL;
    if (status != 0) {
        free(out);
        return NULL;
    }
    return out;
}

/* ---- hooking an object's slots -------------------------------------------------------- */

struct slot {
    uintptr_t *at;
    uintptr_t target;
    const char *name;
    const char *lib; /* the callee's file name (stable) */
};

/* The definition sym of object o (at index k of the scan) is unversioned: the loader
 * binds a versioned reference to it (an interposer's malloc, fnprof's own wrappers). */
static int unversioned(const struct dyninfo *d, const ElfW(Sym) * sym)
{
    if (!d->versym || !d->symtab || sym < d->symtab)
        return 1;
    return (d->versym[sym - d->symtab] & 0x7fff) <= 1;
}

/* Index in c of the object holding a, or c->n. */
static size_t object_index(const struct collect *c, uintptr_t a)
{
    size_t i = 0;
    while (i < c->n && !(a >= c->v[i].lo && a < c->v[i].hi))
        i++;
    return i;
}

/*
 * What a lazy slot of symbol index i will reach, as the loader binds it: the first object
 * of the global scope (the order dl_iterate_phdr gives) whose definition of the name has
 * the version asked for, or no version at all; then the object's own scope (RTLD_LOCAL).
 * dlsym finds the first default definition, dlvsym the first of that exact version, which
 * skips unversioned ones: the earlier of the two wins if it may be bound. 0: none.
 */
static uintptr_t resolve_lazy(const struct collect *c, const struct dyninfo *all,
                              const struct object *o, const struct dyninfo *d, size_t i)
{
    const char *name = d->strtab + d->symtab[i].st_name, *ver = sym_version(d, i);
    void *a = dlsym(RTLD_DEFAULT, name), *b = ver ? dlvsym(RTLD_DEFAULT, name, ver) : NULL;
    if (!a && !b) {
        void *h = dlopen(*o->path ? o->path : NULL, RTLD_LAZY | RTLD_NOLOAD);
        if (h) {
            a = dlsym(h, name);
            b = ver ? dlvsym(h, name, ver) : NULL;
            dlclose(h);
        }
    }
    if (!ver || !b)
        return (uintptr_t)a;
    if (!a)
        return (uintptr_t)b;
    size_t ia = object_index(c, (uintptr_t)a), ib = object_index(c, (uintptr_t)b);
    if (ia >= ib || ia == c->n)
        return (uintptr_t)b;
    Dl_info info;
    const ElfW(Sym) *sym = NULL;
    if (!dladdr1(a, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym)
        return (uintptr_t)b;
    return unversioned(&all[ia], sym) ? (uintptr_t)a : (uintptr_t)b;
}

/* Whether slot r of o is one to hook; fills s. */
static int candidate(const struct collect *c, const struct dyninfo *all, const struct object *o,
                     const struct dyninfo *d, const ElfW(Rela) * r, struct slot *s)
{
    s->at = (uintptr_t *)(o->bias + r->r_offset);
    s->name = sym_name(d, r);
    if (!*s->name || listed(never, sizeof(never) / sizeof(*never), s->name) ||
        !slot_writable(o, (uintptr_t)s->at))
        return 0;
    uintptr_t value = *s->at;
    if (is_stub(value))
        return 0; /* hooked by an earlier scan */
    /* resolved, or still lazy (pointing into the object's own PLT) */
    s->target = value && (value < o->lo || value >= o->hi)
                    ? value
                    : resolve_lazy(c, all, o, d, ELF64_R_SYM(r->r_info));
    const struct object *callee = s->target ? object_at(c, s->target) : NULL;
    if (!callee || callee == o || callee->ours || callee->instrumented ||
        (own_base >= callee->lo && own_base < callee->hi) || !in_code(callee, s->target))
        return 0;
    /* a non-PIE program's PLT entry standing for a function whose address it takes (its
     * symbol is undefined there): the call goes on through that program's own slot */
    Dl_info info;
    const ElfW(Sym) *sym = NULL;
    if (dladdr1((void *)s->target, &info, (void **)&sym, RTLD_DL_SYMENT) && sym &&
        sym->st_shndx == SHN_UNDEF)
        return 0;
    s->lib = lib_name(*callee->path ? callee->path : program_path());
    return s->lib != NULL;
}

static int wanted(const struct slot *s)
{
    char *pretty = demangled(s->name);
    int plumbing =
        listed(plumbing_names, sizeof(plumbing_names) / sizeof(*plumbing_names), s->name);
    int w = fnp_lc_spec_wants(spec, s->lib, pretty ? pretty : s->name, s->name, plumbing);
    free(pretty);
    return w;
}

static uintptr_t intern(const char *lib, const char *name)
{
    char *pretty = demangled(name);
    uintptr_t key = fnp_region_key(lib, 0, pretty ? pretty : name);
    free(pretty);
    return key;
}

/* Points s at a new stub; 0, or -1 when no stub or key can be had. */
static int hook(const struct object *o, const struct slot *s)
{
    struct fnp_lc_entry *e;
    uintptr_t key = intern(s->lib, s->name);
    unsigned char *stub = key ? stub_take(&e) : NULL;
    if (!stub)
        return -1;
    e->real = (void *)s->target;
    e->key = key;
    e->lo = o->lo;
    e->hi = o->hi;
    e->key_futex = strcmp(s->name, "syscall") ? 0 : intern(s->lib, "syscall(SYS_futex)");
    __atomic_store_n(s->at, (uintptr_t)stub, __ATOMIC_RELEASE);
    return 0;
}

static int cmp_slot(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)((const struct slot *)a)->at,
              y = (uintptr_t)((const struct slot *)b)->at;
    return x < y ? -1 : x > y;
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

/* The RELRO pages whose protection could not be lifted: every later scan (a dlopen, a
 * function of a new object) finds their slots unhooked again, and must neither retry nor
 * say it again. Under the scan's lock; an object unloaded and another loaded at the same
 * address is then left alone too, and the list is small: past its room, retries resume. */
static uintptr_t refused[64];
static size_t nrefused;

static int refused_before(uintptr_t relro_lo)
{
    for (size_t i = 0; i < nrefused; i++)
        if (refused[i] == relro_lo)
            return 1;
    return 0;
}

static void refused_note(uintptr_t relro_lo)
{
    if (nrefused < sizeof(refused) / sizeof(refused[0]))
        refused[nrefused++] = relro_lo;
}

static void hook_object(const struct collect *c, const struct dyninfo *all, const struct object *o,
                        const struct dyninfo *d)
{
    size_t n = 0, cap = d->njmprel + d->nrela;
    struct slot *v = malloc((cap ? cap : 1) * sizeof(*v));
    if (!v)
        return;
    for (size_t i = 0; i < d->njmprel; i++)
        if (ELF64_R_TYPE(d->jmprel[i].r_info) == R_X86_64_JUMP_SLOT &&
            candidate(c, all, o, d, &d->jmprel[i], &v[n]) && wanted(&v[n]))
            n++;
    /* GOT entries of functions called without the PLT (-fno-plt); not those a JUMP_SLOT of
     * the same function has, whose entry is the function's address as the program takes it
     * (a pointer compared with another object's stays equal) */
    size_t *jumps = malloc((d->njmprel ? d->njmprel : 1) * sizeof(*jumps));
    if (!jumps) {
        free(v);
        return;
    }
    for (size_t i = 0; i < d->njmprel; i++)
        jumps[i] = ELF64_R_SYM(d->jmprel[i].r_info);
    qsort(jumps, d->njmprel, sizeof(*jumps), cmp_size);
    for (size_t i = 0; i < d->nrela; i++) {
        size_t sym = ELF64_R_SYM(d->rela[i].r_info);
        if (ELF64_R_TYPE(d->rela[i].r_info) == R_X86_64_GLOB_DAT &&
            !bsearch(&sym, jumps, d->njmprel, sizeof(*jumps), cmp_size) &&
            candidate(c, all, o, d, &d->rela[i], &v[n]) && wanted(&v[n]))
            n++;
    }
    free(jumps);
    if (!n) {
        free(v);
        return;
    }
    qsort(v, n, sizeof(*v), cmp_slot);
    int relro = 0;
    for (size_t i = 0; i < n; i++)
        relro |= (uintptr_t)v[i].at >= o->relro_lo && (uintptr_t)v[i].at < o->relro_hi;
    if (relro && refused_before(o->relro_lo)) {
        free(v);
        return; /* said once, at the scan that found it */
    }
    if (relro &&
        mprotect((void *)o->relro_lo, o->relro_hi - o->relro_lo, PROT_READ | PROT_WRITE) != 0) {
        fnp_log("PROF_LIBCALLS: %s: its GOT is read-only (linked -z relro -z now) and cannot "
                "be made writable: %s; its library calls are not recorded",
                *o->path ? o->path : program_path(), strerror(errno));
        refused_note(o->relro_lo);
        free(v);
        return;
    }
    size_t done = 0;
    for (size_t i = 0; i < n && !hook(o, &v[i]); i++)
        done++;
    if (relro)
        mprotect((void *)o->relro_lo, o->relro_hi - o->relro_lo, PROT_READ);
    hooked_slots += done;
    hooked_objects += done > 0;
    free(v);
}

static int cmp_range(const void *a, const void *b)
{
    uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
    return x < y ? -1 : x > y;
}

/* Looks at every loaded object and hooks what is new. Under lock. */
static void scan(uint32_t generation)
{
    struct collect c = {0};
    fnp_mem_hold(); /* fnprof's allocations, not the program's (memory.c) */
    dl_iterate_phdr(collect_one, &c);
    if (c.nomem)
        goto out;
    struct dyninfo *d = calloc(c.n ? c.n : 1, sizeof(*d));
    if (!d)
        goto out;
    for (size_t i = 0; i < c.n; i++)
        if (read_dynamic(&c.v[i], &d[i]) == 0)
            c.v[i].instrumented = is_instrumented(&c.v[i], &d[i]);
    for (size_t i = 0; i < c.n; i++)
        if (c.v[i].instrumented)
            hook_object(&c, d, &c.v[i], &d[i]);
    free(d);
    struct seen *s = fnp_pages(sizeof(*s) + c.n * sizeof(s->r[0]));
    if (s) {
        s->n = c.n;
        s->generation = generation;
        for (size_t i = 0; i < c.n; i++) {
            s->r[i].lo = c.v[i].lo;
            s->r[i].hi = c.v[i].hi;
        }
        qsort(s->r, s->n, sizeof(s->r[0]), cmp_range);
        __atomic_store_n(&seen_now, s, __ATOMIC_RELEASE);
    }
    char line[512];
    snprintf(line, sizeof(line), "%s (%zu function%s hooked in %zu object%s)",
             spec_text ? spec_text : "", hooked_slots, hooked_slots == 1 ? "" : "s", hooked_objects,
             hooked_objects == 1 ? "" : "s");
    fnprof_add_metadata("libcalls", line);
out:
    collect_free(&c);
    fnp_mem_release();
}

static uint32_t generation_now(void)
{
    return (uint32_t)(__atomic_load_n(&fnp_recording, __ATOMIC_RELAXED) >> FNP_ADDR_BITS);
}

void fnp_libcalls_loaded(void)
{
    if (!spec || scanning)
        return;
    scanning = 1;
    pthread_mutex_lock(&lock);
    scan(generation_now());
    pthread_mutex_unlock(&lock);
    scanning = 0;
}

void fnp_libcalls_seen(uintptr_t key)
{
    const struct seen *s = __atomic_load_n(&seen_now, __ATOMIC_ACQUIRE);
    uintptr_t a = key & FNP_ADDR_MASK;
    uint32_t gen = (uint32_t)(key >> FNP_ADDR_BITS);
    if (!s || scanning)
        return;
    if (s->generation == gen) {
        size_t lo = 0, hi = s->n;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (s->r[mid].lo <= a)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo > 0 && a < s->r[lo - 1].hi)
            return;
    }
    /* Another thread scanning may be waiting for the loader's lock, which this one may
     * hold (a constructor run by dlopen): no waiting here. The next new function of the
     * object asks again. */
    scanning = 1;
    if (pthread_mutex_trylock(&lock) == 0) {
        scan(gen);
        pthread_mutex_unlock(&lock);
    }
    scanning = 0;
}

/* XSAVE's area for the components fnp_lc_call_saving saves, or 0 for FXSAVE. */
static uint64_t xsave_size(void)
{
    unsigned a, b, c, d;
    __asm__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(1), "c"(0));
    if (!(c & (1u << 27))) /* OSXSAVE */
        return 0;
    __asm__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0xd), "c"(0));
    return ((uint64_t)b + 63) & ~(uint64_t)63;
}

void fnp_libcalls_init(const char *text)
{
#ifdef FNP_STATIC_RUNTIME
    /* Linked into the program, fnprof's own calls into libc go through the program's GOT,
     * mixed with the program's: they would record themselves. */
    (void)text;
    fnp_log("PROF_LIBCALLS: needs libfnprof.so (LD_PRELOAD, fnprof run or -lfnprof): in a "
            "program linked with libfnprof.a no library call is recorded");
    return;
#endif
    char err[512];
    if (fnp_lc_spec_parse(text, &spec, err, sizeof(err))) {
        fnp_log("PROF_LIBCALLS: %s; no library call is recorded", err);
        spec = NULL;
        return;
    }
    spec_text = text;
    own_base = (uintptr_t)fnp_libcalls_init;
    fnp_lc_xsave_size = xsave_size();
    qsort(never, sizeof(never) / sizeof(*never), sizeof(*never), cmp_str);
    qsort(plumbing_names, sizeof(plumbing_names) / sizeof(*plumbing_names), sizeof(*plumbing_names),
          cmp_str);
    fnp_libcalls_loaded();
    __atomic_store_n(&fnp_libcalls_watch, 1, __ATOMIC_RELEASE);
}

#else

void fnp_libcalls_init(const char *text)
{
    (void)text;
    fnp_log("PROF_LIBCALLS: library calls are recorded on x86_64 Linux with glibc only, and "
            "not in a runtime built with a sanitizer; none is recorded");
}

void fnp_libcalls_loaded(void)
{
}

void fnp_libcalls_seen(uintptr_t key)
{
    (void)key;
}

#endif
