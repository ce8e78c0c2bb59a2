//! The intrusive MPSC queue under every mailbox (Vyukov's node-based queue with an
//! embedded stub), extended with Pony's "empty mark" so that enqueueing and deciding to
//! schedule are one atomic step.
//!
//! The queue is two structs, [`Head`] (what producers write) and [`Queue`] (the
//! consumer's end), so that their owner can keep them on different cache lines
//! without padding (see `Cell` in `cell/mod.rs`): when producer and consumer run on
//! two cores, a `head` that shares a line with `tail` moves that line between the
//! cores on every message.
//!
//! Invariants (see `mailbox/mod.rs` for the protocol around them):
//! 1. `head` is written only by [`Queue::push`] (producers, `swap`) and
//!    [`Queue::mark_empty`] (the consumer, `compare_exchange`).
//! 2. `tail` and `stub.next` while the stub is the tail are touched only by the consumer.
//! 3. The low bit of `head` is the EMPTY mark. It is set only by the consumer, only when
//!    the queue holds nothing but the stub, and cleared by the first push after it,
//!    which therefore learns "the queue was empty" and becomes responsible for
//!    scheduling the consumer.

use std::cell::UnsafeCell;
use std::ptr::{self, NonNull};

use crate::loom::{AtomicPtr, Ordering};

pub(crate) use super::chain::Chain;

const EMPTY: usize = 1;

/// The intrusive link every queued node starts with (`#[repr(C)]`, offset 0).
#[repr(C)]
#[derive(Debug)]
pub(crate) struct Link {
    pub(super) next: AtomicPtr<Link>,
}

impl Link {
    pub(crate) fn new() -> Self {
        Self {
            next: AtomicPtr::new(ptr::null_mut()),
        }
    }
}

/// Outcome of a push: whether it found the queue marked empty.
#[must_use = "the push that finds the mailbox empty must schedule the actor"]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Push {
    /// The queue was marked empty: the caller now owns the consumer and must schedule it.
    WasEmpty,
    /// The consumer is already scheduled or running; nothing more to do.
    Queued,
}

/// The producers' end of a [`Queue`]: the last node pushed, with the EMPTY mark.
#[derive(Debug)]
pub(crate) struct Head(AtomicPtr<Link>);

impl Head {
    pub(crate) fn new() -> Self {
        Self(AtomicPtr::new(ptr::null_mut()))
    }
}

/// A multi-producer, single-consumer intrusive queue: the consumer's end plus the
/// embedded stub. Every operation also takes the queue's [`Head`], which its owner
/// keeps elsewhere (module docs). Neither may move after [`Queue::init`], because the
/// head and `tail` point at the embedded stub.
#[derive(Debug)]
pub(crate) struct Queue {
    tail: UnsafeCell<*mut Link>,
    stub: Link,
}

// SAFETY: `tail` is only touched by the single consumer (invariant 2, enforced by the
// callers' `unsafe` contracts); everything else is atomic.
unsafe impl Sync for Queue {}
// SAFETY: the queue owns no thread-bound data; nodes are `Send` by the callers' contract.
unsafe impl Send for Queue {}

impl Queue {
    /// A queue that still needs [`Queue::init`] at its final address.
    pub(crate) fn new() -> Self {
        Self {
            tail: UnsafeCell::new(ptr::null_mut()),
            stub: Link::new(),
        }
    }

    #[inline]
    fn stub_ptr(&self) -> *mut Link {
        ptr::from_ref(&self.stub).cast_mut()
    }

    /// Dereferences a queued pointer. The stub is always reached through `&self.stub`:
    /// the copies of its address kept in `head`/`tail` are only compared, never
    /// dereferenced, because a later `&mut` to the queue (its owner's `Drop`) would
    /// invalidate their provenance (Miri, Stacked Borrows).
    ///
    /// # Safety
    /// `p` is the stub or a node that is alive.
    #[inline]
    unsafe fn link(&self, p: *mut Link) -> &Link {
        if p == self.stub_ptr() {
            &self.stub
        } else {
            // SAFETY: caller contract.
            unsafe { &*p }
        }
    }

