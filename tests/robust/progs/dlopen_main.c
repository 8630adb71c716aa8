/* Loads plugin A, calls it 3 times, unloads it; then plugin B, 5 calls; then A again, 2
 * calls. Both are gone at exit, and B usually lands where A was. Expected (run_robust.py,
 * case "dlopen"): every plugin function named from its own source with exact counts.
 * argv: the directory holding plugin_a and plugin_b [, a file to write "reused" or "moved"
 * to: whether B was loaded at A's address, which the test needs to know it tested reuse]. */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

static const char *dir;

int run_plugin(const char *name, const char *fn, int n, void **base)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        exit(3);
    }
    int (*work)(int) = (int (*)(int))dlsym(h, fn);
    Dl_info info;
    if (!work || !dladdr((void *)work, &info)) {
        fprintf(stderr, "dlsym %s: %s\n", fn, dlerror());
        exit(3);
    }
    *base = info.dli_fbase;
    int sum = 0;
    for (int i = 0; i < n; i++)
        sum += work(i);
    if (dlclose(h) != 0) {
        fprintf(stderr, "dlclose: %s\n", dlerror());
        exit(3);
    }
    return sum;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    dir = argv[1];
    void *a1, *b, *a2;
    int sa = run_plugin("plugin_a", "a_work", 3, &a1);
    int sb = run_plugin("plugin_b", "b_work", 5, &b);
    sa += run_plugin("plugin_a", "a_work", 2, &a2);
    printf("a: %d, b: %d\n", sa, sb);
    if (argc > 2) {
        FILE *f = fopen(argv[2], "w");
        if (!f)
            return 4;
        fprintf(f, "%s\n", b == a1 ? "reused" : "moved");
        fclose(f);
    }
    return 0;
}
/* SPDX-License-Identifier: MIT */
