//! Fallible allocation of the arrays a pool allocates per worker (deques, channels): a
//! pool too large for the memory at hand is a `BuildError` that says so, where an
//! infallible allocation would abort the process.

#[cfg(not(loom))]
use std::alloc::Layout;
#[cfg(not(loom))]
use std::mem::align_of;
use std::mem::size_of;
#[cfg(not(loom))]
use std::ops::Deref;
#[cfg(not(loom))]
use std::ptr::{self, NonNull};

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
pub(crate) unsafe fn try_zeroed<T>(n: usize) -> Result<Zeroed<T>, NoMemory> {
    let failed = NoMemory {
        bytes: bytes_of::<T>(n),
    };
    let array = Layout::array::<T>(n).map_err(|_| failed)?;
    if array.size() == 0 {
        return Ok(Zeroed {
            data: NonNull::dangling(),
            len: n,
            base: NonNull::dangling(),
            layout: array,
        });
    }
    // std's allocator zeroes an array aligned above 16 bytes by writing it (it cannot ask
    // `calloc`), which touched every page of every deque at pool start: 1 MiB each, 0.9 ms
    // for two. Asked for 16, with room to align by hand, it hands out pages the system
    // zeroed.
    let align = align_of::<T>().min(CALLOC_ALIGN);
    let slack = align_of::<T>() - align;
    let layout = array
        .size()
        .checked_add(slack)
        .and_then(|size| Layout::from_size_align(size, align).ok())
        .ok_or(failed)?;
    // SAFETY: the layout has a non-zero size.
    let base = NonNull::new(unsafe { std::alloc::alloc_zeroed(layout) }).ok_or(failed)?;
    // `base` is aligned to `align`, so this is at most `slack`.
    let offset = (base.as_ptr() as usize).wrapping_neg() & (align_of::<T>() - 1);
    Ok(Zeroed {
        // SAFETY: `offset <= slack`, so `data` and its `n` values lie inside the
        // allocation, and it is not null.
        data: unsafe { NonNull::new_unchecked(base.as_ptr().add(offset)) }.cast(),
        len: n,
        base,
        layout,
    })
}

/// The largest alignment for which std's allocator zeroes through `calloc`.
#[cfg(not(loom))]
const CALLOC_ALIGN: usize = 16;

/// An array from [`try_zeroed`]: `len` values from `data`, inside the allocation `base`
/// of `layout`. Owns its values as a `Box<[T]>` would.
#[cfg(not(loom))]
pub(crate) struct Zeroed<T> {
    data: NonNull<T>,
    len: usize,
    base: NonNull<u8>,
    layout: Layout,
}

// SAFETY: a `Zeroed<T>` owns its values alone, as a `Box<[T]>` does.
#[cfg(not(loom))]
unsafe impl<T: Send> Send for Zeroed<T> {}
// SAFETY: as above: `&Zeroed<T>` gives only `&T`s.
#[cfg(not(loom))]
unsafe impl<T: Sync> Sync for Zeroed<T> {}

#[cfg(not(loom))]
impl<T> Deref for Zeroed<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: `data` holds `len` valid values (`try_zeroed`'s contract), aligned for
        // `T`, owned by `self`.
        unsafe { std::slice::from_raw_parts(self.data.as_ptr(), self.len) }
    }
}

#[cfg(not(loom))]
impl<T> Drop for Zeroed<T> {
    fn drop(&mut self) {
        // SAFETY: the values are valid and owned here; nothing uses them after this.
        unsafe { ptr::drop_in_place(ptr::slice_from_raw_parts_mut(self.data.as_ptr(), self.len)) };
        if self.layout.size() != 0 {
            // SAFETY: `base` was allocated by the global allocator with `layout`.
            unsafe { std::alloc::dealloc(self.base.as_ptr(), self.layout) };
        }
    }
}
