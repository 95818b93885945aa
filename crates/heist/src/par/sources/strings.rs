//! Strings in parallel (rayon's `ParallelString`): a string is cut only where no item
//! straddles the cut (a char boundary, after a newline, at whitespace), so each piece
//! iterates with std's own iterator.

use crate::par::engine::driver::{bridge, Kernel, Producer};
use crate::par::iter::traits::ParallelIterator;
pub use crate::par::sources::str_patterns::{
    MatchIndices, Matches, Pattern, Split, SplitInclusive, SplitTerminator,
};

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

    /// Its words: the non-empty parts between ASCII whitespace (as
    /// `str::split_ascii_whitespace`).
    fn par_split_ascii_whitespace(&self) -> SplitAsciiWhitespace<'_> {
        SplitAsciiWhitespace(self.as_parallel_string())
    }

    /// Its chars with their byte offsets.
    fn par_char_indices(&self) -> CharIndices<'_> {
        CharIndices(self.as_parallel_string())
    }

    /// Its UTF-16 code units (as `str::encode_utf16`).
    fn par_encode_utf16(&self) -> EncodeUtf16<'_> {
        EncodeUtf16(self.as_parallel_string())
    }

    /// The parts between separators (as `str::split`).
    fn par_split<P: Pattern>(&self, separator: P) -> Split<'_, P> {
        Split::new(self.as_parallel_string(), separator)
    }

    /// The parts, each with the separator that ends it (as `str::split_inclusive`).
    fn par_split_inclusive<P: Pattern>(&self, separator: P) -> SplitInclusive<'_, P> {
        SplitInclusive::new(self.as_parallel_string(), separator)
    }

    /// The parts ended by separators, without a last empty one (as
    /// `str::split_terminator`).
    fn par_split_terminator<P: Pattern>(&self, terminator: P) -> SplitTerminator<'_, P> {
        SplitTerminator::new(self.as_parallel_string(), terminator)
    }

    /// The matching chars, as string slices (as `str::matches`).
    fn par_matches<P: Pattern>(&self, pattern: P) -> Matches<'_, P> {
        Matches::new(self.as_parallel_string(), pattern)
    }

    /// The matching chars with their byte offsets (as `str::match_indices`).
    fn par_match_indices<P: Pattern>(&self, pattern: P) -> MatchIndices<'_, P> {
        MatchIndices::new(self.as_parallel_string(), pattern)
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
pub(crate) fn char_boundary(s: &str, mut i: usize) -> usize {
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

str_source!(
    /// The ASCII-whitespace-separated words of a string (see
    /// [`ParallelString::par_split_ascii_whitespace`]).
    SplitAsciiWhitespace, AsciiWordsProducer, &'a str, std::str::SplitAsciiWhitespace<'a>,
    |s| s.split_ascii_whitespace(),
    cut = |s, i| s.as_bytes()[i..].iter().position(u8::is_ascii_whitespace).map_or(s.len(), |p| i + p)
);

str_source!(
    /// The UTF-16 code units of a string (see [`ParallelString::par_encode_utf16`]).
    EncodeUtf16, Utf16Producer, u16, std::str::EncodeUtf16<'a>, |s| s.encode_utf16(),
    cut = |s, i| char_boundary(s, i)
);

/// The chars of a string with their byte offsets (see
/// [`ParallelString::par_char_indices`]).
#[derive(Debug, Clone)]
pub struct CharIndices<'a>(&'a str);

impl<'a> ParallelIterator for CharIndices<'a> {
    type Item = (usize, char);
    fn drive<K: Kernel<(usize, char)>>(self, kernel: K) -> K::Output {
        bridge(IndicesProducer { s: self.0, at: 0 }, &kernel)
    }
}

/// A piece of a string `at` bytes into it, cut at char boundaries.
struct IndicesProducer<'a> {
    s: &'a str,
    at: usize,
}

impl<'a> Producer for IndicesProducer<'a> {
    type Item = (usize, char);
    type IntoIter = Shifted<std::str::CharIndices<'a>>;
    fn len(&self) -> usize {
        self.s.len()
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let k = char_boundary(self.s, index.min(self.s.len()));
        let (l, r) = self.s.split_at(k);
        let lo = IndicesProducer { s: l, at: self.at };
        (
            lo,
            IndicesProducer {
                s: r,
                at: self.at + k,
            },
        )
    }
    fn into_iter(self) -> Self::IntoIter {
        Shifted {
            it: self.s.char_indices(),
            by: self.at,
        }
    }
}

/// Offsets within a piece turned into offsets within the string.
pub(crate) struct Shifted<I> {
    it: I,
    by: usize,
}

impl<T, I: Iterator<Item = (usize, T)>> Iterator for Shifted<I> {
    type Item = (usize, T);
    fn next(&mut self) -> Option<(usize, T)> {
        self.it.next().map(|(k, x)| (self.by + k, x))
    }
}

#[cfg(all(test, not(loom)))]
pub(crate) mod tests {
    use super::*;

    /// Splits at every byte position, then the right piece again: the pieces' items
    /// together are the whole string's.
    pub(crate) fn check<P: Producer, T: PartialEq + std::fmt::Debug>(
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
            let ascii = || AsciiWordsProducer(s);
            check(ascii, s.split_ascii_whitespace().collect(), s.len());
            check(|| Utf16Producer(s), s.encode_utf16().collect(), s.len());
            let indices = || IndicesProducer { s, at: 0 };
            check(indices, s.char_indices().collect(), s.len());
        }
    }
}
