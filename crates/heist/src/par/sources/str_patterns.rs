//! A string split by a char pattern, in parallel: `par_split`, `par_split_inclusive`,
//! `par_split_terminator`, `par_matches` and `par_match_indices` (rayon's
//! `ParallelString`). A piece is cut just after a separator, so the parts on either
//! side of a cut are whole; a piece that is not the string's last ends in that
//! separator, which ends its last part.

use crate::par::engine::driver::{bridge, Kernel, Producer};
use crate::par::iter::traits::ParallelIterator;

/// What separates parts of a string: a `char`, a set of chars (`&[char]`, `[char; N]`,
/// `&[char; N]`) or a predicate on chars (rayon's `Pattern`; sealed).
pub trait Pattern: private::Sealed + Sync + Send {
    /// Whether `c` matches.
    #[doc(hidden)]
    fn is_match(&self, c: char) -> bool;
}

mod private {
    pub trait Sealed {}
}

impl private::Sealed for char {}
impl Pattern for char {
    fn is_match(&self, c: char) -> bool {
        c == *self
    }
}

impl private::Sealed for &[char] {}
impl Pattern for &[char] {
    fn is_match(&self, c: char) -> bool {
        self.contains(&c)
    }
}

impl<const N: usize> private::Sealed for [char; N] {}
impl<const N: usize> Pattern for [char; N] {
    fn is_match(&self, c: char) -> bool {
        self.contains(&c)
    }
}

impl<const N: usize> private::Sealed for &[char; N] {}
impl<const N: usize> Pattern for &[char; N] {
    fn is_match(&self, c: char) -> bool {
        self.contains(&c)
    }
}

impl<F: Fn(char) -> bool + Sync + Send> private::Sealed for F {}
impl<F: Fn(char) -> bool + Sync + Send> Pattern for F {
    fn is_match(&self, c: char) -> bool {
        self(c)
    }
}

/// Which of std's splits a piece follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// `str::split`: a last empty part counts.
    Split,
    /// `str::split_inclusive`: parts keep their separator.
    Inclusive,
    /// `str::split_terminator`: a last empty part does not count.
    Terminator,
}

/// Defines a split source: its parallel iterator over `&str` parts in `$mode`.
macro_rules! split_source {
    ($(#[$doc:meta])* $name:ident, $mode:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone)]
        pub struct $name<'a, P: Pattern> {
            s: &'a str,
            pat: P,
        }

        impl<'a, P: Pattern> $name<'a, P> {
            pub(crate) fn new(s: &'a str, pat: P) -> Self {
                $name { s, pat }
            }
        }

        impl<'a, P: Pattern> ParallelIterator for $name<'a, P> {
            type Item = &'a str;
            fn drive<K: Kernel<&'a str>>(self, kernel: K) -> K::Output {
                let p = SplitProducer {
                    s: Some(self.s),
                    last: true,
                    pat: &self.pat,
                    mode: $mode,
                };
                bridge(p, &kernel)
            }
        }
    };
}

split_source!(
    /// The parts of a string between separators (see
    /// [`ParallelString::par_split`](crate::str::ParallelString::par_split)).
    Split, Mode::Split
);

split_source!(
    /// The parts of a string, each with the separator that ends it (see
    /// [`ParallelString::par_split_inclusive`](crate::str::ParallelString::par_split_inclusive)).
    SplitInclusive, Mode::Inclusive
);

split_source!(
    /// The parts of a string ended by separators (see
    /// [`ParallelString::par_split_terminator`](crate::str::ParallelString::par_split_terminator)).
    SplitTerminator, Mode::Terminator
);

/// A piece of a split string; `None` has no parts at all.
struct SplitProducer<'a, 'p, P> {
    s: Option<&'a str>,
    /// Whether the piece ends the string (else it ends in a separator).
    last: bool,
    pat: &'p P,
    mode: Mode,
}

