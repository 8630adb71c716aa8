// A second unit of the C++ program, using the header's functions too.
#include "shared.hh"

int more(int x) // @line more
{
    Box<int> b{x};
    return shared_inline(b.get());
}
/* SPDX-License-Identifier: MIT */
