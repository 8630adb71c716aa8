/* SPDX-License-Identifier: MIT */
/*
 * C++ names through libstdc++'s own demangler: the target links stdc++ anyway, and it agrees
 * with c++filt (docs/symbols.md), so no second demangler is carried here.
 */
#include <stdlib.h>
#include <string.h>

#include "symbolizer.h"

/* From libstdc++ (cxxabi.h is C++ only). */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

char *fnp_demangle(const char *name)
{
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
