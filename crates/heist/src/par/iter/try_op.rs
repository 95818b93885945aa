//! The `?`-like protocol behind `try_for_each` and `try_reduce`, for `Option`, `Result`
//! and `ControlFlow` (std's `Try` trait is not stable).

use std::convert::Infallible;
use std::ops::ControlFlow;

/// A value that is either an output to go on with or a residual that ends the loop.
/// Sealed: implemented for `Option`, `Result` and `ControlFlow`.
pub trait Try: private::Sealed {
    /// What a success carries.
    type Output;
    /// What a failure carries.
    type Residual;
    /// A success.
    fn from_output(output: Self::Output) -> Self;
    /// A failure.
    fn from_residual(residual: Self::Residual) -> Self;
    /// Success or failure.
    fn branch(self) -> ControlFlow<Self::Residual, Self::Output>;
}

mod private {
    pub trait Sealed {}
    impl<T> Sealed for Option<T> {}
    impl<T, E> Sealed for Result<T, E> {}
    impl<B, C> Sealed for std::ops::ControlFlow<B, C> {}
}

impl<T> Try for Option<T> {
    type Output = T;
    type Residual = Option<Infallible>;
    fn from_output(output: T) -> Self {
        Some(output)
    }
    fn from_residual(_: Option<Infallible>) -> Self {
        None
    }
    fn branch(self) -> ControlFlow<Option<Infallible>, T> {
        match self {
            Some(t) => ControlFlow::Continue(t),
            None => ControlFlow::Break(None),
        }
    }
}

impl<T, E> Try for Result<T, E> {
    type Output = T;
    type Residual = Result<Infallible, E>;
    fn from_output(output: T) -> Self {
        Ok(output)
    }
    fn from_residual(residual: Result<Infallible, E>) -> Self {
        match residual {
            Err(e) => Err(e),
            Ok(never) => match never {},
        }
    }
    fn branch(self) -> ControlFlow<Result<Infallible, E>, T> {
        match self {
            Ok(t) => ControlFlow::Continue(t),
            Err(e) => ControlFlow::Break(Err(e)),
        }
    }
}

impl<B, C> Try for ControlFlow<B, C> {
    type Output = C;
    type Residual = ControlFlow<B, Infallible>;
    fn from_output(output: C) -> Self {
        ControlFlow::Continue(output)
    }
    fn from_residual(residual: ControlFlow<B, Infallible>) -> Self {
        match residual {
            ControlFlow::Break(b) => ControlFlow::Break(b),
            ControlFlow::Continue(never) => match never {},
        }
    }
    fn branch(self) -> ControlFlow<ControlFlow<B, Infallible>, C> {
        match self {
            ControlFlow::Continue(c) => ControlFlow::Continue(c),
            ControlFlow::Break(b) => ControlFlow::Break(ControlFlow::Break(b)),
        }
    }
}
