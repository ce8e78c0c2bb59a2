//! Where mailbox nodes are allocated: mimalloc (feature `mimalloc`, on by default),
//! whatever the process's global allocator. Without the feature (no C compiler
//! needed), and under Miri, nodes come from the global allocator.
//!
//! # Why not `Box`
//! A message node is allocated on the sender's thread and freed on the receiver's, so
//! with two actors on two workers every node crosses threads. glibc's malloc handles
//! that badly: the freeing thread's cache fills with chunks it will never reuse, and
//! the allocating thread keeps falling back to its arena. Under `perf record` this was
//! 36% of the sender's samples in `_int_malloc` and 15% of the receiver's in
//! `_int_free` (Counting, see the closing notes of issue 2). mimalloc returns a chunk
//! freed by another thread to its owner's page with one atomic push, and the owner
//! reuses it on its next allocation, which is exactly the sender/receiver pattern.
//!
//! Only nodes go through here; the messages' own heap buffers still use the global
//! allocator. Nodes of up to 64 bytes are first looked for among the ones this thread
//! freed (`recycle.rs`), and freed nodes go back there while there is room. Without
//! the `mimalloc` feature, and under Miri (which cannot run mimalloc's C code), the
//! blocks behind them are plain boxes and `std::alloc` allocations.
//!
//! Measured side by side with the Savina drivers (`odeon-bench --driver` with the
//! previous build, 5 interleaved runs): Counting 110 → 39.6 ms, ForkJoin throughput
//! 73 → 30 ms, the other micro benchmarks unchanged.

use std::ptr::NonNull;

use std::alloc::Layout;

use super::recycle;

#[cfg(all(feature = "mimalloc", not(miri)))]
use libmimalloc_sys::{mi_free, mi_malloc, mi_malloc_aligned};

/// mimalloc aligns every block to at least a pointer's size, so nodes that need no
/// more (nearly all) take `mi_malloc`, whose fast path is a thread-local free-list
/// pop; `mi_malloc_aligned` went through a slower generic path in `perf` (5% of
/// PingPong).
#[cfg(all(feature = "mimalloc", not(miri)))]
const PLAIN_ALIGN: usize = std::mem::align_of::<usize>();

/// Moves `value` into a fresh node allocation.
pub(crate) fn alloc<T>(value: T) -> NonNull<T> {
    let ptr = alloc_uninit::<T>();
    // SAFETY: `ptr` is a fresh allocation of `T`'s layout, valid for one write.
    unsafe { ptr.as_ptr().write(value) };
    ptr
}

/// A fresh, uninitialized node allocation for a `T`, to be written field by field
/// (which spares the sender building the node on its stack and copying it over: the
/// 16-byte copies of 8-byte halves stalled store forwarding in `perf annotate` of
/// `Cell::send`). It must be initialized before [`take`] is called on it.
///
/// Small nodes come from this thread's recycled blocks first (`recycle.rs`).
#[inline]
pub(crate) fn alloc_uninit<T>() -> NonNull<T> {
    if let Some(class) = const { recycle::class_of(size_of::<T>(), align_of::<T>()) } {
        return match recycle::pop(class) {
            Some(block) => block.cast(),
            None => backing_alloc(recycle::class_size(class)).cast(),
        };
    }
    alloc_large::<T>()
}

/// A node too large or too aligned for the recycled classes.
fn alloc_large<T>() -> NonNull<T> {
    #[cfg(all(feature = "mimalloc", not(miri)))]
    {
        let layout = Layout::new::<T>();
        // Nodes always hold at least their queue link, so the layout is never empty.
        debug_assert!(layout.size() > 0);
        // SAFETY: plain C allocation calls; any size and power-of-two alignment is
        // accepted, and a null return is handled below.
        let raw = unsafe {
            if layout.align() <= PLAIN_ALIGN {
                mi_malloc(layout.size())
            } else {
                mi_malloc_aligned(layout.size(), layout.align())
            }
        }
        .cast::<T>();
        match NonNull::new(raw) {
            Some(ptr) => ptr,
            None => std::alloc::handle_alloc_error(layout),
        }
    }
    #[cfg(any(not(feature = "mimalloc"), miri))]
    {
        NonNull::from(Box::leak(Box::<T>::new_uninit())).cast()
    }
}

/// Moves the value out of a node made by [`alloc`] and frees the node.
///
/// # Safety
/// `ptr` came from [`alloc::<T>`](alloc), holds an initialized `T`, and is used for
/// nothing after this call.
pub(crate) unsafe fn take<T>(ptr: NonNull<T>) -> T {
    // SAFETY: caller contract: an initialized `T` that nobody else reads, moved out
    // once; then the memory is freed without dropping anything.
    unsafe {
        let value = ptr.as_ptr().read();
        free(ptr);
        value
    }
}

/// Frees a node whose contents were already moved out (or never written).
///
/// # Safety
/// `ptr` came from [`alloc_uninit::<T>`](alloc_uninit) (or [`alloc`]), on any thread,
/// no live value remains in it that needs dropping, and it is used for nothing after
/// this call.
#[inline]
pub(crate) unsafe fn free<T>(ptr: NonNull<T>) {
    if let Some(class) = const { recycle::class_of(size_of::<T>(), align_of::<T>()) } {
        // SAFETY: `alloc_uninit::<T>` took this block from the same class (recycled or
        // from `backing_alloc`); the caller gives it up.
        if let Some(full) = unsafe { recycle::push(class, ptr.cast()) } {
            // SAFETY: as above, and the stack did not keep it.
            unsafe { backing_free(full, recycle::class_size(class)) };
        }
        return;
    }
    // SAFETY: caller contract; `T` is not recycled, so `alloc_large` made it.
    unsafe { free_large(ptr) }
}

