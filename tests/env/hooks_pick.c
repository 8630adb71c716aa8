/* Which hooks the loader picked for this process: with PROF_OUTPUT absent or empty the
 * ifunc resolvers give both names the same no-op function ("none"); else the real pair,
 * printed as "real" and the enter hook's offset in its object, which tells the counting
 * pair (PROF_TIMER=none) from the general one. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>

void __cyg_profile_func_enter(void *fn, void *call_site);
void __cyg_profile_func_exit(void *fn, void *call_site);

int main(void)
{
    void (*volatile enter)(void *, void *) = __cyg_profile_func_enter;
    void (*volatile leave)(void *, void *) = __cyg_profile_func_exit;
    Dl_info info;
    if (enter == leave) {
        puts("none");
    } else if (dladdr((void *)enter, &info) && info.dli_fbase) {
        printf("real %#lx\n", (unsigned long)((char *)enter - (char *)info.dli_fbase));
    } else {
        puts("real ?");
    }
    return 0;
}
/* SPDX-License-Identifier: MIT */
