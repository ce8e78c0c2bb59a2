//! How a supervisor behaves ([`SupervisorSpec`], [`Strategy`]) and how each child is
//! treated when it stops ([`Restart`]).

use std::time::Duration;

use crate::StopReason;

/// Which children a supervisor restarts when one fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// Only the failed child.
    OneForOne,
    /// Every child.
    OneForAll,
    /// The failed child and every child started after it.
    RestForOne,
}

/// When a supervised child is restarted, as in Erlang/OTP. Given per child with
/// [`Children::spawn_with_restart`](crate::Children::spawn_with_restart);
/// [`Children::spawn`](crate::Children::spawn) uses the default, `Transient`.
///
/// A stop that comes from the supervisor itself (it stops, gives up, or stops a
/// temporary sibling) or from [`System::shutdown`](crate::System::shutdown) is never
/// turned into a restart, whatever the type.
///
/// ```
/// use odeon::{Actor, Restart, Strategy, SupervisorSpec, System};
///
/// struct Cache;
/// impl Actor for Cache {}
/// struct Job;
/// impl Actor for Job {}
///
/// let system = System::new();
/// let (_sup, (cache, job)) = system.supervise(SupervisorSpec::new(Strategy::OneForOne), |c| {
///     (
///         c.spawn_with_restart(Restart::Permanent, || Cache), // always comes back
///         c.spawn_with_restart(Restart::Temporary, || Job),   // runs once
///     )
/// });
/// job.stop();
/// cache.stop();                        // a permanent child is restarted, even so
/// system.run_until_quiescent();
/// assert!(!job.is_alive());
/// assert!(cache.is_alive());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Restart {
    /// Always restarted, whenever it stops: after a failure, a normal stop
    /// ([`Context::stop`](crate::Context::stop), [`ActorRef::stop`](crate::ActorRef::stop))
    /// or a kill. Only its supervisor (or shutdown) stops it for good.
    Permanent,
    /// Restarted after a failure only, that is a stop for which
    /// [`StopReason::is_failure`] holds: a panic, [`Context::fail`](crate::Context::fail),
    /// a linked actor's failure, or a sub-supervisor giving up
    /// ([`StopReason::RestartLimit`]). A normal stop or a kill ends it. The default.
    #[default]
    Transient,
    /// Never restarted. When it fails, it stops for good; the supervisor carries on, and
    /// its failure restarts no sibling. A sibling's failure that restarts it under
    /// [`Strategy::OneForAll`] or [`Strategy::RestForOne`] stops it instead, with
    /// [`StopReason::ParentStopped`].
    Temporary,
}

impl Restart {
    /// Whether a child of this type that stops for `reason` is restarted.
    pub(crate) fn restarts_after(self, reason: &StopReason) -> bool {
        if matches!(
            reason,
            StopReason::ParentStopped | StopReason::Shutdown | StopReason::Restarting
        ) {
            return false;
        }
        match self {
            Restart::Permanent => true,
            Restart::Transient => reason.is_failure(),
            Restart::Temporary => false,
        }
    }
}

/// How a supervisor behaves: its strategy, restart limit and restart backoff.
///
/// ```
/// use std::time::Duration;
/// use odeon::{Strategy, SupervisorSpec};
/// let spec = SupervisorSpec::new(Strategy::OneForOne)
///     .max_restarts(5, Duration::from_secs(10))
///     .backoff(Duration::from_millis(10), Duration::from_secs(1));
/// # drop(spec);
/// ```
#[derive(Clone, Debug)]
pub struct SupervisorSpec {
    pub(crate) strategy: Strategy,
    pub(crate) max_restarts: usize,
    pub(crate) within: Duration,
    backoff: Option<(Duration, Duration)>,
}

impl SupervisorSpec {
    /// A spec allowing 3 restarts within 5 seconds, restarting at once (no backoff).
    pub fn new(strategy: Strategy) -> Self {
        Self {
            strategy,
            max_restarts: 3,
            within: Duration::from_secs(5),
            backoff: None,
        }
    }

    /// At most `max` restarts within `within`; one more failure and the supervisor gives
    /// up: it stops its children and fails with [`StopReason::RestartLimit`] (which its
    /// own supervisor, if any, handles like any failure).
    pub fn max_restarts(mut self, max: usize, within: Duration) -> Self {
        self.max_restarts = max;
        self.within = within;
        self
    }

    /// Waits before each restart: the k-th restart within the window (see
    /// [`SupervisorSpec::max_restarts`]) waits `first · 2^(k-1)`, capped at `max`. A
    /// zero `first` restarts at once.
    ///
    /// While it waits, the failed child has no state: messages sent to it are kept, in
    /// order, and handled by the new instance (a bounded mailbox does not count them, so
    /// a `tell` is not refused meanwhile), and an `ask` among them fails only if its own
    /// deadline passes first. Under [`Strategy::OneForAll`] and
    /// [`Strategy::RestForOne`] the siblings to restart keep running until the delay is
    /// over. Stopping the supervisor (or shutting down) cancels the pending restart:
    /// the waiting children stop and their kept messages are dropped (pending asks fail
    /// with [`AskError::Stopped`](crate::AskError::Stopped)).
    ///
    /// A pending restart counts as work in flight:
    /// [`System::run_until_quiescent`](crate::System::run_until_quiescent) waits for it.
    pub fn backoff(mut self, first: Duration, max: Duration) -> Self {
        self.backoff = Some((first, max));
        self
    }

    /// The wait before the `k`-th restart within the window (`k >= 1`).
    pub(crate) fn delay(&self, k: usize) -> Duration {
        let Some((first, max)) = self.backoff else {
            return Duration::ZERO;
        };
        let doublings = u32::try_from(k.saturating_sub(1)).unwrap_or(u32::MAX);
        2u32.checked_pow(doublings)
            .and_then(|factor| first.checked_mul(factor))
            .map_or(max, |d| d.min(max))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kth_restart_waits_first_times_two_to_the_k_minus_one_capped_at_max() {
        let ms = Duration::from_millis;
        let spec = SupervisorSpec::new(Strategy::OneForOne).backoff(ms(10), ms(100));
        let delays: Vec<Duration> = (1..=6).map(|k| spec.delay(k)).collect();
        assert_eq!(delays, [ms(10), ms(20), ms(40), ms(80), ms(100), ms(100)]);
        // No overflow however many restarts the window holds.
        assert_eq!(spec.delay(usize::MAX), ms(100));
        assert_eq!(
            SupervisorSpec::new(Strategy::OneForOne).delay(3),
            Duration::ZERO
        );
    }

    #[test]
    fn only_failures_restart_a_transient_child_and_nothing_restarts_a_temporary_one() {
        let failed = StopReason::Failed("bad".into());
        assert!(Restart::Transient.restarts_after(&failed));
        assert!(!Restart::Transient.restarts_after(&StopReason::Normal));
        assert!(!Restart::Transient.restarts_after(&StopReason::Killed));
        assert!(Restart::Permanent.restarts_after(&StopReason::Normal));
        assert!(!Restart::Temporary.restarts_after(&failed));
        for from_above in [StopReason::ParentStopped, StopReason::Shutdown] {
            assert!(!Restart::Permanent.restarts_after(&from_above));
        }
    }
}
