//! A small per-thread stack of freed nodes for each node size up to [`MAX_SIZE`], so
//! that a node freed by a turn is the very block the next send on that thread gets.
//!
//! # Why hand-written, in front of mimalloc
//! Most turns free one node (the message they deliver) and allocate one (the message
//! their handler sends). mimalloc serves that pattern through two fast paths that
//! each touch allocator metadata the message itself never touches: `mi_free` looks
//! the block's page up in a two-level page map and pushes the block onto that page's
//! local free list, and `mi_malloc` pops a *different* block from the page's other
//! list (a freed block is reused only once that list runs dry). In `perf` of Big on
//! one worker the two took 15% of the samples. Here a free is a push onto a
//! thread-local stack and the next allocation of that size pops the same, still
//! cached, block. Figures: `docs/bench/per-message-2026-11-25.md`.
//!
//! # Bounds
//! Each stack holds at most [`DEPTH`] blocks, so a thread keeps at most
//! `DEPTH × (8 + 16 + … + MAX_SIZE)` bytes here. A node allocated on one thread and
//! freed on another lands in the freeing thread's stack; memory is memory, and the
//! backing allocator takes it back when its thread exits, or when a stack is full.
//!
//! # A full stack spills whole
//! A free that finds its stack full hands the whole stack back to the backing
//! allocator and starts a new one with the block, instead of freeing that one block.
//! The count of frees is the same; their rhythm is not. When one thread only sends
//! (Savina's Fork-Join Throughput: the driver's thread, outside the pool) and the
//! workers only receive, every node goes back to the sender's mimalloc pages as a
//! cross-thread free. One at a time, they trickled in just as fast as the sender
//! allocated, and each allocation took mimalloc's slow path to collect the one or two
//! blocks freed since its last look; the sends ran at a fifth of their speed in about
//! half of the processes (`docs/bench/remote-latency-2026-11-26.md`). Spilled
//! [`DEPTH`] at a time, they are collected [`DEPTH`] at a time.

use std::cell::Cell;
use std::ptr::{self, NonNull};

/// Sizes are cached in classes of this many bytes, and only blocks of a pointer's
/// alignment or less (every node: its header holds pointers).
pub(crate) const GRANULE: usize = 8;
/// The largest node size cached. Savina's messages and most actor protocols fit;
/// larger nodes go straight to the backing allocator.
pub(crate) const MAX_SIZE: usize = 64;
const CLASSES: usize = MAX_SIZE / GRANULE;
/// Blocks kept per class and thread.
const DEPTH: u32 = 64;

/// The size class of a node of `size` bytes and alignment `align`, if it is cached.
/// Evaluates at compile time for a known type.
#[inline]
pub(crate) const fn class_of(size: usize, align: usize) -> Option<usize> {
    if size == 0 || size > MAX_SIZE || align > GRANULE {
        None
    } else {
        Some(size.div_ceil(GRANULE) - 1)
    }
}

/// The bytes every block of `class` has.
#[inline]
pub(crate) const fn class_size(class: usize) -> usize {
    (class + 1) * GRANULE
}

/// What a cached block holds while it is free: the next free block of its class.
struct FreeBlock {
    next: *mut FreeBlock,
}

struct Stacks {
    tops: [Cell<*mut FreeBlock>; CLASSES],
    lens: [Cell<u32>; CLASSES],
}

impl Drop for Stacks {
    fn drop(&mut self) {
        for class in 0..CLASSES {
            spill(self, class);
        }
    }
}

thread_local! {
    static STACKS: Stacks = const {
        Stacks {
            tops: [const { Cell::new(ptr::null_mut()) }; CLASSES],
            lens: [const { Cell::new(0) }; CLASSES],
        }
    };
}

/// A cached block of `class`, if this thread has one.
#[inline]
pub(crate) fn pop(class: usize) -> Option<NonNull<u8>> {
    STACKS
        .try_with(|s| {
            let block = NonNull::new(s.tops[class].get())?;
            // SAFETY: a block on the stack is free and was written by `push`, which set
            // its `next`; only this thread can reach this stack.
            s.tops[class].set(unsafe { block.as_ref().next });
            s.lens[class].set(s.lens[class].get() - 1);
            Some(block.cast())
        })
        .ok()
        .flatten()
}

