#include <ostream>

#include "names.h"

// Static initialisers of this file.
static std::map<std::string, int> index_weights = {{"alpha", 1}, {"beta", 2}};

namespace cfg
{
namespace detail
{
bool node::operator<(const node &o) const
{
    return key < o.key;
}
int node::operator()(int x) const
{
    return x * static_cast<int>(values.size());
}
std::ostream &operator<<(std::ostream &os, const node &n)
{
    return os << n.key;
}
std::map<std::string, std::vector<int>> index(const std::vector<node> &nodes)
{
    std::map<std::string, std::vector<int>> m;
    for (const node &n : nodes)
        m[n.key] = n.values;
    return m;
}
} // namespace detail
int parse(const std::string &s)
{
    return static_cast<int>(s.size()) + index_weights.at("alpha");
}
int parse(const std::wstring &s)
{
    return static_cast<int>(s.size());
}
} // namespace cfg
/* SPDX-License-Identifier: MIT */
