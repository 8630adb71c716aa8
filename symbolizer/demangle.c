/* SPDX-License-Identifier: MIT */
/*
 * C++ names through libstdc++'s own demangler: the target links stdc++ anyway, and it agrees
 * with c++filt (docs/symbols.md), so no second demangler is carried here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolizer.h"

/* From libstdc++ (cxxabi.h is C++ only). */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/* gcc names a unit's constructor and destructor functions _GLOBAL__sub_I_ and _GLOBAL__sub_D_
 * after the unit's first global symbol (mangled) or its file; __cxa_demangle and c++filt
 * know only the older _GLOBAL__I_ spelling, which they call "global constructors keyed to",
 * so the name stays mangled. The same words here, the symbol demangled. */
static char *global_ctor(const char *name)
{
    static const char *const kinds[][2] = {
        {"_GLOBAL__sub_I_", "global constructors keyed to "},
        {"_GLOBAL__sub_D_", "global destructors keyed to "},
    };
    for (size_t i = 0; i < 2; i++) {
        size_t n = strlen(kinds[i][0]);
        if (strncmp(name, kinds[i][0], n) || !name[n])
            continue;
        const char *rest = name + n;
        char *d = NULL;
        if (rest[0] == '_' && rest[1] == 'Z') {
            int status = 0;
            d = __cxa_demangle(rest, NULL, NULL, &status);
            if (!d && status == -1)
                return NULL;
        }
        const char *what = d ? d : rest;
        size_t len = strlen(kinds[i][1]) + strlen(what) + 1;
        char *out = malloc(len);
        if (out)
            snprintf(out, len, "%s%s", kinds[i][1], what);
        free(d);
        return out;
    }
    return strdup(name);
}

char *fnp_demangle(const char *name)
{
    if (!strncmp(name, "_GLOBAL__sub_", 13))
        return global_ctor(name);
    /* Only Itanium names: __cxa_demangle would also "demangle" a plain C name such as "f"
     * or "i" as a type ("float", "int"). */
    if (name[0] == '_' && name[1] == 'Z') {
        int status = 0;
        char *out = __cxa_demangle(name, NULL, NULL, &status);
        if (out)
            return out;
        /* -1 is out of memory; other failures mean "not a valid mangled name": keep it. */
        if (status == -1)
            return NULL;
    }
    return strdup(name);
}
