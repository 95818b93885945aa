//! fib(n) by `Worker::join` with no cut-off, the tests' and the `fib` example's task tree
//! (the example includes this file by path).

/// fib(n), each call above the leaves one `join` of its two sub-calls.
pub fn fib(w: &heist::Worker, n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = w.join(move |w| fib(w, n - 1), move |w| fib(w, n - 2));
    a + b
}