/// Keeps `block` for the next allocation of `class` on this thread; a full stack is
/// first handed back to the backing allocator whole (module docs). Returns the block
/// only if the thread is exiting; the caller then frees it.
///
/// # Safety
/// `block` came from `super::alloc::backing_alloc(class_size(class))` (possibly on
/// another thread), holds no live value, and its owner gives it up.
#[inline]
pub(crate) unsafe fn push(class: usize, block: NonNull<u8>) -> Option<NonNull<u8>> {
    STACKS
        .try_with(|s| {
            let mut len = s.lens[class].get();
            if len >= DEPTH {
                spill(s, class);
                len = 0;
            }
            let block = block.cast::<FreeBlock>();
            // SAFETY: the block is at least `GRANULE` bytes, pointer-aligned (class
            // contract) and owned by the caller, who gives it up here.
            unsafe {
                block.as_ptr().write(FreeBlock {
                    next: s.tops[class].get(),
                })
            };
            s.tops[class].set(block.as_ptr());
            s.lens[class].set(len + 1);
            None
        })
        .unwrap_or(Some(block))
}

/// Frees every block on `class`'s stack (kept out of line: it runs once per
/// [`DEPTH`] frees).
#[cold]
fn spill(s: &Stacks, class: usize) {
    let mut p = s.tops[class].replace(ptr::null_mut());
    s.lens[class].set(0);
    while let Some(block) = NonNull::new(p) {
        // SAFETY: every block on a stack is a free block of this class pushed by
        // `push`, whose `next` field it wrote; the stack was emptied above, so nobody
        // else can reach it.
        p = unsafe { block.as_ref().next };
        // SAFETY: allocated by `super::alloc::backing_alloc` with this class's size,
        // and now owned by nobody.
        unsafe { super::alloc::backing_free(block.cast(), class_size(class)) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_fall_into_granule_classes_and_large_or_overaligned_ones_are_not_cached() {
        assert_eq!(class_of(16, 8), Some(1));
        assert_eq!(class_of(24, 8), Some(2));
        assert_eq!(class_of(20, 4), Some(2));
        assert_eq!(class_size(2), 24);
        assert_eq!(class_of(MAX_SIZE, 8), Some(CLASSES - 1));
        assert_eq!(class_of(MAX_SIZE + 8, 8), None);
        assert_eq!(class_of(32, 16), None);
        assert_eq!(class_of(0, 1), None);
    }

    #[test]
    fn a_freed_block_is_the_next_one_handed_out_and_a_full_stack_spills_whole() {
        let class = 3;
        let blocks: Vec<NonNull<u8>> = (0..DEPTH + 2)
            .map(|_| super::super::alloc::backing_alloc(class_size(class)))
            .collect();
        for &b in &blocks {
            super::super::alloc::tests::forget_backing_free(b);
            // SAFETY: fresh blocks of this class, given up here.
            let back = unsafe { push(class, b) };
            assert!(back.is_none(), "the stack keeps every block");
        }
        // This test's thread starts with an empty stack: the first DEPTH filled it,
        // the next one spilled them all back at once and started a new stack.
        let (spilled, kept) = blocks.split_at(DEPTH as usize);
        assert!(
            spilled
                .iter()
                .all(|&b| super::super::alloc::tests::was_backing_freed(b)),
            "a full stack goes back to the backing allocator whole"
        );
        assert!(
            !kept
                .iter()
                .any(|&b| super::super::alloc::tests::was_backing_freed(b))
        );
        // LIFO: the last block kept comes out first.
        assert_eq!(pop(class), Some(kept[1]));
        assert_eq!(pop(class), Some(kept[0]));
        assert_eq!(pop(class), None);
        for &b in kept {
            // SAFETY: popped blocks are ours again; freed once.
            unsafe { super::super::alloc::backing_free(b, class_size(class)) };
        }
    }

    #[test]
    fn blocks_left_on_a_stack_are_freed_when_the_thread_exits() {
        let block = std::thread::spawn(|| {
            let b = super::super::alloc::backing_alloc(class_size(0));
            super::super::alloc::tests::forget_backing_free(b);
            // SAFETY: a fresh block of class 0, given up here.
            assert!(unsafe { push(0, b) }.is_none());
            b.addr().get()
        })
        .join()
        .expect("thread did not panic");
        let block = NonNull::new(block as *mut u8).expect("a block address is not null");
        assert!(super::super::alloc::tests::was_backing_freed(block));
    }
}
