/* A function defined in a header: its decl_file comes through the line table's include
 * directories, not the unit's own name. */
static inline int twice(int x) /* @line twice */
{
    return 2 * x;
}
/* SPDX-License-Identifier: MIT */
