//! The same code, compiled once against rayon and once against heist with only the `use`
//! lines changed, gives the same results for every method heist offers under rayon's
//! name.

mod on_rayon {
    use rayon as krate;
    use rayon::iter::{self, Either};
    use rayon::prelude::*;
    include!("par_rayon/cases.rs");
}

mod on_heist {
    use heist as krate;
    use heist::iter::{self, Either};
    use heist::prelude::*;
    include!("par_rayon/cases.rs");
}

#[test]
fn heist_gives_rayons_results() {
    let theirs = on_rayon::all();
    let ours = on_heist::all();
    assert_eq!(theirs.len(), ours.len());
    assert_same(&theirs, &ours, "the global pool");
}

#[test]
fn on_a_heist_pool_too() {
    let theirs = on_rayon::all();
    for s in [heist::Scheduler::Lace, heist::Scheduler::Relay] {
        let pool = heist::Pool::builder()
            .workers(3)
            .scheduler(s)
            .build()
            .unwrap();
        let ours = pool.run(|_| on_heist::all());
        assert_same(&theirs, &ours, &format!("{s:?}"));
    }
}

/// Fails with every case whose results differ.
fn assert_same(theirs: &[(&str, String)], ours: &[(&str, String)], on: &str) {
    let differ: Vec<String> = theirs
        .iter()
        .zip(ours)
        .filter(|((_, r), (_, h))| r != h)
        .map(|((name, r), (_, h))| format!("{name}:\n  rayon: {r:.300}\n  heist: {h:.300}"))
        .collect();
    assert!(differ.is_empty(), "on {on}:\n{}", differ.join("\n"));
}

#[test]
fn free_sources() {
    use heist::prelude::*;
    use rayon::prelude::ParallelIterator as _;
    assert_eq!(
        heist::iter::repeat_n(3u8, 1000).map(u64::from).sum::<u64>(),
        rayon::iter::repeat_n(3u8, 1000).map(u64::from).sum::<u64>()
    );
    assert_eq!(
        heist::iter::once(5)
            .chain(heist::iter::empty())
            .collect::<Vec<i32>>(),
        vec![5]
    );
}

/// A panic in either part of a chain, indexed or not, reaches the caller, and the pool
/// stays usable.
#[test]
fn a_panic_in_a_chain_reaches_the_caller() {
    use heist::prelude::*;
    use std::panic::{catch_unwind, AssertUnwindSafe};
    let pool = heist::Pool::builder().workers(3).build().unwrap();
    let boom = |x: &u32| assert!(*x != 4321, "boom");
    let runs: [&(dyn Fn() -> usize + Sync); 3] = [
        &|| {
            (0..5000u32)
                .into_par_iter()
                .chain(0..5000)
                .inspect(boom)
                .count()
        },
        &|| {
            (0..5000u32)
                .into_par_iter()
                .filter(|_| true)
                .chain(0..5000)
                .inspect(boom)
                .count()
        },
        &|| {
            (0..9u32)
                .into_par_iter()
                .chain((0..5000u32).into_par_iter().filter(|_| true))
                .inspect(boom)
                .count()
        },
    ];
    for run in runs {
        let r = catch_unwind(AssertUnwindSafe(|| pool.run(|_| run())));
        let msg = r.expect_err("the panic reaches the caller");
        assert_eq!(msg.downcast_ref::<&str>(), Some(&"boom"));
        let r = catch_unwind(AssertUnwindSafe(run));
        assert!(r.is_err(), "and from outside the pool");
    }
    assert_eq!(
        pool.run(|_| (0..100u32).into_par_iter().chain(0..100).count()),
        200
    );
}
