#include "names.h"

// Static initialisers of this file.
static std::unordered_map<std::string, int> load_seen = {{"gamma", 3}};

namespace cfg
{
std::unordered_map<std::string, std::shared_ptr<detail::node>>
load(const std::map<std::string, std::vector<int>> &m)
{
    std::unordered_map<std::string, std::shared_ptr<detail::node>> out;
    for (const auto &kv : m)
        out[kv.first] = std::make_shared<detail::node>(detail::node{kv.first, kv.second});
    return out;
}
int total(const std::vector<std::string> &keys, const std::wstring &tag)
{
    int t = static_cast<int>(tag.size()) + static_cast<int>(load_seen.size());
    auto count = [](const std::string &k) { return static_cast<int>(k.size()); };
    for (const std::string &k : keys)
        t += count(k);
    return t;
}
} // namespace cfg
/* SPDX-License-Identifier: MIT */