    /// Points head and tail at the stub. The queue starts *not* marked empty: its creator
    /// owns the consumer (an actor is scheduled once when it is spawned).
    ///
    /// # Safety
    /// Called once, before any other use, with the queue and its head at the addresses
    /// they keep for their life.
    pub(crate) unsafe fn init(&self, head: &Head, marked_empty: bool) {
        let stub = self.stub_ptr();
        // SAFETY: no other thread can see the queue yet (caller contract).
        unsafe { *self.tail.get() = stub };
        let first = if marked_empty {
            stub.map_addr(|a| a | EMPTY)
        } else {
            stub
        };
        head.0.store(first, Ordering::Release);
    }

    /// Appends `node`. Wait-free: one `swap` and one store.
    ///
    /// # Safety
    /// `head` is this queue's; `node` points to a live `Link` that is in no queue, and
    /// stays alive until the consumer pops it.
    #[inline]
    pub(crate) unsafe fn push(&self, head: &Head, node: NonNull<Link>) -> Push {
        // SAFETY: the caller owns `node` until it is linked.
        unsafe { self.link(node.as_ptr()) }
            .next
            .store(ptr::null_mut(), Ordering::Relaxed);
        // SAFETY: a one-node chain; caller contract.
        unsafe { self.link_last(head, node.as_ptr(), node.as_ptr()) }
    }

    /// Appends every node of `chain`, in order, as one step: the same single `swap` as
    /// a push, so no other producer's node can land between them (atomic batches,
    /// `sharing/batch.rs`). The consumer pops them one by one, as pushed singly.
    ///
    /// # Safety
    /// `head` is this queue's; the chain's nodes stay alive until the consumer pops
    /// them.
    #[inline]
    pub(crate) unsafe fn push_chain(&self, head: &Head, chain: Chain) -> Option<Push> {
        let (first, last) = chain.into_ends()?;
        // SAFETY: the chain linked first..last and ended `last` with null; it owned
        // the nodes, which now pass to the queue (caller contract).
        Some(unsafe { self.link_last(head, first.as_ptr(), last.as_ptr()) })
    }

    /// Publishes the linked nodes `first..=last` (`last.next` is null).
    ///
    /// # Safety
    /// As for [`Queue::push`], for every node of the run.
    #[inline]
    unsafe fn link_last(&self, head: &Head, first: *mut Link, node: *mut Link) -> Push {
        // AcqRel: Release publishes the node's payload to the consumer's Acquire load of
        // `next`; Acquire pairs with `mark_empty`'s Release so that a push that finds the
        // mark sees everything the last activation did before it went idle.
        let prev = head.0.swap(node, Ordering::AcqRel);
        let was_empty = prev.addr() & EMPTY != 0;
        let prev = prev.map_addr(|a| a & !EMPTY);
        // SAFETY: `prev` is the previous last node. The consumer only retires a node after
        // seeing a non-null `next` in it, which is the store below, so `prev` is alive.
        // Release pairs with the Acquire loads of `next` in `pop`.
        unsafe { self.link(prev) }
            .next
            .store(first, Ordering::Release);
        if was_empty {
            Push::WasEmpty
        } else {
            Push::Queued
        }
    }

