// std::vector, std::sort and std::string: many functions from system headers that a
// profile of this program should not list.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

__attribute__((noinline)) int weight(const std::string &s)
{
    return static_cast<int>(s.size()) * 3 + s[0];
}

__attribute__((noinline)) std::vector<int> weigh_all(const std::vector<std::string> &words)
{
    std::vector<int> out;
    for (const auto &w : words)
        out.push_back(weight(w));
    std::sort(out.begin(), out.end());
    return out;
}

int main()
{
    std::vector<std::string> words = {"delta", "alpha", "echo", "bravo", "charlie"};
    std::vector<int> w = weigh_all(words);
    std::printf("%d %d\n", w.front(), w.back());
    return 0;
}
/* SPDX-License-Identifier: MIT */
