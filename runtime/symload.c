/* SPDX-License-Identifier: MIT */
/*
 * Finding the symbolizer. libfnprof.a links it in (FNP_SYMBOLIZER_LINKED); libfnprof.so
 * dlopens libfnprof-symbolizer.so from its own directory at dump time, so a profiled
 * process maps libdwarf, libelf and libstdc++ only when it writes its profile, and a host
 * that links its own copies is never disturbed before then.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"
#include "symbolizer.h"

#ifndef FNPROF_REL_BINDIR
#define FNPROF_REL_BINDIR "../bin"
#endif

#ifdef FNP_SYMBOLIZER_LINKED

void fnp_symload_init(void)
{
}

const char *fnp_symload_tool(void)
{
#ifdef FNPROF_INSTALL_BINDIR
    return FNPROF_INSTALL_BINDIR "/fnprof";
#else
    return NULL;
#endif
}

int fnp_symload_get(struct fnp_symbolizer_api *api)
{
    *api = (struct fnp_symbolizer_api){0};
    api->create = fnp_symbolizer_new;
    api->resolve = fnp_symbolizer_resolve;
    api->destroy = fnp_symbolizer_free;
    api->set_debug_dirs = fnp_symbolizer_set_debug_dirs;
    api->functions = fnp_symbolizer_functions;
    api->debug_dirs = fnp_config.debug_dirs;
    return 0;
}

#else

#define MODULE_NAME "libfnprof-symbolizer.so"

/* Written once at load: the module's path next to libfnprof.so, and the command's. */
static char module_path[PATH_MAX];
static char tool_path[PATH_MAX];

const char *fnp_symload_tool(void)
{
    return tool_path[0] ? tool_path : NULL;
}

void fnp_symload_init(void)
{
    Dl_info info;
    char self[PATH_MAX];
    /* dli_fname is LD_PRELOAD's spelling, possibly relative: resolve it before the
     * program can chdir. */
    if (!dladdr((void *)fnp_symload_init, &info) || !info.dli_fname ||
        !realpath(info.dli_fname, self))
        return;
    char *slash = strrchr(self, '/');
    if (!slash)
        return;
    slash[1] = 0;
    if (strlen(self) + sizeof(MODULE_NAME) <= sizeof(module_path)) {
        strcpy(module_path, self);
        strcat(module_path, MODULE_NAME);
    }
    if (strlen(self) + sizeof(FNPROF_REL_BINDIR "/fnprof") <= sizeof(tool_path)) {
        strcpy(tool_path, self);
        strcat(tool_path, FNPROF_REL_BINDIR "/fnprof");
    }
}

int fnp_symload_get(struct fnp_symbolizer_api *api)
{
    *api = (struct fnp_symbolizer_api){0};
    void *h = module_path[0] ? dlopen(module_path, RTLD_NOW | RTLD_LOCAL) : NULL;
    if (!h) {
        const char *why = module_path[0] ? dlerror() : "libfnprof.so's directory not found";
        fnp_log("cannot load the symbolizer (%s); functions are named by address", why);
        return -ENOENT;
    }
    /* The module stays loaded: its strings are used until the profile is written, and
     * unloading libstdc++ at exit buys nothing. */
    api->create = (fnp_symbolizer_new_fn)dlsym(h, "fnp_symbolizer_new");
    api->resolve = (fnp_symbolizer_resolve_fn)dlsym(h, "fnp_symbolizer_resolve");
    api->destroy = (fnp_symbolizer_free_fn)dlsym(h, "fnp_symbolizer_free");
    api->set_debug_dirs =
        (fnp_symbolizer_set_debug_dirs_fn)dlsym(h, "fnp_symbolizer_set_debug_dirs");
    api->functions = (fnp_symbolizer_functions_fn)dlsym(h, "fnp_symbolizer_functions");
    api->debug_dirs = fnp_config.debug_dirs;
    if (!api->create || !api->resolve || !api->destroy) {
        fnp_log("%s: symbolizer entry points missing; functions are named by address", module_path);
        return -ENOENT;
    }
    return 0;
}

#endif
