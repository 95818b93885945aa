//! The statistics of a set of timed runs: median, minimum, maximum and a
//! distribution-free confidence interval of the median, and the scaled time format the
//! tables use.
//!
//! The interval is the one from order statistics (no assumption on the distribution of
//! the times, which on a shared machine has a long right tail): with `n` sorted samples,
//! `[x_k, x_{n+1-k}]` covers the true median with probability `1 − 2·P(B ≤ k−1)`, where
//! `B ~ Binomial(n, 1/2)`. The widest such interval, `[min, max]`, reaches 95 % only from
//! 6 samples on; with fewer the interval is `None`, and the tables fall back on min–max.

use serde::Serialize;

/// The confidence level of [`Summary::ci`].
pub const CI_LEVEL: f64 = 0.95;

/// Median, minimum, maximum and the median's confidence interval of a set of times, in
/// seconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Summary {
    /// How many samples.
    pub n: usize,
    /// The median (the mean of the two middle values for an even count).
    pub median: f64,
    /// The fastest time.
    pub min: f64,
    /// The slowest time.
    pub max: f64,
    /// The [`CI_LEVEL`] interval of the median, `None` below 6 samples.
    pub ci: Option<(f64, f64)>,
}

impl Summary {
    /// Summarises `times`; `None` when it is empty.
    pub fn of(times: &[f64]) -> Option<Summary> {
        let mut v = times.to_vec();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = match n {
            0 => return None,
            _ if n % 2 == 1 => v[n / 2],
            _ => (v[n / 2 - 1] + v[n / 2]) / 2.0,
        };
        let ci = median_ci_rank(n, CI_LEVEL).map(|k| (v[k - 1], v[n - k]));
        Some(Summary {
            n,
            median,
            min: v[0],
            max: v[n - 1],
            ci,
        })
    }

    /// The half-width of the interval (or of min–max without one) relative to the median:
    /// the `±` column of the tables.
    pub fn spread(&self) -> f64 {
        let (lo, hi) = self.ci.unwrap_or((self.min, self.max));
        (self.median - lo).max(hi - self.median) / self.median
    }
}

/// The largest `k` (1-based) such that `[x_k, x_{n+1−k}]` of `n` sorted samples covers
/// the median with probability at least `level`; `None` if not even `[min, max]` does.
pub fn median_ci_rank(n: usize, level: f64) -> Option<usize> {
    // P(B ≤ j) for B ~ Binomial(n, 1/2), accumulated in log space so large n stays exact
    // enough.
    let ln_half_n = n as f64 * 0.5f64.ln();
    let mut ln_choose = 0.0f64; // ln C(n, j)
    let mut cdf = 0.0;
    let mut best = None;
    for j in 0..n / 2 {
        if j > 0 {
            ln_choose += ((n - j + 1) as f64).ln() - (j as f64).ln();
        }
        cdf += (ln_choose + ln_half_n).exp();
        // k = j + 1: the interval misses the median when at most j samples fall on one side.
        if 1.0 - 2.0 * cdf >= level {
            best = Some(j + 1);
        } else {
            break;
        }
    }
    best
}

/// Formats seconds with four significant digits in ns, µs, ms or s (`-` for none).
pub fn fmt_time(s: Option<f64>) -> String {
    let Some(v) = s.filter(|v| v.is_finite() && *v > 0.0) else {
        return match s {
            Some(v) => format!("{v} s"),
            None => "-".into(),
        };
    };
    let (x, unit) = match v {
        v if v < 1e-6 => (v * 1e9, "ns"),
        v if v < 1e-3 => (v * 1e6, "µs"),
        v if v < 1.0 => (v * 1e3, "ms"),
        v => (v, "s"),
    };
    let decimals = (3 - x.log10().floor() as i32).clamp(0, 3) as usize;
    format!("{x:.decimals$} {unit}")
}

/// Formats a ratio as `1.23x` (`-` for none).
pub fn fmt_ratio(r: Option<f64>) -> String {
    r.map_or_else(|| "-".into(), |r| format!("{r:.2}x"))
}

/// Formats a relative spread as `±1.2 %` (`-` for none).
pub fn fmt_spread(r: Option<f64>) -> String {
    r.map_or_else(|| "-".into(), |r| format!("±{:.1} %", 100.0 * r))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_min_max_of_odd_even_empty() {
        let s = Summary::of(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!(
            (s.n, s.median, s.min, s.max, s.ci),
            (3, 2.0, 1.0, 3.0, None)
        );
        let s = Summary::of(&[4.0, 1.0, 3.0, 2.0]).unwrap();
        assert_eq!((s.median, s.min, s.max), (2.5, 1.0, 4.0));
        assert_eq!(Summary::of(&[]), None);
    }

    #[test]
    fn ci_ranks_match_the_binomial_tables() {
        // Coverage of [x_k, x_(n+1-k)]: n = 5, k = 1: 1 - 2/32 = 93.75 % < 95 %;
        // n = 6, k = 1: 1 - 2/64 = 96.9 %; n = 9, k = 2: 1 - 2·10/512 = 96.1 %;
        // n = 9, k = 3: 1 - 2·46/512 = 82 %; n = 20, k = 6: 95.9 %, k = 7: 88.5 %.
        assert_eq!(median_ci_rank(3, 0.95), None);
        assert_eq!(median_ci_rank(5, 0.95), None);
        assert_eq!(median_ci_rank(5, 0.90), Some(1));
        assert_eq!(median_ci_rank(6, 0.95), Some(1));
        assert_eq!(median_ci_rank(9, 0.95), Some(2));
        assert_eq!(median_ci_rank(20, 0.95), Some(6));
        assert_eq!(median_ci_rank(1, 0.5), None);
    }

    #[test]
    fn ci_and_spread_use_the_order_statistics() {
        let times: Vec<f64> = (1..=9).map(f64::from).collect();
        let s = Summary::of(&times).unwrap();
        assert_eq!(s.ci, Some((2.0, 8.0)));
        assert!((s.spread() - 0.6).abs() < 1e-12, "{}", s.spread());
        let s = Summary::of(&[1.0, 2.0, 4.0]).unwrap();
        assert_eq!(s.spread(), 1.0, "min–max without an interval");
    }

    #[test]
    fn times_are_scaled() {
        assert_eq!(fmt_time(Some(0.051234)), "51.23 ms");
        assert_eq!(fmt_time(Some(1.23456)), "1.235 s");
        assert_eq!(fmt_time(Some(123.456)), "123.5 s");
        assert_eq!(fmt_time(Some(0.000_015_42)), "15.42 µs");
        assert_eq!(fmt_time(Some(4.2e-8)), "42.00 ns");
        assert_eq!(fmt_time(Some(0.0)), "0 s");
        assert_eq!(fmt_time(None), "-");
        assert_eq!(fmt_ratio(Some(1.5)), "1.50x");
        assert_eq!(fmt_ratio(None), "-");
        assert_eq!(fmt_spread(Some(0.0123)), "±1.2 %");
    }
}
