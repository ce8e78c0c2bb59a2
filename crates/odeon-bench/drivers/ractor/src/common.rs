//! What every benchmark shares: the runtime per iteration, the timed region, and the
//! exit latch that tells when every actor has finished.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use savina::{Outcome, Params};
use tokio::sync::Notify;

/// An iteration that has not finished after this long is reported invalid (a lost
/// message or a stuck actor must not hang the runner).
const ITERATION_LIMIT: Duration = Duration::from_secs(900);

/// Savina's termination detection (§1.1): a count of live actors that goes up when an
/// actor is created and down when it has exited; the iteration ends at zero.
///
/// ractor has no actor system to shut down, and an actor's `JoinHandle` stays with the
/// actor that spawned it (Fibonacci, Chameneos, ... create actors inside actors), so
/// every actor carries an [`Exit`] token in its state instead. ractor drops the state
/// when the actor's task ends, after `post_stop`: the count reaches zero only once every
/// actor has really exited.
#[derive(Clone, Default)]
pub struct Latch {
    inner: Arc<LatchInner>,
}

#[derive(Default)]
struct LatchInner {
    live: AtomicUsize,
    zero: Notify,
}

impl Latch {
    /// Counts one more live actor; the token must go into that actor's state.
    pub fn enter(&self) -> Exit {
        self.inner.live.fetch_add(1, Ordering::Relaxed);
        Exit {
            inner: Arc::clone(&self.inner),
        }
    }

    /// Waits until no counted actor is alive. The count may touch zero and rise again
    /// while the driver is still creating actors (Fork-Join Creation), so a wake-up is
    /// only a hint and the count is checked again.
    pub async fn wait(&self) {
        loop {
            if self.inner.live.load(Ordering::Acquire) == 0 {
                return;
            }
            self.inner.zero.notified().await;
        }
    }
}

/// One live actor, counted by its [`Latch`] until dropped.
pub struct Exit {
    inner: Arc<LatchInner>,
}

impl Exit {
    /// A token for another actor, counted by the same latch (for actors that create
    /// actors).
    pub fn enter(&self) -> Exit {
        Latch {
            inner: Arc::clone(&self.inner),
        }
        .enter()
    }
}

impl Drop for Exit {
    fn drop(&mut self) {
        if self.inner.live.fetch_sub(1, Ordering::AcqRel) == 1 {
            // `notify_one` keeps a permit when nobody waits yet, so a waiter that
            // arrives later still wakes.
            self.inner.zero.notify_one();
        }
    }
}

/// Runs one iteration: builds a fresh multi-thread tokio runtime with `--threads`
/// workers (Savina creates a fresh actor system per iteration), runs `body` on it and
/// waits until every actor counted by the latch has exited. The timed region is all of
/// that, as in Savina; tearing the idle runtime down (joining its threads) is not.
///
/// `body` creates the actors, starts the protocol and returns the check, usually after
/// awaiting the result the last actor reports.
pub fn run<F, Fut>(params: &Params, body: F) -> Outcome
where
    F: FnOnce(Latch) -> Fut,
    Fut: Future<Output = Result<String, String>>,
{
    let start = Instant::now();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(params.threads)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return Outcome::new(start.elapsed(), Err(format!("tokio runtime: {e}"))),
    };
    let check = runtime.block_on(async {
        let latch = Latch::default();
        let work = async {
            let check = body(latch.clone()).await;
            latch.wait().await;
            check
        };
        match tokio::time::timeout(ITERATION_LIMIT, work).await {
            Ok(check) => check,
            Err(_) => Err(format!(
                "not finished after {} s (lost message or stuck actor)",
                ITERATION_LIMIT.as_secs()
            )),
        }
    });
    let elapsed = start.elapsed();
    drop(runtime);
    Outcome::new(elapsed, check)
}

/// Receives what the last actor reports, or an error if it exited without reporting.
pub async fn report<T>(rx: tokio::sync::oneshot::Receiver<T>) -> Result<T, String> {
    rx.await
        .map_err(|_| "an actor exited without reporting its result".to_owned())
}

/// Savina's work unit (Fork-Join benchmarks): sin(37.2)², checked to be positive so
/// that it cannot be optimised away.
pub fn busy_work() -> Result<(), String> {
    let x = std::hint::black_box(37.2f64).sin();
    if x * x > 0.0 {
        Ok(())
    } else {
        Err(format!(
            "work unit: sin(37.2)^2 = {} is not positive",
            x * x
        ))
    }
}

/// Spawns an unnamed, unsupervised actor (ractor's mailboxes are always unbounded).
/// `Actor::spawn` runs `pre_start` in the caller's task before it returns, as ractor
/// documents. Only a taken name or a failing `pre_start` make it fail, and no actor here
/// has either, so a failure is a bug.
pub async fn spawn<A: ractor::Actor>(handler: A, args: A::Arguments) -> ractor::ActorRef<A::Msg> {
    match A::spawn(None, handler, args).await {
        Ok((actor, _join)) => actor,
        Err(e) => panic!("ractor spawn of an unnamed actor failed: {e}"),
    }
}

/// A fire-and-forget send (`cast`). A send to an actor that has exited fails; Savina
/// drops such messages (several protocols send a redundant exit), so the error is
/// ignored.
pub fn tell<M: ractor::Message>(to: &ractor::ActorRef<M>, msg: M) {
    let _ = to.cast(msg);
}

/// The `pre_start` of an actor whose spawn arguments are its initial state: the plain
/// shape of most Savina actors.
macro_rules! state_from_args {
    () => {
        async fn pre_start(
            &self,
            _: ractor::ActorRef<Self::Msg>,
            args: Self::Arguments,
        ) -> Result<Self::State, ractor::ActorProcessingErr> {
            Ok(args)
        }
    };
}
pub(crate) use state_from_args;
