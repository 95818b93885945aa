// The oneTBB peer: join is parallel_invoke, spc a task_group, the loops parallel_reduce
// and parallel_for (auto_partitioner), the reductions over tasks a task_group whose
// tasks fold into a combinable, par-sort parallel_sort. Everything runs in a
// task_arena of `workers` threads (the caller's included).
#include "kernels.hpp"

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/combinable.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/parallel_invoke.h>
#include <oneapi/tbb/parallel_reduce.h>
#include <oneapi/tbb/parallel_sort.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>
#include <oneapi/tbb/version.h>

#include <cstdio>
#include <new>

namespace {

struct Tbb {
    tbb::task_arena arena;

    explicit Tbb(int workers) : arena(workers) { arena.initialize(); }

    static void *start(uint32_t workers, bool) {
        // Process-wide, once: as many TBB threads as asked for (TBB's own default is the
        // core count), and stacks as large as the Rust runtimes' for the deep trees.
        static tbb::global_control threads(tbb::global_control::max_allowed_parallelism, 512);
        static tbb::global_control stacks(tbb::global_control::thread_stack_size, 256u << 20);
        return new (std::nothrow) Tbb((int)workers);
    }

    static const char *version() {
        static char v[160];
        std::snprintf(v, sizeof v, "oneTBB %s (runtime interface %d), %s", TBB_VERSION_STRING,
                      TBB_runtime_interface_version(), __VERSION__);
        return v;
    }

    static void par_sort(void *r, uint64_t *v, size_t n) {
        static_cast<Tbb *>(r)->arena.execute([&] { tbb::parallel_sort(v, v + n); });
    }

    template <class F> void run(const F &f) const {
        const_cast<tbb::task_arena &>(arena).execute(f);
    }

    template <class A, class B> void join(const A &a, const B &b) const {
        tbb::parallel_invoke(a, b);
    }

    template <class F> void spawn_all(uint64_t n, const F &f) const {
        run([&] {
            tbb::task_group g;
            for (uint64_t i = 0; i < n; i++) g.run([&f, i] { f(i); });
            g.wait();
        });
    }

    template <class F> uint64_t sum(uint64_t n, const F &f) const {
        uint64_t out;
        run([&] {
            out = tbb::parallel_reduce(
                tbb::blocked_range<uint64_t>(0, n), uint64_t(0),
                [&](const tbb::blocked_range<uint64_t> &r, uint64_t s) {
                    for (uint64_t i = r.begin(); i != r.end(); i++) s += f(i);
                    return s;
                },
                [](uint64_t a, uint64_t b) { return a + b; });
        });
        return out;
    }

    template <class F> void each(uint64_t n, const F &f) const {
        run([&] {
            tbb::parallel_for(tbb::blocked_range<uint64_t>(0, n),
                              [&](const tbb::blocked_range<uint64_t> &r) {
                                  for (uint64_t i = r.begin(); i != r.end(); i++) f(i);
                              });
        });
    }

    template <class Out, class Task, class Expand>
    Out reduce(Task root, const Expand &expand) const {
        Out out{};
        run([&] {
            tbb::combinable<Out> acc([] { return Out{}; });
            tbb::task_group g;
            struct Node {
                const Expand &expand;
                tbb::combinable<Out> &acc;
                tbb::task_group &g;
                void operator()(Task t) const {
                    Out r = expand(t, [this](Task c) { g.run([this, c] { (*this)(c); }); });
                    Out &mine = acc.local();
                    mine = mine + r;
                }
            } node{expand, acc, g};
            node(root);
            g.wait();
            out = acc.combine([](const Out &a, const Out &b) { return a + b; });
        });
        return out;
    }
};

} // namespace

extern "C" const heist_peer_api *heist_tbb_api(void) { return heist::Api<Tbb>::table(); }
