//! Strings in parallel (rayon's `ParallelString`): a string is cut only where no item
//! straddles the cut (a char boundary, after a newline, at whitespace), so each piece
//! iterates with std's own iterator.

use super::driver::{bridge, Kernel, Producer};
use super::traits::ParallelIterator;

/// Parallel iterators over a string (rayon's `ParallelString`).
pub trait ParallelString {
    /// The string.
    fn as_parallel_string(&self) -> &str;

    /// Its chars.
    fn par_chars(&self) -> Chars<'_> {
        Chars(self.as_parallel_string())
    }

    /// Its bytes.
    fn par_bytes(&self) -> Bytes<'_> {
        Bytes(self.as_parallel_string())
    }

    /// Its lines, without line endings (as `str::lines`).
    fn par_lines(&self) -> Lines<'_> {
        Lines(self.as_parallel_string())
    }

    /// Its words: the non-empty parts between whitespace (as `str::split_whitespace`).
    fn par_split_whitespace(&self) -> SplitWhitespace<'_> {
        SplitWhitespace(self.as_parallel_string())
    }
}

impl ParallelString for str {
    fn as_parallel_string(&self) -> &str {
        self
    }
}

/// Defines a string source: its parallel iterator and producer, cut by `$cut` (the first
/// allowed cut at or after `i`, for `0 < i < s.len()`).
macro_rules! str_source {
    ($(#[$doc:meta])* $name:ident, $prod:ident, $item:ty, $iter:ty, |$s:ident| $make:expr,
     cut = |$cs:ident, $ci:ident| $cut:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone)]
        pub struct $name<'a>(&'a str);

        impl<'a> ParallelIterator for $name<'a> {
            type Item = $item;
            fn drive<K: Kernel<$item>>(self, kernel: K) -> K::Output {
                bridge($prod(self.0), &kernel)
            }
        }

        struct $prod<'a>(&'a str);

        impl<'a> Producer for $prod<'a> {
            type Item = $item;
            type IntoIter = $iter;
            fn len(&self) -> usize {
                self.0.len()
            }
            fn split_at(self, index: usize) -> (Self, Self) {
                let ($cs, $ci) = (self.0, index);
                let at = if $ci == 0 || $ci >= $cs.len() { $ci.min($cs.len()) } else { $cut };
                let (l, r) = self.0.split_at(at);
                ($prod(l), $prod(r))
            }
            fn into_iter(self) -> $iter {
                let $s = self.0;
                $make
            }
        }
    };
}

/// The first char boundary at or after `i`.
fn char_boundary(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

str_source!(
    /// The chars of a string (see [`ParallelString::par_chars`]).
    Chars, CharsProducer, char, std::str::Chars<'a>, |s| s.chars(),
    cut = |s, i| char_boundary(s, i)
);

str_source!(
    /// The bytes of a string (see [`ParallelString::par_bytes`]).
    Bytes, BytesProducer, u8, std::str::Bytes<'a>, |s| s.bytes(),
    cut = |s, i| char_boundary(s, i)
);

str_source!(
    /// The lines of a string (see [`ParallelString::par_lines`]).
    Lines, LinesProducer, &'a str, std::str::Lines<'a>, |s| s.lines(),
    cut = |s, i| s.as_bytes()[i - 1..].iter().position(|&b| b == b'\n').map_or(s.len(), |p| i + p)
);

str_source!(
    /// The whitespace-separated words of a string (see
    /// [`ParallelString::par_split_whitespace`]).
    SplitWhitespace, WordsProducer, &'a str, std::str::SplitWhitespace<'a>,
    |s| s.split_whitespace(),
    cut = |s, i| {
        let i = char_boundary(s, i);
        s[i..].char_indices().find(|(_, c)| c.is_whitespace()).map_or(s.len(), |(p, _)| i + p)
    }
);

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// Splits at every byte position, then the right piece again: the pieces' items
    /// together are the whole string's.
    fn check<P: Producer, T: PartialEq + std::fmt::Debug>(
        make: impl Fn() -> P,
        whole: Vec<T>,
        len: usize,
    ) where
        P::IntoIter: Iterator<Item = T>,
    {
        for at in 0..=len {
            for again in 0..=len {
                let (l, r) = make().split_at(at);
                let (a, b) = r.split_at(again.min(len - at));
                let got: Vec<T> = l
                    .into_iter()
                    .chain(a.into_iter())
                    .chain(b.into_iter())
                    .collect();
                assert_eq!(got, whole, "split at {at}, then {again}");
            }
        }
    }

    #[test]
    fn string_sources_split_everywhere() {
        for s in [
            "",
            "a",
            "héllo wörld\n\nline  two\r\nend\n",
            " x\u{3000}y  ",
            "\n\n",
            "ab\ncd",
        ] {
            check(|| CharsProducer(s), s.chars().collect(), s.len());
            check(|| BytesProducer(s), s.bytes().collect(), s.len());
            check(|| LinesProducer(s), s.lines().collect(), s.len());
            check(|| WordsProducer(s), s.split_whitespace().collect(), s.len());
        }
    }
}
