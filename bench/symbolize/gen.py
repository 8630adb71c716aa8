#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes a big C++ program for the symbolization benchmark.

gen.py OUTDIR NFUNCS [NFILES]: NFILES translation units (default NFUNCS/100), together about
NFUNCS out-of-line functions of the shapes a C++ code base has: namespaced free functions,
overloads, class methods defined out of the class, constructors and destructors, operators,
member function templates, static functions and lambdas. Each function has parameters, locals
and a block, so the DWARF has the weight of real code, not just one DIE per function. A shared
header gives every unit the same declarations and inline templates (COMDAT copies), as real
headers do. Deterministic: the same arguments write the same files.
"""
import os
import sys


def header(nfiles):
    return """#pragma once
#include <cstddef>
namespace common {
template <typename T> struct Vec {
    T v[4];
    T sum() const { T s{}; for (std::size_t i = 0; i < 4; i++) s += v[i]; return s; }
    T &at(std::size_t i) { return v[i & 3]; }
};
struct Stats {
    long n = 0;
    double total = 0;
    void add(double x);
    double mean() const;
};
int mix(int a, int b);
}
"""


def unit(k, per):
    out = ['#include "common.hh"', "", f"namespace m{k} {{", ""]
    n = 0
    cls = f"Widget{k}"
    # A class with out-of-class members: ctor, dtor, operators, overloads, a template.
    out.append(f"class {cls} {{")
    out.append("  public:")
    out.append(f"    explicit {cls}(int seed);")
    out.append(f"    ~{cls}();")
    out.append(f"    {cls} &operator+=(const {cls} &o);")
    out.append(f"    bool operator<(const {cls} &o) const;")
    methods = max(1, per // 4)
    for j in range(methods):
        out.append(f"    int step{j}(int x);")
        out.append(f"    int step{j}(double x);")
    out.append("    template <typename T> T scaled(T v) const { return v * (T)state_; }")
    out.append("  private:")
    out.append("    int state_;")
    out.append("    common::Vec<int> hist_;")
    out.append("};")
    out.append("")
    out.append(f"{cls}::{cls}(int seed) : state_(seed), hist_{{{{seed, 1, 2, 3}}}} {{}}")
    out.append(f"{cls}::~{cls}() {{ state_ = 0; }}")
    out.append(f"{cls} &{cls}::operator+=(const {cls} &o) {{ state_ += o.state_; return *this; }}")
    out.append(f"bool {cls}::operator<(const {cls} &o) const {{ return state_ < o.state_; }}")
    n += 4
    for j in range(methods):
        out.append(f"int {cls}::step{j}(int x)")
        out.append("{")
        out.append(f"    int acc = state_ + {j};")
        out.append("    for (int i = 0; i < (x & 7); i++) {")
        out.append("        int t = acc * i + hist_.at(i);")
        out.append("        acc ^= t;")
        out.append("    }")
        out.append("    return acc;")
        out.append("}")
        out.append(f"int {cls}::step{j}(double x)")
        out.append("{")
        out.append(f"    double d = x * {j + 1}.5;")
        out.append("    return scaled<int>((int)d) + hist_.sum();")
        out.append("}")
        n += 2
    # Free functions: static ones, lambdas, templates, plain.
    j = 0
    while n < per:
        if j % 5 == 0:
            out.append(f"static int hidden{j}(int a, int b)")
            out.append("{")
            out.append("    int r = common::mix(a, b);")
            out.append(f"    return r + {j};")
            out.append("}")
            out.append(f"int call{j}(int a) {{ return hidden{j}(a, a + 1); }}")
            n += 2
        elif j % 5 == 1:
            out.append(f"int with_lambda{j}(int a)")
            out.append("{")
            out.append(f"    auto f = [a](int b) {{ return a * b + {j}; }};")
            out.append("    return f(a) + f(a + 1);")
            out.append("}")
            n += 2
        elif j % 5 == 2:
            out.append(f"template <typename T> T twice{j}(T v) {{ return v + v; }}")
            out.append(f"long inst{j}(long v) {{ return twice{j}<long>(v) + twice{j}<int>((int)v); }}")
            n += 3
        else:
            out.append(f"double plain{j}(double x, int y)")
            out.append("{")
            out.append("    double s = 0;")
            out.append("    for (int i = 0; i < y; i++) {")
            out.append("        double t = x / (i + 1);")
            out.append("        s += t;")
            out.append("    }")
            out.append("    return s;")
            out.append("}")
            n += 1
        j += 1
    out.append("")
    out.append(f"int entry(int x)")
    out.append("{")
    out.append(f"    {cls} w(x), v(x + 1);")
    out.append("    w += v;")
    out.append("    return (w < v) + w.step0(x) + w.step0(1.0);")
    out.append("}")
    out.append(f"}} // namespace m{k}")
    return "\n".join(out) + "\n", n + 1


def main():
    outdir, nfuncs = sys.argv[1], int(sys.argv[2])
    nfiles = int(sys.argv[3]) if len(sys.argv) > 3 else max(1, nfuncs // 100)
    per = max(8, nfuncs // nfiles)
    os.makedirs(outdir, exist_ok=True)

    def write(name, text):
        path = os.path.join(outdir, name)
        try:
            with open(path) as f:
                if f.read() == text:
                    return  # unchanged: make skips the rebuild
        except OSError:
            pass
        with open(path, "w") as f:
            f.write(text)

    write("common.hh", header(nfiles))
    total = 0
    for k in range(nfiles):
        text, n = unit(k, per)
        total += n
        write(f"u{k}.cc", text)
    main_cc = ['#include "common.hh"', "namespace common {",
               "void Stats::add(double x) { n++; total += x; }",
               "double Stats::mean() const { return n ? total / n : 0; }",
               "int mix(int a, int b) { return a * 31 + b; }", "}"]
    for k in range(nfiles):
        main_cc.append(f"namespace m{k} {{ int entry(int x); }}")
    main_cc.append("int main(int argc, char **)")
    main_cc.append("{")
    main_cc.append("    int s = 0;")
    for k in range(nfiles):
        main_cc.append(f"    s += m{k}::entry(argc);")
    main_cc.append("    return s & 1;")
    main_cc.append("}")
    write("main.cc", "\n".join(main_cc) + "\n")
    names = " ".join(f"u{k}.cc" for k in range(nfiles))
    write("sources.txt", names + " main.cc\n")
    print(f"gen.py: {nfiles} units, about {total + 4} functions in {outdir}", file=sys.stderr)


main()
