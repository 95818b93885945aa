// The C++ peers' kernels, each written once against a runtime policy P (tbb.cpp,
// omp.cpp), as the Rust kernels are written once against `Fork`. Each follows its Rust
// kernel's task structure (src/kernels/*.rs) and takes its leaf work from it (see
// peers.h); the answers go back to Rust, which checks them as it checks its own.
//
// A policy provides:
//   void join(a, b)             runs a() and b(), potentially in parallel
//   void run(f)                 runs f() inside the runtime (join's context)
//   void spawn_all(n, f)        one task spawns tasks f(0) .. f(n-1), then waits
//   uint64_t sum(n, f)          parallel loop: wrapping sum of f(i) over 0..n
//   void each(n, f)             parallel loop: f(i) for i in 0..n
//   Out reduce<Out>(root, e)    reduction over tasks: e(task, push) returns a partial
//                               result and hands subtasks to push; partials summed
#ifndef HEIST_KERNELS_HPP
#define HEIST_KERNELS_HPP

#include "peers.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace heist {

// ---- fib: binary recursion, no cut-off (src/kernels/fib.rs) -------------------------

template <class P> uint64_t fib(const P &p, uint32_t n) {
    if (n < 2) return n;
    uint64_t a, b;
    p.join([&] { a = fib(p, n - 1); }, [&] { b = fib(p, n - 2); });
    return a + b;
}

// ---- nqueens: a task per legal placement, by splitting the set (nqueens.rs) --------

constexpr size_t QUEENS_MAX = 18;
struct Board {
    uint8_t q[QUEENS_MAX];
};

template <class P>
uint64_t queens(const P &p, const heist_nqueens *k, uint32_t n, uint32_t row, Board a);

// The lower half of a set's members (by count), and the upper.
inline void split_set(uint32_t set, uint32_t &lo, uint32_t &hi) {
    uint32_t upper = set;
    for (int i = __builtin_popcount(set) / 2; i > 0; i--) upper &= upper - 1;
    lo = set ^ upper;
    hi = upper;
}

template <class P>
uint64_t place(const P &p, const heist_nqueens *k, uint32_t n, uint32_t row, Board a,
               uint32_t cols) {
    switch (__builtin_popcount(cols)) {
    case 0:
        return 0;
    case 1:
        a.q[row] = (uint8_t)__builtin_ctz(cols);
        return queens(p, k, n, row + 1, a);
    default: {
        uint32_t lo, hi;
        split_set(cols, lo, hi);
        uint64_t x, y;
        p.join([&] { x = place(p, k, n, row, a, lo); }, [&] { y = place(p, k, n, row, a, hi); });
        return x + y;
    }
    }
}

template <class P>
uint64_t queens(const P &p, const heist_nqueens *k, uint32_t n, uint32_t row, Board a) {
    if (row == n) return 1;
    return place(p, k, n, row, a, k->legal(n, row, a.q));
}

// ---- uts: count the nodes of the implicit tree, a join per split (uts.rs) ----------

inline heist_uts_counts merge(heist_uts_counts a, heist_uts_counts b) {
    return {a.nodes + b.nodes, a.leaves + b.leaves, std::max(a.max_depth, b.max_depth)};
}

template <class P>
heist_uts_counts visit(const P &p, const heist_uts *t, const uint8_t *state, uint32_t depth);

template <class P>
heist_uts_counts visit_children(const P &p, const heist_uts *t, const uint8_t *parent,
                                uint32_t depth, uint32_t lo, uint32_t hi) {
    if (hi - lo == 1) {
        uint8_t child[20];
        t->child(parent, lo, child);
        return visit(p, t, child, depth);
    }
    uint32_t mid = lo + (hi - lo) / 2;
    heist_uts_counts a, b;
    p.join([&] { a = visit_children(p, t, parent, depth, lo, mid); },
           [&] { b = visit_children(p, t, parent, depth, mid, hi); });
    return merge(a, b);
}

template <class P>
heist_uts_counts visit(const P &p, const heist_uts *t, const uint8_t *state, uint32_t depth) {
    uint32_t n = t->children(t->tree, state, depth);
    if (n == 0) return {1, 1, depth};
    heist_uts_counts c = visit_children(p, t, state, depth + 1, 0, n);
    c.nodes += 1;
    return c;
}

// ---- matmul: Cilk's recursive multiply, splitting the largest dimension (matmul.rs) -

struct View {
    const double *p;
    size_t rows, cols, stride;
};
struct ViewMut {
    double *p;
    size_t rows, cols, stride;
};