    /// Takes the oldest node, or `None` if the queue is empty *or* a producer is half-way
    /// through a push (then [`Queue::mark_empty`] fails and the caller tries again).
    ///
    /// # Safety
    /// Only the consumer calls this (the thread running the actor's activation), with
    /// this queue's head.
    #[inline]
    pub(crate) unsafe fn pop(&self, head: &Head) -> Option<NonNull<Link>> {
        let stub = self.stub_ptr();
        // SAFETY: consumer-only field (caller contract).
        let tail_slot = unsafe { &mut *self.tail.get() };
        let mut tail = *tail_slot;
        // SAFETY: `tail` is the stub or a node pushed and not yet returned; both alive.
        let mut next = unsafe { self.link(tail) }.next.load(Ordering::Acquire);
        if tail == stub {
            if next.is_null() {
                return None;
            }
            *tail_slot = next;
            tail = next;
            // SAFETY: as above, `next` was linked by a completed push.
            next = unsafe { self.link(tail) }.next.load(Ordering::Acquire);
        }
        if !next.is_null() {
            *tail_slot = next;
            return NonNull::new(tail);
        }
        let last = head.0.load(Ordering::Acquire).map_addr(|a| a & !EMPTY);
        if tail != last {
            // A producer swapped `head` but has not linked its node yet.
            return None;
        }
        // `tail` is the last node: put the stub behind it so it can be handed out.
        // SAFETY: the stub is in no queue at this point (tail != stub).
        let _ = unsafe { self.push(head, NonNull::from(&self.stub)) };
        // SAFETY: `tail` is still alive: we have not returned it yet.
        next = unsafe { self.link(tail) }.next.load(Ordering::Acquire);
        if !next.is_null() {
            *tail_slot = next;
            return NonNull::new(tail);
        }
        None
    }

    /// Whether a completed push left a node the consumer has not taken yet. (A push
    /// still between its `swap` and its link is not seen; callers that need it rely on
    /// a happens-before edge from the pusher, see `cell/turn.rs`.)
    ///
    /// # Safety
    /// Only the consumer calls this.
    #[inline]
    pub(crate) unsafe fn has_pending(&self) -> bool {
        let stub = self.stub_ptr();
        // SAFETY: consumer-only field (caller contract).
        let tail = unsafe { *self.tail.get() };
        // A tail that is not the stub is a node not yet returned; the stub with a
        // successor means a linked node waits behind it. Acquire pairs with the
        // Release store of `next` in `push`.
        tail != stub || !self.stub.next.load(Ordering::Acquire).is_null()
    }

    /// Marks the queue empty if it holds nothing but the stub. Returns `false` if a push
    /// got in first; the consumer then still owns the queue and must keep popping.
    ///
    /// # Safety
    /// Only the consumer calls this, with this queue's head, and gives up the consumer
    /// role when it returns `true`.
    #[inline]
    pub(crate) unsafe fn mark_empty(&self, head: &Head) -> bool {
        let stub = self.stub_ptr();
        // `head == stub` alone is not enough: `pop` may have re-pushed the stub behind a
        // node whose producer had not linked it yet, leaving `tail` on that node. Only
        // with the consumer itself at the stub is the queue really empty. (Found by the
        // loom test below.)
        // SAFETY: consumer-only field (caller contract).
        if unsafe { *self.tail.get() } != stub {
            return false;
        }
        // Release pairs with the Acquire of the `swap` in `push` (see there).
        head.0
            .compare_exchange(
                stub,
                stub.map_addr(|a| a | EMPTY),
                Ordering::AcqRel,
                Ordering::Relaxed,
            )
            .is_ok()
    }
}

/// A queue with its head beside it, for the tests: they do not care about lines.
#[cfg(test)]
pub(crate) struct TestQueue {
    head: Head,
    queue: Queue,
}

#[cfg(test)]
impl TestQueue {
    pub(crate) fn new() -> Self {
        Self {
            head: Head::new(),
            queue: Queue::new(),
        }
    }

    /// # Safety
    /// As for [`Queue::init`].
    pub(crate) unsafe fn init(&self, marked_empty: bool) {
        // SAFETY: caller contract.
        unsafe { self.queue.init(&self.head, marked_empty) }
    }

