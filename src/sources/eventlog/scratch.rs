//! A reader thread's buffers, reused from call to call.
//!
//! Allocating one per call costs more than its use: buffers of 64 KiB and more are mapped on
//! their own (`crate::alloc`), so a fresh one cost a map, a page fault per page and an unmap,
//! and smaller ones sized to a line (a stage's line can be tens of KiB) went through the
//! allocator's slow path (BENCHMARKS.md, *Cold start at the reader's speed*).

use std::cell::Cell;
use std::ops::{Deref, DerefMut};
use std::thread::LocalKey;

/// A thread's buffer (`home`), taken for a call and given back when dropped, on every return.
/// A take while another take of the same buffer is alive gets a new, empty buffer.
pub(super) struct Scratch {
    buf: Vec<u8>,
    home: &'static LocalKey<Cell<Vec<u8>>>,
    /// Given back only while its capacity is at most this (a buffer grown by one large line is
    /// freed).
    keep: usize,
}

impl Scratch {
    /// `home`'s buffer as it was left (its length too).
    pub(super) fn take(home: &'static LocalKey<Cell<Vec<u8>>>, keep: usize) -> Scratch {
        Scratch {
            buf: home.take(),
            home,
            keep,
        }
    }
}

impl Deref for Scratch {
    type Target = Vec<u8>;
    fn deref(&self) -> &Vec<u8> {
        &self.buf
    }
}

impl DerefMut for Scratch {
    fn deref_mut(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if self.buf.capacity() <= self.keep {
            self.home.set(std::mem::take(&mut self.buf));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    thread_local! {
        static HOME: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
    }

    #[test]
    fn a_buffer_comes_back_unless_it_grew_past_its_bound() {
        {
            let mut b = Scratch::take(&HOME, 64);
            b.extend_from_slice(b"abc");
            // A second take while the first is out gets its own buffer.
            assert!(Scratch::take(&HOME, 64).is_empty());
        }
        let ptr = {
            let b = Scratch::take(&HOME, 64);
            assert_eq!(&b[..], b"abc", "given back as it was left");
            b.as_ptr()
        };
        {
            let mut b = Scratch::take(&HOME, 64);
            assert_eq!(b.as_ptr(), ptr, "the same allocation");
            b.clear();
            b.resize(1000, 0);
        }
        assert!(
            Scratch::take(&HOME, 64).capacity() == 0,
            "grown past 64: freed"
        );
    }
}
