/* Library calls whose counts are known by construction (tests/libcalls/run_libcalls_test.py
 * expects them edge by edge): lk_add from one (3 a call), two (5, and getpid twice) and cb,
 * which lk_each calls back 4 times; arguments on the stack in stack_args, whose results the
 * test compares with a run without fnprof. "plugin": libplugin.so (instrumented) is
 * dlopen'd by its bare name, found through this program's RUNPATH, run and closed, twice.
 * "got": says which object the GOT entry of lk_add leads to. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

struct lk_big {
    long v[6];
};
typedef double lk_v4 __attribute__((vector_size(32)));
long lk_add(long a, long b);
long lk_many(long, long, long, long, long, long, long, long, long, long, long, long, double, double,
             double, double, double, double, double, double, double, double);
long lk_sumv(int n, ...);
long lk_big_sum(struct lk_big a, struct lk_big b);
long double lk_ld(long double x);
__attribute__((target("avx"))) lk_v4 lk_vadd(lk_v4 a, lk_v4 b);
void lk_each(void (*fn)(int), int n);

static long total;

void one(void)
{
    for (int i = 0; i < 3; i++)
        total += lk_add(i, 1);
}

void two(void)
{
    for (int i = 0; i < 5; i++)
        total += lk_add(i, 2);
    total += getpid() > 0;
    total += getpid() > 0;
}

void cb(int i)
{
    total += lk_add(i, 3);
}

__attribute__((target("avx"))) void vectors(void)
{
    if (!__builtin_cpu_supports("avx")) {
        printf("vadd: no AVX here\n");
        return;
    }
    lk_v4 a = {1, 2, 3, 4}, b = {10, 20, 30, 40};
    lk_v4 c = lk_vadd(a, b);
    printf("vadd %g %g %g %g\n", c[0], c[1], c[2], c[3]);
}

void stack_args(void)
{
    struct lk_big a = {{1, 2, 3, 4, 5, 6}}, b = {{10, 20, 30, 40, 50, 60}};
    printf("many %ld\n",
           lk_many(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10));
    printf("sumv %ld\n",
           lk_sumv(30, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L, 10L, 11L, 12L, 13L, 14L, 15L, 16L, 17L,
                   18L, 19L, 20L, 21L, 22L, 23L, 24L, 25L, 26L, 27L, 28L, 29L, 30L));
    printf("big %ld\n", lk_big_sum(a, b));
    printf("ld %Lg\n", lk_ld(2.5L));
}

/* The file name of the object the GOT entry of lk_add points into ("none": no object's,
 * such as a trampoline of fnprof's). */
static const char *slot_owner(void)
{
    const ElfW(Sym) *symtab = NULL;
    const char *strtab = NULL;
    const ElfW(Rela) * rel[2] = {NULL, NULL};
    size_t nrel[2] = {0, 0};
    for (const ElfW(Dyn) *d = _DYNAMIC; d->d_tag != DT_NULL; d++) {
        if (d->d_tag == DT_SYMTAB)
            symtab = (const ElfW(Sym) *)d->d_un.d_ptr;
        else if (d->d_tag == DT_STRTAB)
            strtab = (const char *)d->d_un.d_ptr;
        else if (d->d_tag == DT_JMPREL)
            rel[0] = (const ElfW(Rela) *)d->d_un.d_ptr;
        else if (d->d_tag == DT_PLTRELSZ)
            nrel[0] = d->d_un.d_val / sizeof(ElfW(Rela));
        else if (d->d_tag == DT_RELA)
            rel[1] = (const ElfW(Rela) *)d->d_un.d_ptr;
        else if (d->d_tag == DT_RELASZ)
            nrel[1] = d->d_un.d_val / sizeof(ElfW(Rela));
    }
    struct link_map *self = dlopen(NULL, RTLD_NOW);
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; rel[k] && i < nrel[k]; i++) {
            const char *name = strtab + symtab[ELF64_R_SYM(rel[k][i].r_info)].st_name;
            if (strcmp(name, "lk_add") != 0)
                continue;
            void *value = *(void **)(self->l_addr + rel[k][i].r_offset);
            Dl_info info;
            if (!dladdr(value, &info) || !info.dli_fname)
                return "none";
            const char *base = strrchr(info.dli_fname, '/');
            return base ? base + 1 : info.dli_fname;
        }
    return "no slot";
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    one();
    one();
    two();
    lk_each(cb, 4);
    stack_args();
    vectors();
    if (!strcmp(mode, "plugin")) {
        for (int round = 0; round < 2; round++) {
            void *h = dlopen("libplugin.so", RTLD_NOW);
            void (*run)(void) = h ? (void (*)(void))dlsym(h, "plugin_run") : NULL;
            if (!run) {
                printf("dlopen: %s\n", dlerror());
                return 1;
            }
            run();
            dlclose(h);
        }
    }
    if (!strcmp(mode, "got"))
        printf("lk_add's slot leads to %s\n", slot_owner());
    printf("total %ld\n", total);
    return 0;
}
/* SPDX-License-Identifier: MIT */