/// # Safety
/// As for [`free`], for a `T` that [`alloc_large`] allocated.
unsafe fn free_large<T>(ptr: NonNull<T>) {
    #[cfg(all(feature = "mimalloc", not(miri)))]
    {
        // SAFETY: allocated by mimalloc (caller contract); nothing is dropped.
        unsafe { mi_free(ptr.as_ptr().cast()) };
    }
    #[cfg(any(not(feature = "mimalloc"), miri))]
    {
        // SAFETY: without mimalloc `alloc_large` made a `Box<MaybeUninit<T>>`, whose drop
        // frees the memory without dropping any contents.
        drop(unsafe { Box::from_raw(ptr.as_ptr().cast::<std::mem::MaybeUninit<T>>()) });
    }
}

/// A block of `size` bytes (a recycled class's size), pointer-aligned.
#[inline]
pub(crate) fn backing_alloc(size: usize) -> NonNull<u8> {
    #[cfg(all(feature = "mimalloc", not(miri)))]
    {
        // SAFETY: a plain C allocation call; a null return is handled below.
        // mimalloc aligns every block to at least a pointer's size.
        let raw = unsafe { mi_malloc(size) }.cast::<u8>();
        match NonNull::new(raw) {
            Some(ptr) => ptr,
            None => std::alloc::handle_alloc_error(class_layout(size)),
        }
    }
    #[cfg(any(not(feature = "mimalloc"), miri))]
    {
        // SAFETY: class sizes are never zero.
        let raw = unsafe { std::alloc::alloc(class_layout(size)) };
        match NonNull::new(raw) {
            Some(ptr) => ptr,
            None => std::alloc::handle_alloc_error(class_layout(size)),
        }
    }
}

/// Gives a block made by [`backing_alloc`] back.
///
/// # Safety
/// `ptr` came from `backing_alloc(size)` (on any thread) and is used for nothing after
/// this call.
#[inline]
pub(crate) unsafe fn backing_free(ptr: NonNull<u8>, size: usize) {
    #[cfg(test)]
    tests::note_backing_free(ptr);
    #[cfg(all(feature = "mimalloc", not(miri)))]
    {
        let _ = size;
        // SAFETY: allocated by mimalloc (caller contract).
        unsafe { mi_free(ptr.as_ptr().cast()) };
    }
    #[cfg(any(not(feature = "mimalloc"), miri))]
    {
        // SAFETY: caller contract: allocated with this very layout.
        unsafe { std::alloc::dealloc(ptr.as_ptr(), class_layout(size)) };
    }
}

fn class_layout(size: usize) -> Layout {
    Layout::from_size_align(size, recycle::GRANULE)
        .expect("a class size is a small multiple of the granule, a power of two")
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use std::collections::HashSet;
    use std::sync::Mutex;

    /// Addresses given back to the backing allocator, for the tests that check that
    /// recycled blocks are not lost. A test removes its block's address right after
    /// allocating it: until the block is freed nobody else can free that address.
    static BACKING_FREES: Mutex<Option<HashSet<usize>>> = Mutex::new(None);

    pub(in crate::mailbox) fn note_backing_free(ptr: NonNull<u8>) {
        let mut set = BACKING_FREES.lock().unwrap_or_else(|e| e.into_inner());
        set.get_or_insert_with(HashSet::new)
            .insert(ptr.addr().get());
    }

    pub(in crate::mailbox) fn forget_backing_free(ptr: NonNull<u8>) {
        let mut set = BACKING_FREES.lock().unwrap_or_else(|e| e.into_inner());
        set.get_or_insert_with(HashSet::new)
            .remove(&ptr.addr().get());
    }

    pub(in crate::mailbox) fn was_backing_freed(ptr: NonNull<u8>) -> bool {
        let set = BACKING_FREES.lock().unwrap_or_else(|e| e.into_inner());
        set.as_ref().is_some_and(|s| s.contains(&ptr.addr().get()))
    }

    #[test]
    fn a_value_moved_into_a_node_comes_back_out_whole() {
        let s = String::from("payload");
        let node = alloc((7u64, s));
        // SAFETY: made by `alloc` just above and taken once.
        let (n, s) = unsafe { take(node) };
        assert_eq!((n, s.as_str()), (7, "payload"));
    }

    #[test]
    fn nodes_freed_on_another_thread_are_reusable() {
        // The sender/receiver pattern: allocate here, take (free) there, many times.
        struct SendPtr(NonNull<[u64; 4]>);
        // SAFETY: the pointee is plain data owned by whoever holds the pointer.
        unsafe impl Send for SendPtr {}
        let (tx, rx) = std::sync::mpsc::channel::<SendPtr>();
        let receiver = std::thread::spawn(move || {
            let mut sum = 0;
            for p in rx {
                // SAFETY: each pointer came from `alloc` and is taken exactly once.
                sum += unsafe { take(p.0) }.iter().sum::<u64>();
            }
            sum
        });
        let rounds = if cfg!(miri) { 50 } else { 100_000 };
        for i in 0..rounds {
            tx.send(SendPtr(alloc([i, i, i, i])))
                .expect("receiver alive");
        }
        drop(tx);
        let expected: u64 = (0..rounds).map(|i| 4 * i).sum();
        assert_eq!(receiver.join().expect("receiver did not panic"), expected);
    }
}
