// fnprof-c++'s test program: the standard library's templates (vector, map, sort) must stay
// out of the profile; the program's own functions are counted (main 1, build 1, score 1000,
// histogram 1).
#include <algorithm>
#include <cstdio>
#include <map>
#include <vector>

volatile int sink;

__attribute__((noinline)) int score(int x)
{
    sink = x;
    return (x * 7919) % 1000;
}

__attribute__((noinline)) std::vector<int> build(int n)
{
    std::vector<int> v;
    for (int i = 0; i < n; i++)
        v.push_back(score(i));
    return v;
}

__attribute__((noinline)) std::map<int, int> histogram(const std::vector<int> &v)
{
    std::map<int, int> m;
    for (int x : v)
        m[x % 10]++;
    return m;
}

int main()
{
    std::vector<int> v = build(1000);
    std::sort(v.begin(), v.end());
    std::map<int, int> m = histogram(v);
    std::printf("%d %d %zu\n", v.front(), v.back(), m.size());
    return 0;
}
/* SPDX-License-Identifier: MIT */