impl<'a, P: Pattern> SplitProducer<'a, '_, P> {
    /// The piece without the separator that ends it if it is not the last.
    fn body(s: &'a str, last: bool) -> &'a str {
        match (last, s.chars().next_back()) {
            (false, Some(c)) => &s[..s.len() - c.len_utf8()],
            _ => s,
        }
    }
}

impl<'a, 'p, P: Pattern> Producer for SplitProducer<'a, 'p, P> {
    type Item = &'a str;
    type IntoIter = Parts<'a, 'p, P>;
    fn len(&self) -> usize {
        self.s.map_or(0, |s| s.len() + 1)
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let (pat, mode) = (self.pat, self.mode);
        let none = SplitProducer {
            s: None,
            last: false,
            pat,
            mode,
        };
        let Some(s) = self.s else {
            return (self, none);
        };
        let body = Self::body(s, self.last);
        let i = crate::par::sources::strings::char_boundary(body, index.min(body.len()));
        let after = |(k, c): (usize, char)| k + c.len_utf8();
        let is_sep = |&(_, c): &(usize, char)| pat.is_match(c);
        let cut = body[i..].char_indices().find(is_sep).map(|m| i + after(m));
        let Some(k) = cut.or_else(|| body[..i].char_indices().rev().find(is_sep).map(after)) else {
            return (self, none);
        };
        let lo = SplitProducer {
            s: Some(&s[..k]),
            last: false,
            pat,
            mode,
        };
        let hi = SplitProducer {
            s: Some(&s[k..]),
            last: self.last,
            pat,
            mode,
        };
        (lo, hi)
    }
    fn into_iter(self) -> Parts<'a, 'p, P> {
        let mode = match (self.mode, self.last) {
            (Mode::Terminator, false) => Mode::Split,
            (m, _) => m,
        };
        let rest = match mode {
            Mode::Inclusive => self.s,
            _ => self.s.map(|s| Self::body(s, self.last)),
        };
        Parts {
            rest,
            pat: self.pat,
            mode,
        }
    }
}

/// The parts of one block, as std's split in `mode` gives them.
pub(crate) struct Parts<'a, 'p, P> {
    rest: Option<&'a str>,
    pat: &'p P,
    mode: Mode,
}

impl<'a, P: Pattern> Iterator for Parts<'a, '_, P> {
    type Item = &'a str;
    fn next(&mut self) -> Option<&'a str> {
        let rest = self.rest?;
        let found = rest.char_indices().find(|&(_, c)| self.pat.is_match(c));
        let Some((k, c)) = found else {
            self.rest = None;
            let empty_counts = self.mode == Mode::Split;
            return (empty_counts || !rest.is_empty()).then_some(rest);
        };
        let end = k + c.len_utf8();
        self.rest = Some(&rest[end..]);
        Some(if self.mode == Mode::Inclusive {
            &rest[..end]
        } else {
            &rest[..k]
        })
    }
}

/// The chars of a string that match a pattern, as string slices (see
/// [`ParallelString::par_matches`](crate::str::ParallelString::par_matches)).
#[derive(Debug, Clone)]
pub struct Matches<'a, P: Pattern> {
    s: &'a str,
    pat: P,
}

/// The chars of a string that match a pattern, with their byte offsets (see
/// [`ParallelString::par_match_indices`](crate::str::ParallelString::par_match_indices)).
#[derive(Debug, Clone)]
pub struct MatchIndices<'a, P: Pattern> {
    s: &'a str,
    pat: P,
}

impl<'a, P: Pattern> Matches<'a, P> {
    pub(crate) fn new(s: &'a str, pat: P) -> Self {
        Matches { s, pat }
    }
}

impl<'a, P: Pattern> MatchIndices<'a, P> {
    pub(crate) fn new(s: &'a str, pat: P) -> Self {
        MatchIndices { s, pat }
    }
}

