int beta_leaf(int x);

int alpha_step(int x)
{
    return beta_leaf(x) * 2;
}
/* SPDX-License-Identifier: MIT */
