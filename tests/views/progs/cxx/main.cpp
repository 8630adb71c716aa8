#include <iostream>
#include <sstream>

#include "names.h"

// Static initialisers of this file: a global with a constructor.
static std::vector<std::string> main_words = {"alpha", "beta"};

namespace
{
int local_helper(const std::string &s)
{
    return static_cast<int>(s.size());
}
} // namespace

namespace cfg
{
template <typename T> T twice(const std::vector<T> &v)
{
    T t{};
    for (const T &x : v)
        t = t + x + x;
    return t;
}
template int twice<int>(const std::vector<int> &);
template std::string twice<std::string>(const std::vector<std::string> &);
} // namespace cfg

int main()
{
    std::vector<cfg::detail::node> nodes;
    for (const std::string &w : main_words)
        nodes.push_back({w, {1, 2, 3}});
    auto m = cfg::detail::index(nodes);
    auto loaded = cfg::load(m);
    std::ostringstream os;
    for (const auto &n : nodes)
        os << n;
    bool less = nodes[0] < nodes[1];
    int sum = nodes[0](2) + cfg::total(main_words, L"tag") + local_helper(os.str());
    auto add = [&sum](int x) { sum += x; };
    add(cfg::twice(std::vector<int>{1, 2}));
    add(static_cast<int>(cfg::twice(main_words).size()));
    add(cfg::parse(std::string("7")) + cfg::parse(std::wstring(L"8")));
    return (sum + less + static_cast<int>(loaded.size())) > 0 ? 0 : 1;
}
/* SPDX-License-Identifier: MIT */
