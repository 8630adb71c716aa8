/*
 * speedscope: not written yet.
 */
#include <errno.h>

#include "views.h"

int fnp_view_speedscope(const struct fnp_profile *p, const struct fnp_view_opts *o,
                        struct fnp_sink *s)
{
    (void)p;
    (void)o;
    return s->err = -ENOSYS;
}
