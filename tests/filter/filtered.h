void leaf(void);
void lib_entry(int n);
/* SPDX-License-Identifier: MIT */
