/* SPDX-License-Identifier: MIT */
#ifndef FNP_PFTRACE_CHROME_H
#define FNP_PFTRACE_CHROME_H
#include <stdio.h>

struct fnp_sink;
/* The Perfetto trace read from in, as Chrome's JSON trace into s, packet by packet
 * (pftrace-chrome.c). 0, -EINVAL for a file that is not one, or -errno. */
int fnp_pftrace_to_chrome(FILE *in, struct fnp_sink *s);

#endif