template <class V> void split_rows(V v, V &top, V &bottom) {
    size_t h = v.rows / 2;
    top = {v.p, h, v.cols, v.stride};
    bottom = {v.p + h * v.stride, v.rows - h, v.cols, v.stride};
}
template <class V> void split_cols(V v, V &left, V &right) {
    size_t h = v.cols / 2;
    left = {v.p, v.rows, h, v.stride};
    right = {v.p + h, v.rows, v.cols - h, v.stride};
}

template <class P> void matmul(const P &p, const heist_matmul *k, View a, View b, ViewMut c) {
    size_t m = a.rows, kk = a.cols, n = b.cols, base = k->base_max;
    if (m <= base && kk <= base && n <= base) {
        k->base(a.p, b.p, c.p, m, kk, n, a.stride, b.stride, c.stride);
    } else if (m >= kk && m >= n) {
        View a1, a2;
        ViewMut c1, c2;
        split_rows(a, a1, a2);
        split_rows(c, c1, c2);
        p.join([&] { matmul(p, k, a1, b, c1); }, [&] { matmul(p, k, a2, b, c2); });
    } else if (n >= kk) {
        View b1, b2;
        ViewMut c1, c2;
        split_cols(b, b1, b2);
        split_cols(c, c1, c2);
        p.join([&] { matmul(p, k, a, b1, c1); }, [&] { matmul(p, k, a, b2, c2); });
    } else {
        View a1, a2, b1, b2;
        split_cols(a, a1, a2);
        split_rows(b, b1, b2);
        matmul(p, k, a1, b1, c);
        matmul(p, k, a2, b2, c);
    }
}

// ---- quicksort: sequential partition, both sides joined (quicksort.rs) -------------

template <class P> void quicksort(const P &p, const heist_sort *k, uint64_t *v, size_t n) {
    if (n <= k->cutoff) {
        k->insertion(v, n);
        return;
    }
    size_t q = k->partition(v, n);
    p.join([&] { quicksort(p, k, v, q); }, [&] { quicksort(p, k, v + q + 1, n - q - 1); });
}

// ---- sparselu: per step lu0, then fwd/bdiv tasks, then bmod tasks (sparselu.rs) ----

struct LuTask {
    int op; // 0 fwd (kk, jj), 1 bdiv (kk, ii), 2 bmod (kk, ii, jj)
    size_t a, b;
};

template <class P>
void lu_tasks(const P &p, const heist_sparselu *k, size_t kk, const LuTask *t, size_t n) {
    if (n == 0) return;
    if (n == 1) {
        switch (t->op) {
        case 0: k->fwd(k->m, kk, t->a); break;
        case 1: k->bdiv(k->m, kk, t->a); break;
        default: k->bmod(k->m, kk, t->a, t->b); break;
        }
        return;
    }
    size_t h = n / 2;
    p.join([&] { lu_tasks(p, k, kk, t, h); }, [&] { lu_tasks(p, k, kk, t + h, n - h); });
}

// The tasks in the Rust kernel's order: the blocks of step kk in row-major order.
template <class P> void sparselu(const P &p, const heist_sparselu *k) {
    size_t nb = k->nb;
    std::vector<LuTask> tasks;
    for (size_t kk = 0; kk < nb; kk++) {
        k->lu0(k->m, kk);
        tasks.clear();
        for (size_t jj = kk + 1; jj < nb; jj++)
            if (k->exists(k->m, kk, jj)) tasks.push_back({0, jj, 0});
        for (size_t ii = kk + 1; ii < nb; ii++)
            if (k->exists(k->m, ii, kk)) tasks.push_back({1, ii, 0});
        lu_tasks(p, k, kk, tasks.data(), tasks.size());
        tasks.clear();
        for (size_t ii = kk + 1; ii < nb; ii++) {
            if (!k->exists(k->m, ii, kk)) continue;
            for (size_t jj = kk + 1; jj < nb; jj++)
                if (k->exists(k->m, kk, jj)) tasks.push_back({2, ii, jj});
        }
        lu_tasks(p, k, kk, tasks.data(), tasks.size());
    }
}

// ---- the reductions over tasks (reduce_fib.rs, pi.rs, dot.rs) ----------------------

// reduce-fib: push n - 2, go on as n - 1, down to a leaf worth 1.
struct FibExpand {
    template <class Push> uint64_t operator()(uint32_t n, const Push &push) const {
        if (n < 2) return n;
        for (; n > 2; n--) push(n - 2);
        return 1;
    }
};

// pi: adaptive trapezoids of sqrt(1 - x^2) on [0, 1]. Built with -ffp-contract=off, so
// every segment is split exactly as in Rust and the segment counts match.
struct Segment {
    double low, step, area;
};
struct PiSum {
    double area = 0;
    uint64_t segments = 0;
    PiSum operator+(const PiSum &o) const { return {area + o.area, segments + o.segments}; }
};

