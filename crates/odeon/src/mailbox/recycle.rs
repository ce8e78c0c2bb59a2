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
//! `DEPTH × (8 + 16 + … + MAX_SIZE)` bytes here; beyond that, blocks go back to the
//! backing allocator. A node allocated on one thread and freed on another lands in the
//! freeing thread's stack; memory is memory, and the backing allocator takes it back
//! whenever a stack is full or its thread exits.

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
        for (class, top) in self.tops.iter().enumerate() {
            let mut p = top.replace(ptr::null_mut());
            while let Some(block) = NonNull::new(p) {
                // SAFETY: every block on a stack is a free block of this class pushed
                // by `push`, whose `next` field it wrote; nobody else can reach it.
                p = unsafe { block.as_ref().next };
                // SAFETY: allocated by `super::alloc::backing_alloc` with this class's
                // size, and now owned by nobody.
                unsafe { super::alloc::backing_free(block.cast(), class_size(class)) };
            }
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

/// Keeps `block` for the next allocation of `class` on this thread. Returns it if the
/// stack is full (or the thread is exiting); the caller then frees it.
///
/// # Safety
/// `block` came from `super::alloc::backing_alloc(class_size(class))` (possibly on
/// another thread), holds no live value, and its owner gives it up.
#[inline]
pub(crate) unsafe fn push(class: usize, block: NonNull<u8>) -> Option<NonNull<u8>> {
    STACKS
        .try_with(|s| {
            let len = s.lens[class].get();
            if len >= DEPTH {
                return Some(block);
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
    fn a_freed_block_is_the_next_one_handed_out_and_stacks_are_bounded() {
        let class = 3;
        let blocks: Vec<NonNull<u8>> = (0..DEPTH + 2)
            .map(|_| super::super::alloc::backing_alloc(class_size(class)))
            .collect();
        let mut spilled = Vec::new();
        for &b in &blocks {
            // SAFETY: fresh blocks of this class, given up here.
            if let Some(back) = unsafe { push(class, b) } {
                spilled.push(back);
            }
        }
        // Only DEPTH fit (this test's thread starts with an empty stack).
        assert_eq!(spilled, blocks[DEPTH as usize..].to_vec());
        // LIFO: the last block kept comes out first.
        let first = pop(class);
        assert_eq!(first, Some(blocks[DEPTH as usize - 1]));
        let mut rest = 0;
        let mut next = first;
        while let Some(b) = next {
            rest += 1;
            // SAFETY: popped blocks are ours again; freed once.
            unsafe { super::super::alloc::backing_free(b, class_size(class)) };
            next = pop(class);
        }
        assert_eq!(rest, DEPTH);
        for b in spilled {
            // SAFETY: never cached; freed once.
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
