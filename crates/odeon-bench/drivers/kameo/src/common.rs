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
/// kameo has no actor system to shut down, and `wait_for_shutdown` needs an `ActorRef`
/// the driver does not have for actors that other actors create (Fibonacci, Chameneos,
/// ...), so every actor carries an [`Exit`] token instead. The token lives in the
/// actor's state, which kameo drops when the actor's task ends, after `on_stop`: the
/// count reaches zero only once every actor has really exited.
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

/// Implements kameo's `Actor` for an actor whose spawn arguments are its own initial
/// state: the plain shape every Savina actor has.
macro_rules! plain_actor {
    ($($actor:ty),+ $(,)?) => {
        $(impl kameo::Actor for $actor {
            type Args = Self;
            type Error = kameo::error::Infallible;

            async fn on_start(
                state: Self,
                _: kameo::actor::ActorRef<Self>,
            ) -> Result<Self, Self::Error> {
                Ok(state)
            }
        })+
    };
}
pub(crate) use plain_actor;

/// Spawns an actor with an unbounded mailbox: Savina's mailboxes are unbounded (a bounded
/// one would make `tell` wait, and can deadlock the cyclic protocols), and kameo's
/// unbounded mailbox is its fastest one (a send never waits).
pub fn spawn<A>(state: A) -> kameo::actor::ActorRef<A>
where
    A: kameo::Actor<Args = A>,
{
    spawn_with::<A>(state)
}

/// [`spawn`] for an actor whose spawn arguments are not its state.
pub fn spawn_with<A: kameo::Actor>(args: A::Args) -> kameo::actor::ActorRef<A> {
    use kameo::actor::Spawn;
    A::spawn_with_mailbox(args, kameo::mailbox::unbounded())
}

/// A fire-and-forget send. On an unbounded mailbox `try_send` never waits, so it needs
/// no `.await`. A send to an actor that has exited fails; Savina drops such messages
/// (several protocols send a redundant exit), so the error is ignored.
pub fn tell<A, M>(to: &kameo::actor::ActorRef<A>, msg: M)
where
    A: kameo::message::Message<M>,
    M: Send + 'static,
{
    let _ = to.tell(msg).try_send();
}
