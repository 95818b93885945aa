// The OpenMP peer (LLVM's libomp with clang, or GCC's libgomp with g++): join is a task
// and taskwait, spc a task per consumer, the loops `parallel for` with schedule(dynamic)
// or schedule(guided) and a reduction clause, the reductions over tasks OpenMP 5's task
// reductions (taskgroup task_reduction, task in_reduction). Each kernel is one parallel
// region of `workers` threads; the recursive ones start in a `single`.
#include "kernels.hpp"

#include <omp.h>

#include <cstdio>
#include <new>

#ifndef HEIST_OMP_API
#define HEIST_OMP_API heist_omp_api
#endif

#pragma omp declare reduction(+ : heist::PiSum : omp_out = omp_out + omp_in)                   \
    initializer(omp_priv = heist::PiSum{})

namespace {

struct Omp {
    int workers;
    bool guided;

    static void *start(uint32_t workers, bool guided) {
        return new (std::nothrow) Omp{(int)workers, guided};
    }

    static const char *version() {
        static char v[160];
#if defined(__clang__)
        const char *rt = "libomp";
#else
        const char *rt = "libgomp";
#endif
        std::snprintf(v, sizeof v, "%s (OpenMP %d), %s", rt, _OPENMP, __VERSION__);
        return v;
    }

    static constexpr void (*par_sort)(void *, uint64_t *, size_t) = nullptr;

    template <class F> void run(const F &f) const {
#pragma omp parallel num_threads(workers)
#pragma omp single
        f();
    }

    template <class A, class B> void join(const A &a, const B &b) const {
        const B *pb = &b;
#pragma omp task firstprivate(pb)
        (*pb)();
        a();
#pragma omp taskwait
    }

    template <class F> void spawn_all(uint64_t n, const F &f) const {
        const F *pf = &f;
        run([&] {
            for (uint64_t i = 0; i < n; i++) {
#pragma omp task firstprivate(pf, i)
                (*pf)(i);
            }
#pragma omp taskwait
        });
    }

    template <class F> uint64_t sum(uint64_t n, const F &f) const {
        uint64_t s = 0;
        if (guided) {
#pragma omp parallel for num_threads(workers) schedule(guided) reduction(+ : s)
            for (uint64_t i = 0; i < n; i++) s += f(i);
        } else {
#pragma omp parallel for num_threads(workers) schedule(dynamic) reduction(+ : s)
            for (uint64_t i = 0; i < n; i++) s += f(i);
        }
        return s;
    }

    template <class F> void each(uint64_t n, const F &f) const {
        if (guided) {
#pragma omp parallel for num_threads(workers) schedule(guided)
            for (uint64_t i = 0; i < n; i++) f(i);
        } else {
#pragma omp parallel for num_threads(workers) schedule(dynamic)
            for (uint64_t i = 0; i < n; i++) f(i);
        }
    }

    // One task of a reduction: its partial result goes into this thread's copy of the
    // taskgroup's reduction variable; its pushes become tasks of the same reduction.
    template <class Out, class Task, class Expand> struct Node {
        const Expand *expand;
        static void go(Task t, const Expand *e, Out &acc) {
            Out r = (*e)(t, [e, &acc](Task c) {
                Out &a = acc;
#pragma omp task firstprivate(c, e) in_reduction(+ : a)
                go(c, e, a);
            });
            acc = acc + r;
        }
    };

    template <class Out, class Task, class Expand>
    Out reduce(Task root, const Expand &expand) const {
        Out acc{};
        const Expand *e = &expand;
        run([&] {
#pragma omp taskgroup task_reduction(+ : acc)
            {
#pragma omp task firstprivate(root, e) in_reduction(+ : acc)
                Node<Out, Task, Expand>::go(root, e, acc);
            }
        });
        return acc;
    }
};

} // namespace

extern "C" const heist_peer_api *HEIST_OMP_API(void) { return heist::Api<Omp>::table(); }