inline double circle(double x) { return std::sqrt(std::max(1.0 - x * x, 0.0)); }
inline double trapezoid(double low, double step) {
    return step / 2.0 * (circle(low) + circle(low + step));
}

struct PiExpand {
    double tol;
    template <class Push> PiSum operator()(Segment s, const Push &push) const {
        for (;;) {
            double half = s.step / 2.0;
            double a1 = trapezoid(s.low, half), a2 = trapezoid(s.low + half, half);
            if (!(std::fabs(s.area - (a1 + a2)) >= 3.0 * s.step * tol)) break;
            push(Segment{s.low, half, a1});
            s = Segment{s.low + half, half, a2};
        }
        return {s.area, 1};
    }
};

// dot: halve a range, pushing the upper half, down to `grain` pairs.
struct Range {
    size_t lo, hi;
};
struct DotExpand {
    const double *x, *y;
    size_t grain;
    template <class Push> double operator()(Range r, const Push &push) const {
        while (r.hi - r.lo > grain) {
            size_t mid = r.lo + (r.hi - r.lo) / 2;
            push(Range{mid, r.hi});
            r.hi = mid;
        }
        double s = 0;
        for (size_t i = r.lo; i < r.hi; i++) s += x[i] * y[i];
        return s;
    }
};

// ---- the table of one peer ---------------------------------------------------------

// The kernels of peers.h on policy P, whose `start(workers, guided)` makes a runtime.
template <class P> struct Api {
    static P &rt(void *r) { return *static_cast<P *>(r); }

    static void *start(uint32_t workers, int guided) { return P::start(workers, guided != 0); }
    static void stop(void *r) { delete static_cast<P *>(r); }

    static uint64_t fib(void *r, uint32_t n) {
        uint64_t out;
        rt(r).run([&] { out = heist::fib(rt(r), n); });
        return out;
    }
    static uint64_t nqueens(void *r, uint32_t n, const heist_nqueens *k) {
        uint64_t out;
        rt(r).run([&] { out = queens(rt(r), k, n, 0, Board{}); });
        return out;
    }
    static heist_uts_counts uts(void *r, const heist_uts *k) {
        heist_uts_counts out;
        rt(r).run([&] { out = visit(rt(r), k, k->root, 0); });
        return out;
    }
    static void matmul(void *r, const heist_matmul *k) {
        size_t n = k->n;
        rt(r).run([&] {
            heist::matmul(rt(r), k, View{k->a, n, n, n}, View{k->b, n, n, n},
                          ViewMut{k->c, n, n, n});
        });
    }
    static void quicksort(void *r, uint64_t *v, size_t n, const heist_sort *k) {
        rt(r).run([&] { heist::quicksort(rt(r), k, v, n); });
    }
    static void sparselu(void *r, const heist_sparselu *k) {
        rt(r).run([&] { heist::sparselu(rt(r), k); });
    }
    static void spawn_all(void *r, uint64_t n, heist_u64_fn f) {
        rt(r).spawn_all(n, [f](uint64_t i) { f.call(f.ctx, i); });
    }
    static uint64_t sum(void *r, uint64_t n, heist_u64_fn f) {
        return rt(r).sum(n, [f](uint64_t i) { return f.call(f.ctx, i); });
    }
    static uint64_t step(void *r, uint64_t n, uint64_t cheap, uint64_t dear,
                         uint64_t (*spin)(uint64_t)) {
        return rt(r).sum(n, [=](uint64_t i) { return spin(i * 100 >= n * 97 ? dear : cheap) ^ i; });
    }
    static void fill(void *r, uint64_t n, double *out, heist_f64_fn f) {
        rt(r).each(n, [=](uint64_t i) { out[i] = f.call(f.ctx, i); });
    }
    static uint64_t reduce_fib(void *r, uint32_t n) {
        return rt(r).template reduce<uint64_t>(n, FibExpand{});
    }
    static void pi(void *r, double tol, double *area, uint64_t *segments) {
        PiSum s = rt(r).template reduce<PiSum>(Segment{0.0, 1.0, trapezoid(0.0, 1.0)},
                                               PiExpand{tol});
        *area = s.area;
        *segments = s.segments;
    }
    static double dot(void *r, const double *x, const double *y, size_t n, size_t grain) {
        return rt(r).template reduce<double>(Range{0, n}, DotExpand{x, y, grain});
    }

    static const heist_peer_api *table() {
        static const heist_peer_api api = {
            HEIST_PEER_ABI, sizeof(heist_peer_api), P::version, start, stop, fib, nqueens, uts,
            matmul, quicksort, sparselu, spawn_all, sum, step, fill, reduce_fib, pi, dot,
            P::par_sort,
        };
        return &api;
    }
};

} // namespace heist

#endif
