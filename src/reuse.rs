//! Large buffers kept between compiles on one thread.
//!
//! A compile's largest buffers (the IR arenas and the parsed statement list) are too large for
//! the memory allocator's per-size fast path. When a compile is done with one it hands it back
//! here, and the next compile on the same thread takes it, so a batch of shaders allocates
//! these buffers about once per thread (measured in docs/backend.md: 2.6 % of a one-`MOV`
//! shader's compile, 0.6 % over the samples).
//!
//! Invariants: a shelved vector is empty (only its capacity is kept); a shelf holds at most
//! [`SHELF_LEN`] vectors of at most [`MAX_BYTES`] each, so a thread keeps a bounded amount of
//! memory after compiling a huge shader. What a compile computes never depends on a buffer's
//! history: [`take`] returns an empty vector, the same as `Vec::with_capacity`.

use std::cell::RefCell;
use std::thread::LocalKey;

/// Vectors kept per shelf: enough for the IDVS variants of one vertex shader (three shaders at
/// most are alive at once).
const SHELF_LEN: usize = 4;

/// The largest buffer kept (bytes of capacity).
const MAX_BYTES: usize = 1 << 20;

/// One thread's spare vectors of one element type (declared with [`shelf!`]).
pub(crate) type Shelf<T> = LocalKey<RefCell<Vec<Vec<T>>>>;

/// Declares a thread-local [`Shelf`] of `Vec<$t>`.
macro_rules! shelf {
    ($name:ident: $t:ty) => {
        thread_local! {
            static $name: std::cell::RefCell<Vec<Vec<$t>>> = const { std::cell::RefCell::new(Vec::new()) };
        }
    };
}
pub(crate) use shelf;

/// An empty vector with room for at least `capacity` elements: a shelved one when one is
/// large enough, else a new one.
pub(crate) fn take<T>(shelf: &'static Shelf<T>, capacity: usize) -> Vec<T> {
    // (`try_with`: during the thread's exit the shelf may already be gone.)
    let found = shelf
        .try_with(|s| {
            let mut s = s.borrow_mut();
            let at = s.iter().rposition(|v| v.capacity() >= capacity)?;
            Some(s.swap_remove(at))
        })
        .ok()
        .flatten();
    // (Growing a smaller shelved vector would copy its whole old allocation.)
    found.unwrap_or_else(|| Vec::with_capacity(capacity))
}

/// Keeps `v`'s allocation for a later [`take`] (its elements are dropped now), unless the
/// shelf is full or `v` is too large to keep.
pub(crate) fn give<T>(shelf: &'static Shelf<T>, mut v: Vec<T>) {
    if v.capacity() == 0 || v.capacity().saturating_mul(size_of::<T>().max(1)) > MAX_BYTES {
        return;
    }
    v.clear();
    let _ = shelf.try_with(|s| {
        let mut s = s.borrow_mut();
        if s.len() < SHELF_LEN {
            s.push(v);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    shelf!(NUMBERS: u64);
    shelf!(BYTES: u8);

    #[test]
    fn a_given_vector_comes_back_empty_with_its_allocation() {
        let mut v = Vec::with_capacity(100);
        v.extend([1u64, 2, 3]);
        let ptr = v.as_ptr();
        give(&NUMBERS, v);
        let again = take(&NUMBERS, 50);
        assert!(again.is_empty());
        assert_eq!(again.as_ptr(), ptr);
        assert!(again.capacity() >= 100);
    }

    #[test]
    fn a_large_enough_vector_is_found_and_too_large_ones_are_not_kept() {
        give(&BYTES, Vec::with_capacity(2000));
        give(&BYTES, Vec::with_capacity(8));
        let v = take(&BYTES, 1000);
        assert!(v.capacity() >= 2000, "the larger shelved vector");
        assert_eq!(BYTES.with_borrow(|s| s.iter().map(Vec::capacity).collect::<Vec<_>>()), [8]);
        assert!(take(&BYTES, 1000).capacity() >= 1000, "a new one when none is large enough");
        assert_eq!(BYTES.with_borrow(Vec::len), 1, "the small one stays");
        BYTES.with_borrow_mut(Vec::clear);
        give(&BYTES, vec![0u8; MAX_BYTES + 1]);
        assert!(BYTES.with_borrow(Vec::is_empty));
        for _ in 0..SHELF_LEN + 2 {
            give(&BYTES, Vec::with_capacity(16));
        }
        assert_eq!(BYTES.with_borrow(Vec::len), SHELF_LEN);
    }
}
