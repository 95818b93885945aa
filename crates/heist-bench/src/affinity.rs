//! Confining a run to as many CPUs as it has workers. With fewer workers than CPUs the
//! scheduler would otherwise place the `seq` run (on the harness thread) and each pool's
//! workers on different CPUs, and on a shared machine those differ in speed: one-worker
//! runs of fib 36 gave 1.3× to 2.5× seq from process to process that way, and within 5 %
//! of each other when confined to one CPU.

/// Confines the calling thread, and every thread it starts from now on, to the first
/// `workers` CPUs it may run on, if it may run on more. Returns the CPUs chosen, or `None`
/// if nothing was changed (enough CPUs already, or no support on this platform). Pinning
/// itself is the library's ([`heist::affinity`]), which `--pin` also uses for rayon.
pub fn confine(workers: usize) -> Option<Vec<usize>> {
    let cpus = heist::affinity::allowed_cpus();
    if workers == 0 || cpus.len() <= workers {
        return None;
    }
    let chosen = cpus[..workers].to_vec();
    heist::affinity::confine_to(&chosen).then_some(chosen)
}

#[cfg(test)]
mod tests {
    #[test]
    fn confining_to_all_cpus_changes_nothing() {
        assert_eq!(super::confine(usize::MAX), None);
        assert_eq!(super::confine(0), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_thread_confined_to_one_cpu_runs_there() {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let t = std::thread::spawn(move || {
            let chosen = super::confine(1);
            if cpus > 1 {
                let chosen = chosen.expect("more CPUs than one worker");
                assert_eq!(chosen.len(), 1);
                // A thread started now inherits the mask.
                let inner = std::thread::spawn(|| super::confine(1)).join().unwrap();
                assert_eq!(inner, None, "the child may already run on one CPU only");
            }
        });
        t.join().unwrap();
    }
}
