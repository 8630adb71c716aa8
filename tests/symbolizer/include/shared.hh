// Defined in a header and used by cxx.cc and cxx_more.cc: at -O0 each unit emits a COMDAT
// copy, the linker keeps one and points the other unit's DWARF at it.
#pragma once

inline int shared_inline(int x) // @line shared_inline
{
    return x * 3;
}

template <typename T> struct Box {
    T v;
    T get() const // @line box_get
    {
        return v;
    }
};
/* SPDX-License-Identifier: MIT */