impl<'a, P: Pattern> ParallelIterator for Matches<'a, P> {
    type Item = &'a str;
    fn drive<K: Kernel<&'a str>>(self, kernel: K) -> K::Output {
        let p = MatchProducer {
            s: self.s,
            at: 0,
            pat: &self.pat,
        };
        bridge(
            p,
            &crate::par::iter::adapters::mapped(&kernel, |(_, m): (usize, &'a str)| m),
        )
    }
}

impl<'a, P: Pattern> ParallelIterator for MatchIndices<'a, P> {
    type Item = (usize, &'a str);
    fn drive<K: Kernel<(usize, &'a str)>>(self, kernel: K) -> K::Output {
        let p = MatchProducer {
            s: self.s,
            at: 0,
            pat: &self.pat,
        };
        bridge(p, &kernel)
    }
}

/// A piece of a string searched for matches, starting `at` bytes into the string; cut
/// at any char boundary.
struct MatchProducer<'a, 'p, P> {
    s: &'a str,
    at: usize,
    pat: &'p P,
}

impl<'a, 'p, P: Pattern> Producer for MatchProducer<'a, 'p, P> {
    type Item = (usize, &'a str);
    type IntoIter = MatchIter<'a, 'p, P>;
    fn len(&self) -> usize {
        self.s.len()
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let k = crate::par::sources::strings::char_boundary(self.s, index.min(self.s.len()));
        let (l, r) = self.s.split_at(k);
        let pat = self.pat;
        let lo = MatchProducer {
            s: l,
            at: self.at,
            pat,
        };
        (
            lo,
            MatchProducer {
                s: r,
                at: self.at + k,
                pat,
            },
        )
    }
    fn into_iter(self) -> MatchIter<'a, 'p, P> {
        MatchIter {
            chars: self.s.char_indices(),
            s: self.s,
            at: self.at,
            pat: self.pat,
        }
    }
}

/// The matches of one block.
pub(crate) struct MatchIter<'a, 'p, P> {
    chars: std::str::CharIndices<'a>,
    s: &'a str,
    at: usize,
    pat: &'p P,
}

impl<'a, P: Pattern> Iterator for MatchIter<'a, '_, P> {
    type Item = (usize, &'a str);
    fn next(&mut self) -> Option<(usize, &'a str)> {
        let (k, c) = self.chars.find(|&(_, c)| self.pat.is_match(c))?;
        Some((self.at + k, &self.s[k..k + c.len_utf8()]))
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::par::sources::strings::tests::check;

    const TEXTS: [&str; 8] = ["", ",", "a", "a,b,,c", ",,x,", "é,ü,,", "ab", ",a,"];

    /// Every mode and kind of pattern, split everywhere: the parts are std's.
    #[test]
    fn splits_split_everywhere() {
        for s in TEXTS {
            let split = |mode| {
                move || SplitProducer {
                    s: Some(s),
                    last: true,
                    pat: &',',
                    mode,
                }
            };
            check(split(Mode::Split), s.split(',').collect(), s.len() + 1);
            let inclusive = s.split_inclusive(',').collect();
            check(split(Mode::Inclusive), inclusive, s.len() + 1);
            let terminator = s.split_terminator(',').collect();
            check(split(Mode::Terminator), terminator, s.len() + 1);
            let set = ['b', 'ü'];
            let by_set = || SplitProducer {
                s: Some(s),
                last: true,
                pat: &set,
                mode: Mode::Split,
            };
            check(by_set, s.split(set).collect(), s.len() + 1);
            let odd = |c: char| c == 'é' || c == 'a';
            let by_fn = || SplitProducer {
                s: Some(s),
                last: true,
                pat: &odd,
                mode: Mode::Split,
            };
            check(by_fn, s.split(odd).collect(), s.len() + 1);
            let matches = || MatchProducer {
                s,
                at: 0,
                pat: &[',', 'ü'],
            };
            check(matches, s.match_indices([',', 'ü']).collect(), s.len());
        }
    }
}