    /// # Safety
    /// As for [`Queue::push`].
    pub(crate) unsafe fn push(&self, node: NonNull<Link>) -> Push {
        // SAFETY: caller contract.
        unsafe { self.queue.push(&self.head, node) }
    }

    /// # Safety
    /// As for [`Queue::push_chain`].
    pub(crate) unsafe fn push_chain(&self, chain: Chain) -> Option<Push> {
        // SAFETY: caller contract.
        unsafe { self.queue.push_chain(&self.head, chain) }
    }

    /// # Safety
    /// As for [`Queue::pop`].
    pub(crate) unsafe fn pop(&self) -> Option<NonNull<Link>> {
        // SAFETY: caller contract.
        unsafe { self.queue.pop(&self.head) }
    }

    /// # Safety
    /// As for [`Queue::mark_empty`].
    pub(crate) unsafe fn mark_empty(&self) -> bool {
        // SAFETY: caller contract.
        unsafe { self.queue.mark_empty(&self.head) }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
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
    fn only_the_push_that_finds_the_mark_is_told_the_queue_was_empty() {
        let q = new_queue(true);
        // SAFETY: single thread plays producer and consumer; nodes come from `node`.
        unsafe {
            assert_eq!(q.push(node(1)), Push::WasEmpty);
            assert_eq!(q.push(node(2)), Push::Queued);
            assert_eq!(take(q.pop().unwrap()), 1);
            assert!(!q.mark_empty(), "a node is still queued");
            assert_eq!(take(q.pop().unwrap()), 2);
            assert!(q.pop().is_none());
            assert!(q.mark_empty());
            assert_eq!(q.push(node(3)), Push::WasEmpty);
            assert_eq!(take(q.pop().unwrap()), 3);
            assert!(q.pop().is_none());
        }
    }

    #[test]
    fn a_new_queue_is_owned_by_its_creator_until_marked_empty() {
        let q = new_queue(false);
        // SAFETY: single-threaded use.
        unsafe {
            assert_eq!(q.push(node(1)), Push::Queued);
            assert_eq!(take(q.pop().unwrap()), 1);
            assert!(q.mark_empty());
        }
    }

    #[test]
    fn messages_from_each_producer_arrive_in_order_and_none_is_lost() {
        let producers = if cfg!(miri) { 3 } else { 4 };
        let per = if cfg!(miri) { 50 } else { 20_000 };
        let q = Arc::new(TestQueue::new());
        // SAFETY: the queue is at its final address (inside the Arc) and not shared yet.
        unsafe { q.init(true) };
        let mut handles = Vec::new();
        for p in 0..producers {
            let q = q.clone();
            handles.push(std::thread::spawn(move || {
                let mut empties = 0;
                for i in 0..per {
                    // SAFETY: each node is fresh and leaked to the queue.
                    if unsafe { q.push(node(p << 32 | i)) } == Push::WasEmpty {
                        empties += 1;
                    }
                }
                empties
            }));
        }
        let mut last = vec![None::<u64>; producers as usize];
        let mut got = 0;
        while got < producers * per {
            // SAFETY: this thread is the only consumer.
            if let Some(n) = unsafe { q.pop() } {
                // SAFETY: popped nodes came from `node`.
                let v = unsafe { take(n) };
                let (p, i) = ((v >> 32) as usize, v & 0xffff_ffff);
                assert!(last[p].is_none_or(|l| l + 1 == i), "FIFO per producer");
                last[p] = Some(i);
                got += 1;
            } else {
                std::thread::yield_now();
            }
        }
        let empties: u64 = handles.into_iter().map(|h| h.join().unwrap()).sum();
        assert_eq!(empties, 1, "only the first push found the mark");
    }
}

/// Model-checks the scheduling protocol: run with
/// `RUSTFLAGS="--cfg loom" cargo test -p odeon --lib --release loom`.
#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use loom::sync::Arc;
    use loom::sync::atomic::{AtomicBool, AtomicUsize};

