/* The C interface between heist-bench (Rust) and its C++ peers (oneTBB, OpenMP).
 *
 * Each peer exports one function, heist_<peer>_api(), returning a table of the kernels
 * it runs. The Rust side (src/peers/ffi.rs) mirrors these structs field for field and
 * checks HEIST_PEER_ABI and the table's size before using one.
 *
 * The kernels' leaf work (a SHA-1 child state, a block product, a partition, an
 * element of a loop) is the Rust kernel's own code, passed in as function pointers, so
 * that a peer's row differs from heist's only by its runtime. The callbacks never
 * unwind. */
#ifndef HEIST_PEERS_H
#define HEIST_PEERS_H

#include <stddef.h>
#include <stdint.h>

#define HEIST_PEER_ABI 1

#ifdef __cplusplus
extern "C" {
#endif

/* nqueens: the legal columns of row `row` of `board` (18 bytes) on an n x n board. */
typedef struct heist_nqueens {
    uint32_t (*legal)(uint32_t n, uint32_t row, const uint8_t *board);
} heist_nqueens;

/* uts: the tree (opaque), its root state, a node's child count, a child's state. */
typedef struct heist_uts {
    const void *tree;
    uint8_t root[20];
    uint32_t (*children)(const void *tree, const uint8_t *state, uint32_t depth);
    void (*child)(const uint8_t *parent, uint32_t i, uint8_t *out);
} heist_uts;

typedef struct heist_uts_counts {
    uint64_t nodes;
    uint64_t leaves;
    uint32_t max_depth;
} heist_uts_counts;

/* matmul: c += a b for n x n row-major matrices; `base` multiplies blocks of at most
 * `base_max` in every dimension (m x k times k x n, with row strides). */
typedef struct heist_matmul {
    size_t n;
    const double *a;
    const double *b;
    double *c;
    size_t base_max;
    void (*base)(const double *a, const double *b, double *c, size_t m, size_t k,
                 size_t n, size_t sa, size_t sb, size_t sc);
} heist_matmul;

/* quicksort: `partition` returns the pivot's final index; `insertion` sorts at most
 * `cutoff` elements. */
typedef struct heist_sort {
    size_t cutoff;
    size_t (*partition)(uint64_t *v, size_t n);
    void (*insertion)(uint64_t *v, size_t n);
} heist_sort;

/* sparselu: block (ii, jj) of an nb x nb block matrix, and the four block kernels. */
typedef struct heist_sparselu {
    const void *m;
    size_t nb;
    int (*exists)(const void *m, size_t ii, size_t jj);
    void (*lu0)(const void *m, size_t kk);
    void (*fwd)(const void *m, size_t kk, size_t jj);
    void (*bdiv)(const void *m, size_t kk, size_t ii);
    void (*bmod)(const void *m, size_t kk, size_t ii, size_t jj);
} heist_sparselu;

/* A loop body: element i of a loop (a closure of the Rust kernel). */
typedef struct heist_u64_fn {
    const void *ctx;
    uint64_t (*call)(const void *ctx, uint64_t i);
} heist_u64_fn;

typedef struct heist_f64_fn {
    const void *ctx;
    double (*call)(const void *ctx, uint64_t i);
} heist_f64_fn;

typedef struct heist_peer_api {
    uint32_t abi;  /* HEIST_PEER_ABI */
    uint32_t size; /* sizeof(heist_peer_api) */
    /* The runtime and compiler, e.g. "oneTBB 2021.8.0 (interface 12080), clang 14.0.6". */
    const char *(*version)(void);
    /* A runtime of `workers` threads; `guided` picks schedule(guided) over
     * schedule(dynamic) for OpenMP's loops. NULL if it cannot start. */
    void *(*start)(uint32_t workers, int guided);
    void (*stop)(void *rt);
    uint64_t (*fib)(void *rt, uint32_t n);
    uint64_t (*nqueens)(void *rt, uint32_t n, const heist_nqueens *k);
    heist_uts_counts (*uts)(void *rt, const heist_uts *k);
    void (*matmul)(void *rt, const heist_matmul *k);
    void (*quicksort)(void *rt, uint64_t *v, size_t n, const heist_sort *k);
    void (*sparselu)(void *rt, const heist_sparselu *k);
    /* spc: one task spawns n tasks, task i calls f(i); returns when all have run. */
    void (*spawn_all)(void *rt, uint64_t n, heist_u64_fn f);
    /* The wrapping sum of f(i) over 0..n: the loop kernels. */
    uint64_t (*sum)(void *rt, uint64_t n, heist_u64_fn f);
    /* step: the wrapping sum of spin(i*100 >= n*97 ? dear : cheap) ^ i over 0..n. */
    uint64_t (*step)(void *rt, uint64_t n, uint64_t cheap, uint64_t dear,
                     uint64_t (*spin)(uint64_t iters));
    /* out[i] = f(i) for i in 0..n: matvec-tri. */
    void (*fill)(void *rt, uint64_t n, double *out, heist_f64_fn f);
    /* Reductions over tasks (Blaze-Tasks' kernels). */
    uint64_t (*reduce_fib)(void *rt, uint32_t n);
    /* pi by adaptive quadrature: the area (pi / 4) and the segment count. */
    void (*pi)(void *rt, double tol, double *area, uint64_t *segments);
    double (*dot)(void *rt, const double *x, const double *y, size_t n, size_t grain);
    /* par-sort: sort v in place with the runtime's own parallel sort; NULL if none. */
    void (*par_sort)(void *rt, uint64_t *v, size_t n);
} heist_peer_api;

const heist_peer_api *heist_tbb_api(void);
const heist_peer_api *heist_omp_api(void);

#ifdef __cplusplus
}
#endif

#endif
