/* Which hooks the loader picked for this process: with PROF_OUTPUT absent or empty the
 * ifunc resolvers give both names the same no-op function, else the two real hooks. */
#include <stdio.h>

void __cyg_profile_func_enter(void *fn, void *call_site);
void __cyg_profile_func_exit(void *fn, void *call_site);

int main(void)
{
    void (*volatile enter)(void *, void *) = __cyg_profile_func_enter;
    void (*volatile leave)(void *, void *) = __cyg_profile_func_exit;
    puts(enter == leave ? "none" : "real");
    return 0;
}
