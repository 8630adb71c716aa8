// The C++ test program: namespaces, a class with overloads, a template, an anonymous
// namespace, a static function, a lambda, a class template's constructor, destructor and
// method, operators; with cxx_more.cc, functions from a header.
#include "shared.hh"

int more(int x);

namespace ns
{
struct C {
    int m(int x);
    int m(double x);
    template <typename T> T t(T v) // @line t
    {
        return v + 1;
    }
    static int s();
};

int C::m(int x) // @line m_int
{
    return x + 1;
}

int C::m(double x) // @line m_double
{
    return (int)x + 2;
}

int C::s() // @line s
{
    return 3;
}

namespace
{
int anon(int x) // @line anon
{
    return x * 2;
}
} // namespace
} // namespace ns

namespace ns
{
// A class template with members defined outside it, constructor and destructor included.
template <typename T> struct Stack {
    Stack();
    ~Stack();
    void push(T v);
    T items[4];
    int n;
};

template <typename T> Stack<T>::Stack() : n(0) // @line stack_ctor
{
}

template <typename T> Stack<T>::~Stack() // @line stack_dtor
{
    n = -1;
}

template <typename T> void Stack<T>::push(T v) // @line stack_push
{
    items[n++ & 3] = v;
}

struct V {
    int x;
    V operator+(const V &o) const;
    bool operator==(const V &o) const;
};

V V::operator+(const V &o) const // @line op_plus
{
    return V{x + o.x};
}

bool V::operator==(const V &o) const // @line op_eq
{
    return x == o.x;
}
} // namespace ns

static int stat(int x) // @line stat
{
    return x - 1;
}

int apply(int x) // @line apply
{
    auto l = [x](int y) { return x + y; }; // @line lambda
    return l(x);
}

int main() // @line cxx_main
{
    ns::C c;
    Box<int> b{5};
    ns::Stack<int> st;
    st.push(1);
    ns::V v1{1}, v2{2};
    return c.m(1) + c.m(2.0) + c.t(3) + ns::C::s() + ns::anon(1) + stat(2) + apply(4) +
           shared_inline(b.get()) + more(6) + st.n + (v1 + v2 == v2);
}
/* SPDX-License-Identifier: MIT */
