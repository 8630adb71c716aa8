/* A unit whose functions all come from another file: decl_file, not the unit's name, must
 * give their file. */
#include "defs.inc"
/* SPDX-License-Identifier: MIT */
