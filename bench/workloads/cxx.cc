/*
 * cxx: a C++ program of the kind the patchable build is for (classes, templates, virtual
 * calls, the standard library), sized by its one argument (rounds, default 100; a round is
 * ~1.9 M calls under gcc's -finstrument-functions, which also sees the inlined ones). Each round:
 * - evaluates random expression trees (an abstract Expr with virtual eval/size, owned by
 *   unique_ptr) over many variable bindings: virtual calls and recursion;
 * - runs Dijkstra on a generated grid with a binary heap template of our own (a class
 *   template with a comparator parameter): small inlined member functions;
 * - counts generated words in an unordered_map<string, int> and sorts them with a lambda:
 *   the standard library's templates, instantiated here.
 * Deterministic (its own xorshift PRNG): every build and run makes the same calls. It prints
 * one checksum.
 */
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace
{

struct Rng {
    uint64_t s;
    explicit Rng(uint64_t seed) : s(seed)
    {
    }
    uint32_t next()
    {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        return static_cast<uint32_t>(s >> 11);
    }
    uint32_t below(uint32_t n)
    {
        return next() % n;
    }
};

// ---- expression trees: virtual calls ----
class Expr
{
  public:
    virtual ~Expr() = default;
    virtual long eval(const long *vars) const = 0;
    virtual int size() const = 0;
};

class Const final : public Expr
{
    long v_;

  public:
    explicit Const(long v) : v_(v)
    {
    }
    long eval(const long *) const override
    {
        return v_;
    }
    int size() const override
    {
        return 1;
    }
};

class Var final : public Expr
{
    int i_;

  public:
    explicit Var(int i) : i_(i)
    {
    }
    long eval(const long *vars) const override
    {
        return vars[i_];
    }
    int size() const override
    {
        return 1;
    }
};

template <class Op> class Binary final : public Expr
{
    std::unique_ptr<Expr> l_, r_;

  public:
    Binary(std::unique_ptr<Expr> l, std::unique_ptr<Expr> r) : l_(std::move(l)), r_(std::move(r))
    {
    }
    long eval(const long *vars) const override
    {
        return Op::apply(l_->eval(vars), r_->eval(vars));
    }
    int size() const override
    {
        return 1 + l_->size() + r_->size();
    }
};

struct Add {
    static long apply(long a, long b)
    {
        return a + b;
    }
};
struct Sub {
    static long apply(long a, long b)
    {
        return a - b;
    }
};
struct Mul {
    static long apply(long a, long b)
    {
        return (a * b) % 1000003;
    }
};
struct Min {
    static long apply(long a, long b)
    {
        return a < b ? a : b;
    }
};

std::unique_ptr<Expr> make_expr(Rng &rng, int depth)
{
    if (depth == 0 || rng.below(8) == 0) {
        if (rng.below(2))
            return std::make_unique<Const>(static_cast<long>(rng.below(100)));
        return std::make_unique<Var>(static_cast<int>(rng.below(4)));
    }
    auto l = make_expr(rng, depth - 1);
    auto r = make_expr(rng, depth - 1);
    switch (rng.below(4)) {
    case 0:
        return std::make_unique<Binary<Add>>(std::move(l), std::move(r));
    case 1:
        return std::make_unique<Binary<Sub>>(std::move(l), std::move(r));
    case 2:
        return std::make_unique<Binary<Mul>>(std::move(l), std::move(r));
    default:
        return std::make_unique<Binary<Min>>(std::move(l), std::move(r));
    }
}

long exprs(Rng &rng)
{
    long sum = 0;
    for (int t = 0; t < 2; t++) {
        std::unique_ptr<Expr> e = make_expr(rng, 9);
        sum += e->size();
        long vars[4];
        for (int b = 0; b < 200; b++) {
            for (long &v : vars)
                v = rng.below(1000);
            sum += e->eval(vars);
        }
    }
    return sum;
}

// ---- a heap template and Dijkstra ----
template <class T, class Less> class Heap
{
    std::vector<T> a_;
    Less less_;

    void up(size_t i)
    {
        while (i > 0) {
            size_t p = (i - 1) / 2;
            if (!less_(a_[i], a_[p]))
                break;
            std::swap(a_[i], a_[p]);
            i = p;
        }
    }
    void down(size_t i)
    {
        for (;;) {
            size_t l = 2 * i + 1, m = i;
            if (l < a_.size() && less_(a_[l], a_[m]))
                m = l;
            if (l + 1 < a_.size() && less_(a_[l + 1], a_[m]))
                m = l + 1;
            if (m == i)
                return;
            std::swap(a_[i], a_[m]);
            i = m;
        }
    }

  public:
    bool empty() const
    {
        return a_.empty();
    }
    void push(T v)
    {
        a_.push_back(v);
        up(a_.size() - 1);
    }
    T pop()
    {
        T top = a_.front();
        a_.front() = a_.back();
        a_.pop_back();
        if (!a_.empty())
            down(0);
        return top;
    }
};

struct ByDist {
    bool operator()(const std::pair<long, int> &a, const std::pair<long, int> &b) const
    {
        return a.first < b.first;
    }
};

class Grid
{
    int w_, h_;
    std::vector<int> cost_;

  public:
    Grid(int w, int h, Rng &rng) : w_(w), h_(h), cost_(static_cast<size_t>(w) * h)
    {
        for (int &c : cost_)
            c = 1 + static_cast<int>(rng.below(9));
    }
    int cells() const
    {
        return w_ * h_;
    }
    template <class F> void neighbours(int v, F f) const
    {
        int x = v % w_, y = v / w_;
        if (x > 0)
            f(v - 1, cost_[v - 1]);
        if (x + 1 < w_)
            f(v + 1, cost_[v + 1]);
        if (y > 0)
            f(v - w_, cost_[v - w_]);
        if (y + 1 < h_)
            f(v + w_, cost_[v + w_]);
    }
};

long shortest(const Grid &g)
{
    std::vector<long> dist(g.cells(), -1);
    Heap<std::pair<long, int>, ByDist> heap;
    heap.push({0, 0});
    while (!heap.empty()) {
        std::pair<long, int> top = heap.pop();
        long d = top.first;
        int v = top.second;
        if (dist[v] >= 0)
            continue;
        dist[v] = d;
        g.neighbours(v, [&](int u, int c) {
            if (dist[u] < 0)
                heap.push({d + c, u});
        });
    }
    return dist.back();
}

// ---- words: the standard library's templates ----
std::string word(Rng &rng)
{
    static const char syll[][4] = {"ka", "lo", "mi", "nu", "pe", "ri", "sa", "to"};
    std::string w;
    int n = 1 + static_cast<int>(rng.below(3));
    for (int i = 0; i < n; i++)
        w += syll[rng.below(8)];
    return w;
}

long words(Rng &rng)
{
    std::unordered_map<std::string, int> count;
    for (int i = 0; i < 2000; i++)
        ++count[word(rng)];
    std::vector<std::pair<std::string, int>> v(count.begin(), count.end());
    std::sort(v.begin(), v.end(), [](const auto &a, const auto &b) {
        return a.second != b.second ? a.second > b.second : a.first < b.first;
    });
    return v.front().second * 31 + static_cast<long>(v.size());
}

} // namespace

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? std::atoi(argv[1]) : 100;
    Rng rng(0x5eed);
    long sum = 0;
    for (int r = 0; r < rounds; r++) {
        sum += exprs(rng);
        Grid g(38, 38, rng);
        sum += shortest(g);
        sum += words(rng);
    }
    std::printf("cxx(%d) = %ld\n", rounds, sum);
    return 0;
}
/* SPDX-License-Identifier: MIT */
