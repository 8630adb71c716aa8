int beta_leaf(int x)
{
    return x + 1;
}
/* SPDX-License-Identifier: MIT */
