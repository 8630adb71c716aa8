// SPDX-License-Identifier: MIT
// operator new and delete, scalar and array forms, reach malloc and free through
// libstdc++: new_scalar 1 x 24 bytes, new_array 400 bytes, new_cookie 10 x 16 + 8 (the
// array cookie of a type with a destructor), each freed; keep_one 1 x 24, never deleted.
#include <unistd.h>

struct Pod {
    long a, b, c;
};

struct WithDtor {
    long a, b;
    ~WithDtor()
    {
        a = 0;
    }
};

static Pod *kept;

__attribute__((noinline)) void new_scalar()
{
    Pod *p = new Pod();
    delete p;
}

__attribute__((noinline)) void new_array()
{
    int *p = new int[100];
    delete[] p;
}

__attribute__((noinline)) void new_cookie()
{
    WithDtor *p = new WithDtor[10];
    delete[] p;
}

__attribute__((noinline)) void keep_one()
{
    kept = new Pod();
}

int main()
{
    new_scalar();
    new_array();
    new_cookie();
    keep_one();
    return write(1, "ok\n", 3) != 3;
}
