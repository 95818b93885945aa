//! Fallible allocation of the arrays a pool allocates per worker (deques, channels): a
//! pool too large for the memory at hand is a `BuildError` that says so, where an
//! infallible allocation would abort the process.

use std::mem::size_of;

/// What could not be allocated while a pool was built, for the pool's `BuildError`.
#[derive(Debug)]
pub(crate) struct OutOfMemory {
    pub(crate) what: String,
    pub(crate) bytes: usize,
}

/// An allocation of `bytes` that failed.
#[derive(Clone, Copy, Debug)]
pub(crate) struct NoMemory {
    pub(crate) bytes: usize,
}

/// The bytes of `n` values of `T`, saturating.
pub(crate) fn bytes_of<T>(n: usize) -> usize {
    n.saturating_mul(size_of::<T>())
}

/// `n` values made by `f(0..n)`, or the allocation that failed.
pub(crate) fn try_boxed<T>(n: usize, f: impl FnMut(usize) -> T) -> Result<Box<[T]>, NoMemory> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| NoMemory {
        bytes: bytes_of::<T>(n),
    })?;
    v.extend((0..n).map(f));
    Ok(v.into_boxed_slice())
}

/// `n` values of `T` whose bytes are all zero, or the allocation that failed. The
/// memory is not written, so the system backs a large array only where it is touched.
///
/// # Safety
/// All-zero bytes are a valid `T`.
#[cfg(not(loom))]
pub(crate) unsafe fn try_zeroed<T>(n: usize) -> Result<Box<[T]>, NoMemory> {
    let failed = NoMemory {
        bytes: bytes_of::<T>(n),
    };
    let layout = std::alloc::Layout::array::<T>(n).map_err(|_| failed)?;
    if layout.size() == 0 {
        return Ok(Vec::new().into_boxed_slice());
    }
    // SAFETY: the layout has a non-zero size.
    let p = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<T>();
    if p.is_null() {
        return Err(failed);
    }
    // SAFETY: `p` was allocated by the global allocator with the layout a `Box<[T]>` of
    // `n` values frees with, and its `n` values are valid (all-zero, the caller's
    // contract).
    Ok(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(p, n)) })
}
