//! The one place the runtime takes its locks from.
//!
//! parking_lot's locks normally (no poisoning, one word each: a cell's `ctl` lock is on
//! every actor). Under Miri, std's: Miri rejects parking_lot_core's futex call (it
//! passes a `&AtomicI32` where Miri's variadic check wants `*mut u32`) as soon as a lock
//! is contended, which happens under some of Miri's scheduler seeds and not others. The
//! runtime's own unsafe code is what Miri must check, so it gets locks Miri accepts.

#[cfg(not(miri))]
pub(crate) use parking_lot::{Condvar, Mutex};

#[cfg(miri)]
pub(crate) use std_locks::{Condvar, Mutex};

/// parking_lot's API (the part odeon uses) over std's locks. A poisoned lock is used
/// as is: a panic while holding one of the runtime's locks leaves no broken invariant
/// that poisoning could report, and parking_lot does not poison either.
#[cfg(miri)]
mod std_locks {
    use std::ops::{Deref, DerefMut};
    use std::sync::PoisonError;
    use std::time::Instant;

    #[derive(Debug, Default)]
    pub(crate) struct Mutex<T>(std::sync::Mutex<T>);

    impl<T> Mutex<T> {
        pub(crate) const fn new(value: T) -> Self {
            Self(std::sync::Mutex::new(value))
        }

        pub(crate) fn lock(&self) -> MutexGuard<'_, T> {
            MutexGuard(Some(self.0.lock().unwrap_or_else(PoisonError::into_inner)))
        }
    }

    /// Holds its std guard in an `Option` so that [`Condvar::wait_until`] can lend it
    /// to std's by-value `wait_timeout` through a `&mut`.
    pub(crate) struct MutexGuard<'a, T>(Option<std::sync::MutexGuard<'a, T>>);

    impl<T> Deref for MutexGuard<'_, T> {
        type Target = T;
        fn deref(&self) -> &T {
            self.0
                .as_deref()
                .unwrap_or_else(|| unreachable!("guard is only empty inside wait_until"))
        }
    }

    impl<T> DerefMut for MutexGuard<'_, T> {
        fn deref_mut(&mut self) -> &mut T {
            self.0
                .as_deref_mut()
                .unwrap_or_else(|| unreachable!("guard is only empty inside wait_until"))
        }
    }

    #[derive(Debug, Default)]
    pub(crate) struct Condvar(std::sync::Condvar);

    impl Condvar {
        pub(crate) const fn new() -> Self {
            Self(std::sync::Condvar::new())
        }

        pub(crate) fn wait_until<T>(&self, guard: &mut MutexGuard<'_, T>, deadline: Instant) {
            let inner = guard
                .0
                .take()
                .unwrap_or_else(|| unreachable!("guard is only empty inside wait_until"));
            let timeout = deadline.saturating_duration_since(Instant::now());
            let (inner, _) = self
                .0
                .wait_timeout(inner, timeout)
                .unwrap_or_else(PoisonError::into_inner);
            guard.0 = Some(inner);
        }

        pub(crate) fn notify_all(&self) {
            self.0.notify_all();
        }
    }
}
