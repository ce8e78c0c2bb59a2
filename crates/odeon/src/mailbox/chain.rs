//! A run of nodes linked on the producer's side and pushed as one
//! ([`Queue::push_chain`]): how an atomic batch enters a mailbox with no other
//! producer's node between its messages.

use std::ptr::{self, NonNull};

use super::queue::Link;
use crate::loom::Ordering;

#[allow(unused_imports)] // the intra-doc links
use super::queue::Queue;

/// Nodes linked in order on the producer's side, to be pushed as one with
/// [`Queue::push_chain`]. Owns its nodes until then; dropping it leaks them, so its
/// owner drains it with [`Chain::pop_front`] first (`sharing/batch.rs` does).
#[derive(Debug)]
pub(crate) struct Chain {
    ends: Option<(NonNull<Link>, NonNull<Link>)>,
}

// SAFETY: a chain is a list of nodes it owns exclusively; nodes are `Send` by the
// callers' contract (as for a queue).
unsafe impl Send for Chain {}

impl Chain {
    #[inline]
    pub(crate) fn new() -> Self {
        Self { ends: None }
    }

    /// Appends `node`.
    ///
    /// # Safety
    /// `node` points to a live `Link` in no queue or chain; the chain owns it now.
    #[inline]
    pub(crate) unsafe fn push_back(&mut self, node: NonNull<Link>) {
        // SAFETY: the chain owns `node` (caller contract) and no other thread sees it.
        unsafe { node.as_ref() }
            .next
            .store(ptr::null_mut(), Ordering::Relaxed);
        self.ends = Some(match self.ends {
            None => (node, node),
            Some((first, last)) => {
                // SAFETY: `last` is owned by the chain, not shared yet.
                unsafe { last.as_ref() }
                    .next
                    .store(node.as_ptr(), Ordering::Relaxed);
                (first, node)
            }
        });
    }

    /// Takes the first node back out (the caller owns it now).
    #[inline]
    pub(crate) fn pop_front(&mut self) -> Option<NonNull<Link>> {
        let (first, last) = self.ends?;
        self.ends = if first == last {
            None
        } else {
            // SAFETY: the chain owns `first`, which is alive and linked to the rest.
            let next = unsafe { first.as_ref() }.next.load(Ordering::Relaxed);
            NonNull::new(next).map(|next| (next, last))
        };
        Some(first)
    }

    #[inline]
    pub(super) fn into_ends(self) -> Option<(NonNull<Link>, NonNull<Link>)> {
        self.ends
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::mailbox::queue::{Push, TestQueue};
    use std::sync::Arc;

    #[repr(C)]
    struct Node {
        link: Link,
        value: u64,
    }

    fn node(value: u64) -> NonNull<Link> {
        NonNull::from(Box::leak(Box::new(Node {
            link: Link::new(),
            value,
        })))
        .cast()
    }

    /// # Safety
    /// `link` came from `node` and was popped.
    unsafe fn take(link: NonNull<Link>) -> u64 {
        // SAFETY: caller contract: the node was boxed by `node` and is no longer queued.
        unsafe { Box::from_raw(link.cast::<Node>().as_ptr()).value }
    }

    fn new_queue(marked_empty: bool) -> Box<TestQueue> {
        let q = Box::new(TestQueue::new());
        // SAFETY: the queue is boxed (stable address) and not shared yet.
        unsafe { q.init(marked_empty) };
        q
    }

    #[test]
    fn a_chain_is_pushed_as_one_and_popped_in_order() {
        let q = new_queue(true);
        let mut chain = Chain::new();
        assert!(chain.pop_front().is_none());
        // SAFETY: single thread; nodes come from `node` and pass to the chain, then
        // to the queue.
        unsafe {
            for v in 1..=3 {
                chain.push_back(node(v));
            }
            let first = chain.pop_front().unwrap();
            assert_eq!(take(first), 1);
            assert_eq!(q.push(node(0)), Push::WasEmpty);
            assert_eq!(q.push_chain(chain), Some(Push::Queued));
            assert_eq!(q.push(node(4)), Push::Queued);
            assert_eq!(q.push_chain(Chain::new()), None);
            for want in [0, 2, 3, 4] {
                assert_eq!(take(q.pop().unwrap()), want);
            }
            assert!(q.pop().is_none());
            assert!(q.mark_empty());
            let mut one = Chain::new();
            one.push_back(node(5));
            assert_eq!(q.push_chain(one), Some(Push::WasEmpty));
            assert_eq!(take(q.pop().unwrap()), 5);
        }
    }

    #[test]
    fn chains_from_many_producers_are_never_interleaved() {
        let producers = if cfg!(miri) { 2 } else { 4 };
        let chains = if cfg!(miri) { 10 } else { 5_000 };
        let len = 3u64;
        let q = Arc::new(TestQueue::new());
        // SAFETY: the queue is at its final address (inside the Arc) and not shared yet.
        unsafe { q.init(false) };
        let handles: Vec<_> = (0..producers)
            .map(|p| {
                let q = q.clone();
                std::thread::spawn(move || {
                    for c in 0..chains {
                        let mut chain = Chain::new();
                        for i in 0..len {
                            // SAFETY: fresh node, owned by the chain.
                            unsafe { chain.push_back(node(p << 32 | (c * len + i))) };
                        }
                        // SAFETY: the chain's nodes pass to the queue.
                        let _ = unsafe { q.push_chain(chain) };
                    }
                })
            })
            .collect();
        let mut got = 0;
        let mut run: Option<(u64, u64)> = None;
        while got < producers * chains * len {
            // SAFETY: this thread is the only consumer; nodes came from `node`.
            let Some(n) = (unsafe { q.pop() }) else {
                std::thread::yield_now();
                continue;
            };
            // SAFETY: as above.
            let v = unsafe { take(n) };
            let (p, i) = (v >> 32, v & 0xffff_ffff);
            if i % len == 0 {
                assert!(run.is_none_or(|(_, j)| j % len == len - 1), "chain cut");
            } else {
                assert_eq!(run, Some((p, i - 1)), "another node inside a chain");
            }
            run = Some((p, i));
            got += 1;
        }
        for h in handles {
            h.join().unwrap();
        }
    }
}
