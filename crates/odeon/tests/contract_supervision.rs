//! Restart types and limits as `Restart` and `SupervisorSpec` document them, for the
//! cases other files leave out: a kill, the default limit, a temporary child's failure
//! under one-for-all, a killed supervisor.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use odeon::{
    Actor, ActorRef, Context, Handler, Message, Restart, StopReason, Strategy, SupervisorSpec,
    System,
};

const HANG_GUARD: Duration = Duration::from_secs(20);

fn small_system() -> System {
    System::builder().workers(2).build()
}

fn wait_stopped<A: Actor>(system: &System, actor: &ActorRef<A>) -> StopReason {
    let done = actor.wait_stopped();
    system.block_on(async {
        tokio::time::timeout(HANG_GUARD, done)
            .await
            .expect("the actor stopped in time")
    })
}

/// Knows which instance it is (1 for the first, 2 after one restart, ...).
struct Worker {
    generation: u32,
}
impl Actor for Worker {}

/// A factory counting the instances it builds.
fn counted() -> (Arc<AtomicU32>, impl FnMut() -> Worker + Send + 'static) {
    let built = Arc::new(AtomicU32::new(0));
    let counter = built.clone();
    (built, move || Worker {
        generation: counter.fetch_add(1, Ordering::SeqCst) + 1,
    })
}

struct Generation;
impl Message for Generation {
    type Reply = u32;
}
impl Handler<Generation> for Worker {
    fn handle(&mut self, _: Generation, _: &mut Context<Self>) -> u32 {
        self.generation
    }
}

struct Crash;
impl Message for Crash {
    type Reply = ();
}
impl Handler<Crash> for Worker {
    fn handle(&mut self, _: Crash, _: &mut Context<Self>) {
        panic!("crash")
    }
}

fn generation(system: &System, w: &ActorRef<Worker>) -> u32 {
    system
        .block_on(w.ask(Generation).timeout(HANG_GUARD))
        .expect("the worker answers")
}

/// `Restart::Permanent`: "Always restarted, whenever it stops: after a failure, a
/// normal stop ... or a kill." `Restart::Transient`: "A normal stop or a kill ends it."
#[test]
fn a_kill_restarts_a_permanent_child_and_ends_a_transient_one() {
    let system = small_system();
    let (_, permanent_factory) = counted();
    let (_, transient_factory) = counted();
    let (sup, (permanent, transient)) =
        system.supervise(SupervisorSpec::new(Strategy::OneForOne), |c| {
            (
                c.spawn_with_restart(Restart::Permanent, permanent_factory),
                c.spawn_with_restart(Restart::Transient, transient_factory),
            )
        });
    assert_eq!(generation(&system, &permanent), 1);
    permanent.kill();
    assert_eq!(generation(&system, &permanent), 2, "restarted in place");
    assert!(permanent.is_alive());

    transient.kill();
    assert_eq!(wait_stopped(&system, &transient), StopReason::Killed);
    system.run_until_quiescent();
    assert!(
        sup.is_alive(),
        "a child's kill is no failure of its supervisor"
    );
    assert!(permanent.is_alive());
    system.shutdown();
}

/// `SupervisorSpec::new`: "A spec allowing 3 restarts within 5 seconds"; one more
/// failure and the supervisor "stops its children and fails with
/// [`StopReason::RestartLimit`]".
#[test]
fn the_default_spec_allows_three_restarts_and_gives_up_at_the_fourth_failure() {
    let system = small_system();
    let (built, factory) = counted();
    let (sup, w) = system.supervise(SupervisorSpec::new(Strategy::OneForOne), |c| {
        c.spawn(factory)
    });
    let sup_done = sup.wait_stopped();
    for expected in 2..=4 {
        w.tell(Crash).unwrap();
        assert_eq!(
            generation(&system, &w),
            expected,
            "restart {}",
            expected - 1
        );
    }
    assert!(sup.is_alive());
    w.tell(Crash).unwrap();
    let reason = system.block_on(async {
        tokio::time::timeout(HANG_GUARD, sup_done)
            .await
            .expect("the supervisor gave up in time")
    });
    assert_eq!(reason, StopReason::RestartLimit);
    assert!(reason.is_failure());
    system.run_until_quiescent();
    assert!(!w.is_alive());
    assert_eq!(built.load(Ordering::SeqCst), 4, "no fifth instance");
    system.shutdown();
}

/// `Restart::Temporary`: "When it fails, it stops for good; the supervisor carries
/// on, and its failure restarts no sibling" — even under one-for-all.
#[test]
fn a_temporary_childs_failure_restarts_no_sibling_under_one_for_all() {
    let system = small_system();
    let (_, temp_factory) = counted();
    let (sibling_built, sibling_factory) = counted();
    let (sup, (temporary, sibling)) =
        system.supervise(SupervisorSpec::new(Strategy::OneForAll), |c| {
            (
                c.spawn_with_restart(Restart::Temporary, temp_factory),
                c.spawn_with_restart(Restart::Permanent, sibling_factory),
            )
        });
    assert_eq!(generation(&system, &sibling), 1);
    temporary.tell(Crash).unwrap();
    assert_eq!(
        wait_stopped(&system, &temporary),
        StopReason::Panicked("crash".into())
    );
    system.run_until_quiescent();
    assert!(sup.is_alive(), "the supervisor carries on");
    assert_eq!(
        generation(&system, &sibling),
        1,
        "the sibling was not restarted"
    );
    assert_eq!(sibling_built.load(Ordering::SeqCst), 1);
    system.shutdown();
}

/// `ActorRef::kill`: "the actor's children are killed too"; a supervised child whose
/// supervisor stops is told `ParentStopped` and, permanent or not, not restarted.
#[test]
fn killing_a_supervisor_stops_its_children_for_good() {
    let system = small_system();
    let (built, factory) = counted();
    let (sup, w) = system.supervise(SupervisorSpec::new(Strategy::OneForOne), |c| {
        c.spawn_with_restart(Restart::Permanent, factory)
    });
    assert_eq!(generation(&system, &w), 1);
    sup.kill();
    assert_eq!(wait_stopped(&system, &sup), StopReason::Killed);
    assert_eq!(wait_stopped(&system, &w), StopReason::ParentStopped);
    system.run_until_quiescent();
    assert_eq!(built.load(Ordering::SeqCst), 1, "never restarted");
    system.shutdown();
}