    #[repr(C)]
    struct Node {
        link: Link,
    }

    fn node() -> NonNull<Link> {
        NonNull::from(Box::leak(Box::new(Node { link: Link::new() }))).cast()
    }

    struct Consumer {
        queue: TestQueue,
        consuming: AtomicBool,
        consumed: AtomicUsize,
    }

    /// What a scheduled actor's turn does: pop everything, then give up the consumer
    /// role with `mark_empty`, or keep it if a push got in.
    fn consume(c: &Consumer) {
        assert!(
            !c.consuming.swap(true, Ordering::SeqCst),
            "two consumers at once"
        );
        loop {
            // SAFETY: we own the consumer role (asserted above).
            while let Some(n) = unsafe { c.queue.pop() } {
                // SAFETY: nodes come from `node` and are popped exactly once.
                drop(unsafe { Box::from_raw(n.cast::<Node>().as_ptr()) });
                c.consumed.fetch_add(1, Ordering::SeqCst);
            }
            c.consuming.store(false, Ordering::SeqCst);
            // SAFETY: still the consumer until this succeeds.
            if unsafe { c.queue.mark_empty() } {
                return;
            }
            assert!(
                !c.consuming.swap(true, Ordering::SeqCst),
                "two consumers at once"
            );
            loom::thread::yield_now();
        }
    }

    /// A two-node chain and a single node from two producers: all three are consumed,
    /// by one consumer at a time, and the queue's EMPTY protocol holds with a chain
    /// (that nothing lands inside a chain is `chain.rs`'s stress test).
    #[test]
    fn a_chain_is_consumed_whole_and_unbroken() {
        loom::model(|| {
            let c = Arc::new(Consumer {
                queue: TestQueue::new(),
                consuming: AtomicBool::new(false),
                consumed: AtomicUsize::new(0),
            });
            // SAFETY: inside the Arc (final address), not shared yet.
            unsafe { c.queue.init(true) };
            let chained = {
                let c = c.clone();
                loom::thread::spawn(move || {
                    let mut chain = Chain::new();
                    // SAFETY: fresh nodes, owned by the chain, then by the queue.
                    unsafe {
                        chain.push_back(node());
                        chain.push_back(node());
                        if c.queue.push_chain(chain) == Some(Push::WasEmpty) {
                            consume(&c);
                        }
                    }
                })
            };
            let single = {
                let c = c.clone();
                loom::thread::spawn(move || {
                    // SAFETY: fresh node, handed to the queue.
                    if unsafe { c.queue.push(node()) } == Push::WasEmpty {
                        consume(&c);
                    }
                })
            };
            chained.join().unwrap();
            single.join().unwrap();
            assert_eq!(c.consumed.load(Ordering::SeqCst), 3, "a message was lost");
        });
    }

    #[test]
    fn every_message_is_consumed_by_exactly_one_scheduled_consumer() {
        loom::model(|| {
            let c = Arc::new(Consumer {
                queue: TestQueue::new(),
                consuming: AtomicBool::new(false),
                consumed: AtomicUsize::new(0),
            });
            // SAFETY: inside the Arc (final address), not shared yet.
            unsafe { c.queue.init(true) };
            let producers: Vec<_> = (0..2)
                .map(|_| {
                    let c = c.clone();
                    loom::thread::spawn(move || {
                        // SAFETY: fresh node, handed to the queue.
                        if unsafe { c.queue.push(node()) } == Push::WasEmpty {
                            consume(&c);
                        }
                    })
                })
                .collect();
            for p in producers {
                p.join().unwrap();
            }
            assert_eq!(c.consumed.load(Ordering::SeqCst), 2, "a message was lost");
            // The queue ends marked empty: the next push must schedule again.
            // SAFETY: all producers joined; this thread is the only user.
            assert_eq!(unsafe { c.queue.push(node()) }, Push::WasEmpty);
            consume(&c);
        });
    }
}
