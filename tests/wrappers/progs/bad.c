/* Does not compile: the wrapper's diagnostics and exit status must be the compiler's. */
int f(void)
{
    return undeclared_name + 1;
}
/* SPDX-License-Identifier: MIT */
