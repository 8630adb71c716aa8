// The C++ program of the --short-names test (tests/views/check_short_names.py): the
// standard library's spelled-out templates in parameter lists, nested namespaces, a lambda,
// operators, and three translation units each with static initialisers.
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <unordered_map>
#include <vector>

namespace cfg
{
namespace detail
{
struct node {
    std::string key;
    std::vector<int> values;
    bool operator<(const node &o) const;
    int operator()(int x) const;
};
std::ostream &operator<<(std::ostream &os, const node &n);
std::map<std::string, std::vector<int>> index(const std::vector<node> &nodes);
} // namespace detail
std::unordered_map<std::string, std::shared_ptr<detail::node>>
load(const std::map<std::string, std::vector<int>> &m);
int total(const std::vector<std::string> &keys, const std::wstring &tag);
template <typename T> T twice(const std::vector<T> &v);
int parse(const std::string &s);
int parse(const std::wstring &s);
} // namespace cfg
/* SPDX-License-Identifier: MIT */
