//! Actor identities.

use std::cell::Cell;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

/// Ids are handed to threads in blocks so that parallel spawns do not contend on one
/// counter. Unit: ids.
const BLOCK: u64 = 4096;

static NEXT_BLOCK: AtomicU64 = AtomicU64::new(1);

thread_local! {
    static RANGE: Cell<(u64, u64)> = const { Cell::new((0, 0)) };
}

/// The identity of an actor, unique within the process for its whole life.
///
/// ```
/// let system = odeon::System::new();
/// struct A;
/// impl odeon::Actor for A {}
/// let a = system.spawn(A);
/// let b = system.spawn(A);
/// assert_ne!(a.id(), b.id());
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct ActorId(u64);

impl ActorId {
    pub(crate) fn next() -> Self {
        RANGE.with(|r| {
            let (mut next, mut end) = r.get();
            if next == end {
                next = NEXT_BLOCK.fetch_add(BLOCK, Ordering::Relaxed);
                end = next + BLOCK;
            }
            r.set((next + 1, end));
            ActorId(next)
        })
    }

    /// The id as a number (stable for the life of the process).
    pub fn as_u64(self) -> u64 {
        self.0
    }

    /// The id another node gave one of its actors, as it reported it (for transports;
    /// such an id is unique only together with that node).
    pub fn from_u64(id: u64) -> Self {
        ActorId(id)
    }
}

impl fmt::Display for ActorId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "actor#{}", self.0)
    }
}
