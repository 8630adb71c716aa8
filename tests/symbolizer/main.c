/* The C test program: built by check_symbolizer with gcc and clang, -O0 and -O2, DWARF 4
 * and 5, PIE and not, always with -g -finstrument-functions. */
int a_entry(int x);
int b_entry(int x);
int inc_four(int x);

/* The name sits two lines below the return type: decl_line is the name's line. */
// clang-format off
static
long
spread_out /* @line spread_out */
    (int x)
// clang-format on
{
    return (long)x * 7;
}

int main(int argc, char **argv) /* @line main */
{
    (void)argv;
    return (int)(a_entry(argc) + b_entry(argc) + inc_four(argc) + spread_out(argc)) & 1;
}
/* SPDX-License-Identifier: MIT */
