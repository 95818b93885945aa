//! pi: π by adaptive trapezoidal quadrature of 4·√(1−x²) on [0, 1] (Blaze-Tasks §2.1,
//! Fig. 7): as in Blaze, √(1−x²) is integrated and the area multiplied by 4. A segment
//! is halved while the two halves' estimate differs from its own by 3·step·tolerance or
//! more; the slope diverges at x = 1, so the work is very skewed.
//! A task pushes its left half and goes on with the right; a finished segment yields
//! its area and a count of one. The run is checked against the sequential run made when
//! the instance is built: the same segment count (the splitting of a segment does not
//! depend on the order) and |Δπ| ≤ 1e−9, and against π itself to the same bound.

use crate::bench::{Bench, Instance, Sizes};
use crate::fork::{self, Fork};
use crate::reduction::{self, Reduce};
use crate::runtime::{Runtime, RuntimeKind};
use std::hint::black_box;

/// The bound on |Δπ| against the sequential run and against π.
const PI_TOLERANCE: f64 = 1e-9;

/// The pi kernel of the catalogue.
pub struct Pi;

impl Bench for Pi {
    fn name(&self) -> &'static str {
        "pi"
    }

    fn about(&self) -> &'static str {
        "pi by adaptive quadrature of 4*sqrt(1-x^2) (Blaze), segments as tasks"
    }

    fn sizes(&self) -> Sizes {
        Sizes {
            test: "1e-10",
            small: "1e-14",
            quick: "1e-15",
            full: "1e-16",
        }
    }

    fn supports(&self, kind: RuntimeKind) -> bool {
        reduction::supports(kind, true)
    }

    fn instance(&self, size: &str) -> Result<Box<dyn Instance>, String> {
        let [tol] = crate::bench::parse_size("pi", size, [("tol", None)])?;
        if !(tol > 0.0 && tol < 1.0) {
            return Err(format!("pi: tolerance {tol} outside (0, 1)"));
        }
        let mut run = PiRun {
            tol,
            expected: (0.0, 0),
            result: None,
        };
        run.expected = run.join(fork::SEQ);
        Ok(Box::new(run))
    }
}

/// A segment `[low, low + step]` and its trapezoid estimate.
#[derive(Clone, Copy)]
struct Segment {
    low: f64,
    step: f64,
    area: f64,
}

fn circle(x: f64) -> f64 {
    (1.0 - x * x).max(0.0).sqrt()
}

fn trapezoid(low: f64, step: f64) -> f64 {
    step / 2.0 * (circle(low) + circle(low + step))
}

struct PiRun {
    tol: f64,
    /// The area (π/4) and the segment count of the sequential run.
    expected: (f64, u64),
    result: Option<(f64, u64)>,
}

impl PiRun {
    /// The halves of `s`, if it must be split.
    #[inline]
    fn split(&self, s: Segment) -> Option<(Segment, Segment)> {
        let half = s.step / 2.0;
        let a1 = trapezoid(s.low, half);
        let a2 = trapezoid(s.low + half, half);
        let dif = (s.area - (a1 + a2)).abs();
        (dif >= 3.0 * s.step * self.tol).then_some((
            Segment {
                low: s.low,
                step: half,
                area: a1,
            },
            Segment {
                low: s.low + half,
                step: half,
                area: a2,
            },
        ))
    }

    fn integrate<F: Fork>(&self, f: F, s: Segment) -> (f64, u64) {
        match self.split(s) {
            None => (s.area, 1),
            Some((l, r)) => {
                let (a, b) = f.join(move |f| self.integrate(f, l), move |f| self.integrate(f, r));
                (a.0 + b.0, a.1 + b.1)
            }
        }
    }
}

impl Reduce for PiRun {
    type Task = Segment;
    type Out = (f64, u64);

    fn root(&self) -> Segment {
        Segment {
            low: 0.0,
            step: black_box(1.0),
            area: trapezoid(0.0, 1.0),
        }
    }

    fn identity(&self) -> (f64, u64) {
        (0.0, 0)
    }

    fn op(&self, a: (f64, u64), b: (f64, u64)) -> (f64, u64) {
        (a.0 + b.0, a.1 + b.1)
    }

    fn expand(&self, mut s: Segment, push: &mut impl FnMut(Segment)) -> (f64, u64) {
        while let Some((l, r)) = self.split(s) {
            push(l);
            s = r;
        }
        (s.area, 1)
    }

    fn join<F: Fork>(&self, f: F) -> (f64, u64) {
        self.integrate(f, self.root())
    }

    fn describe(&self) -> String {
        "pi".into()
    }

    fn on_peer(&self, p: &crate::peers::Peer) -> (f64, u64) {
        p.pi(self.tol)
    }
}

impl Instance for PiRun {
    fn run(&mut self, rt: &Runtime) {
        self.result = Some(reduction::run(&*self, rt));
    }

    fn verify(&self) -> Result<(), String> {
        let (area, segments) = self.result.ok_or("pi: not run")?;
        let (pi, want) = (4.0 * area, 4.0 * self.expected.0);
        let want_segments = self.expected.1;
        if segments != want_segments {
            return Err(format!(
                "pi: {segments} segments, the sequential run has {want_segments}"
            ));
        }
        for (what, reference) in [("the sequential run", want), ("π", std::f64::consts::PI)] {
            if (pi - reference).abs() > PI_TOLERANCE {
                return Err(format!("pi: {pi} differs from {what} ({reference})"));
            }
        }
        Ok(())
    }
}
