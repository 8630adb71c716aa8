/* A shared library: exported functions reach .dynsym, the static one only .symtab. */
static int lib_hidden(int x) /* @line lib_hidden */
{
    return x * 5;
}

int lib_visible(int x) /* @line lib_visible */
{
    return lib_hidden(x) + 1;
}
/* SPDX-License-Identifier: MIT */
