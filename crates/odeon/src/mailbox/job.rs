//! A closure run on an actor's turn, built before the actor's type is known: each use
//! of a bestowed object (`sharing/bestow.rs`), whose handle knows the object's type but
//! not its owner's.
//!
//! One allocation, as for a message: the node holds the closure inline. Its header is
//! laid out like every node's (`Header<A>` is the same for every `A`: a link and a
//! pointer), and the owner's side writes its own vtable into it when it pushes the node
//! ([`Job::into_node`]). That vtable is one per owner type; it finds the closure's own
//! run function in a second field, one per closure type.

use std::marker::PhantomData;
use std::ptr::{self, NonNull};

use super::node::{Delivered, Header, Kind, NodeVTable};
use super::queue::Link;
use crate::Actor;
use crate::cell::Cell;

/// The owner type a job has before it is pushed (its header is rewritten then).
struct Unowned;
impl Actor for Unowned {}

/// What every job node starts with.
#[repr(C)]
struct Prefix {
    header: Header<Unowned>,
    /// Runs (`true`) or drops (`false`) the closure, and frees the node.
    finish: unsafe fn(NonNull<Prefix>, bool),
}

#[repr(C)]
struct JobNode<F> {
    prefix: Prefix,
    f: F,
}

/// An owned job node that is in no queue. Dropping it drops the closure unrun.
pub(crate) struct Job(NonNull<Prefix>);

// SAFETY: the node owns a `Send` closure (`Job::new`) and nothing else points at it.
unsafe impl Send for Job {}

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Job")
    }
}

impl Job {
    pub(crate) fn new<F: FnOnce() + Send + 'static>(f: F) -> Self {
        let node = super::alloc::alloc(JobNode {
            prefix: Prefix {
                header: Header {
                    link: Link::new(),
                    vtable: &Jobs::<Unowned>::VTABLE,
                },
                finish: finish::<F>,
            },
            f,
        });
        Job(node.cast())
    }

    /// The node, for actor `A`'s mailbox: its turn runs the closure as a runtime
    /// signal (never refused by a bound, never held back).
    pub(crate) fn into_node<A: Actor>(self) -> NonNull<Header<A>> {
        let node = self.0;
        std::mem::forget(self);
        let header = node.cast::<Header<A>>();
        // SAFETY: the node is owned here and alive; `Header<A>` has the layout of
        // `Header<Unowned>` (`repr(C)`: a link and a reference to a sized static), so
        // its vtable field is at the same place, and from now on only `A`'s turn (or
        // its discard) reads it.
        unsafe { ptr::addr_of_mut!((*header.as_ptr()).vtable).write(&Jobs::<A>::VTABLE) };
        header
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        // SAFETY: the node is owned by this `Job` and alive; `finish` frees it.
        unsafe { ((*self.0.as_ptr()).finish)(self.0, false) };
    }
}

/// # Safety
/// `node` is a live `JobNode<F>` owned by the caller, in no queue.
unsafe fn finish<F: FnOnce()>(node: NonNull<Prefix>, run: bool) {
    // SAFETY: caller contract; the node was made by `alloc::<JobNode<F>>`.
    let node = unsafe { super::alloc::take(node.cast::<JobNode<F>>()) };
    if run {
        (node.f)();
    }
}

struct Jobs<A>(PhantomData<A>);
impl<A: Actor> Jobs<A> {
    const VTABLE: NodeVTable<A> = NodeVTable {
        deliver: deliver::<A>,
        discard: discard::<A>,
        kind: Kind::Signal,
        erased: None,
        // Never read: signals get no span (`cell/turn.rs`).
        #[cfg(feature = "observe")]
        message: || "signal",
    };
}

/// The vtable's `deliver` for a job node: runs the closure and frees the node.
///
/// # Safety
/// The vtable contract: `node` is a live job node (only `Job::into_node` writes this
/// vtable) that the caller owns and hands over.
unsafe fn deliver<A: Actor>(node: NonNull<Header<A>>, _: &Cell<A>) -> Delivered {
    let node = node.cast::<Prefix>();
    // SAFETY: vtable contract: the node is a job node (only `Job::into_node` writes
    // this vtable), owned by the caller and alive.
    unsafe { ((*node.as_ptr()).finish)(node, true) };
    Delivered::Done
}

/// The vtable's `discard` for a job node: drops the closure unrun and frees the node.
///
/// # Safety
/// As for [`deliver`].
unsafe fn discard<A: Actor>(node: NonNull<Header<A>>) {
    let node = node.cast::<Prefix>();
    // SAFETY: as in `deliver`.
    unsafe { ((*node.as_ptr()).finish)(node, false) };
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    struct Owner;
    impl Actor for Owner {}

    #[test]
    fn a_job_dropped_or_discarded_never_runs_and_frees_its_closure() {
        let runs = Arc::new(AtomicUsize::new(0));
        let guard = Arc::new(());
        let job = |runs: Arc<AtomicUsize>, guard: Arc<()>| {
            Job::new(move || {
                let _g = guard;
                runs.fetch_add(1, Ordering::SeqCst);
            })
        };
        drop(job(runs.clone(), guard.clone()));
        let node = job(runs.clone(), guard.clone()).into_node::<Owner>();
        // SAFETY: the node is owned here and in no queue.
        unsafe { (Header::vtable(node).discard)(node) };
        assert_eq!(runs.load(Ordering::SeqCst), 0);
        assert_eq!(Arc::strong_count(&guard), 1, "the closures were dropped");
    }
}
