//! Supervision trees: sub-supervisors and escalation, restart types (permanent,
//! transient, temporary), restart backoff, failing with `cx.fail`, stops that win over
//! restarts, and the two defects found while building them (orphaned children, and
//! supervised children collected as unreferenced).
//!
//! Every supervised child is a `Worker` built by a factory that numbers its instances
//! (generation 1, 2, ...) and records its lifecycle into a shared `Probe`
//! (`supervision_tree/fixture.rs`).

#[path = "supervision_tree/fixture.rs"]
mod fixture;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use fixture::*;
use odeon::{
    Actor, ActorRef, AskError, Context, Handler, Message, Restart, StopReason, Strategy,
    Supervisor, SupervisorSpec, System, WeakActorRef,
};

// ---- Supervisors supervising supervisors ----

#[test]
fn a_sub_supervisor_that_gives_up_is_restarted_by_its_parent_and_spawns_fresh_children() {
    let system = small_system();
    let probe = Probe::default();
    let runs = Arc::new(AtomicUsize::new(0));
    let current: Arc<Mutex<Option<ActorRef<Worker>>>> = Arc::default();
    let strict = SupervisorSpec::new(Strategy::OneForOne).max_restarts(1, Duration::from_secs(60));
    let (root, (sub, first)) = system.supervise(spec(Strategy::OneForOne), |c| {
        let (probe, runs, current) = (probe.clone(), runs.clone(), current.clone());
        c.supervise(strict, move |c| {
            runs.fetch_add(1, Ordering::SeqCst);
            let w = c.spawn(probe.factory());
            *current.lock().unwrap() = Some(w.clone());
            w
        })
    });
    let (_watcher, sub_terminated) = watch(&system, &sub);
    let sub_id = sub.id();

    // One restart is within the sub-supervisor's limit...
    first.tell(Crash).unwrap();
    assert_eq!(system.block_on(first.ask(Generation)).unwrap(), 2);
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    // ...the second makes it give up, and the root restarts it.
    first.tell(Crash).unwrap();
    eventually("the sub-supervisor spawned its children again", || {
        runs.load(Ordering::SeqCst) == 2
    });
    system.run_until_quiescent();

    assert!(root.is_alive() && sub.is_alive());
    assert_eq!(sub.id(), sub_id, "restarted in place");
    assert!(
        sub_terminated.try_recv().is_err(),
        "a restart is not a stop"
    );
    assert!(
        !first.is_alive(),
        "the old child stopped with the old instance"
    );
    let fresh = current.lock().unwrap().clone().unwrap();
    assert_ne!(fresh.id(), first.id());
    assert_eq!(system.block_on(fresh.ask(Generation)).unwrap(), 3);
    assert_eq!(system.block_on(fresh.ask(Inc)).unwrap(), 1);
    assert_eq!(
        probe.stopped(),
        vec![
            StopReason::Panicked("crash".into()),
            StopReason::Panicked("crash".into()),
        ]
    );

    // The new instance counts its restarts from zero: one more crash is allowed.
    fresh.tell(Crash).unwrap();
    assert_eq!(system.block_on(fresh.ask(Generation)).unwrap(), 4);
    assert_eq!(runs.load(Ordering::SeqCst), 2);
}

#[test]
fn a_failing_subtree_exhausts_the_parent_limit_too_and_the_root_reports_restart_limit() {
    let system = small_system();
    let probe = Probe::default();
    let current: Arc<Mutex<Option<ActorRef<Worker>>>> = Arc::default();
    let strict = SupervisorSpec::new(Strategy::OneForOne).max_restarts(0, Duration::from_secs(60));
    let parent = SupervisorSpec::new(Strategy::OneForOne).max_restarts(1, Duration::from_secs(60));
    let (root, sub) = system.supervise(parent, |c| {
        let (probe, current) = (probe.clone(), current.clone());
        c.supervise(strict, move |c| {
            *current.lock().unwrap() = Some(c.spawn(probe.factory()));
        })
        .0
    });
    let (_watcher, root_terminated) = watch(&system, &root);
    let worker = || current.lock().unwrap().clone().unwrap();

    let first = worker();
    first.tell(Crash).unwrap();
    eventually("a second worker", || worker().id() != first.id());
    worker().tell(Crash).unwrap();

    let t = root_terminated
        .recv_timeout(HANG_GUARD)
        .expect("root gave up");
    assert_eq!(t.reason, StopReason::RestartLimit);
    system.run_until_quiescent();
    assert!(!sub.is_alive() && !worker().is_alive());
    assert_eq!(probe.started(), 2, "no restart after the root gave up");
}

#[test]
fn a_sub_supervisor_restarted_by_a_siblings_failure_under_one_for_all_spawns_fresh_children() {
    let system = small_system();
    let (ps, pw) = (Probe::default(), Probe::default());
    let current: Arc<Mutex<Option<ActorRef<Worker>>>> = Arc::default();
    let (_root, (sibling, (sub, first))) = system.supervise(spec(Strategy::OneForAll), |c| {
        let sibling = c.spawn(ps.factory());
        let (pw, current) = (pw.clone(), current.clone());
        let sub = c.supervise(spec(Strategy::OneForOne), move |c| {
            let w = c.spawn(pw.factory());
            *current.lock().unwrap() = Some(w.clone());
            w
        });
        (sibling, sub)
    });
    system.block_on(first.ask(Inc)).unwrap();

    sibling.tell(Crash).unwrap();
    assert_eq!(system.block_on(sibling.ask(Generation)).unwrap(), 2);
    eventually("the sub-supervisor respawned its child", || {
        pw.started() == 2
    });
    system.run_until_quiescent();

    assert!(sub.is_alive());
    assert!(!first.is_alive());
    assert_eq!(pw.stopped(), vec![StopReason::ParentStopped]);
    let fresh = current.lock().unwrap().clone().unwrap();
    assert_ne!(fresh.id(), first.id());
    assert_eq!(system.block_on(fresh.ask(Inc)).unwrap(), 1);
}

// ---- Restart types ----

#[test]
fn a_permanent_child_is_restarted_after_a_normal_stop_and_after_a_stop_from_outside() {
    let system = small_system();
    let probe = Probe::default();
    let (sup, w) = system.supervise(spec(Strategy::OneForOne), |c| {
        c.spawn_with_restart(Restart::Permanent, probe.factory())
    });
    w.tell(Quit).unwrap();
    assert_eq!(system.block_on(w.ask(Generation)).unwrap(), 2);
    w.stop();
    system.run_until_quiescent();
    assert!(w.is_alive());
    assert_eq!(system.block_on(w.ask(Generation)).unwrap(), 3);
    assert_eq!(
        probe.stopped(),
        vec![StopReason::Normal, StopReason::Normal]
    );

    // Only its supervisor stops it for good.
    sup.stop();
    system.run_until_quiescent();
    assert!(!w.is_alive());
    assert_eq!(probe.stopped().last(), Some(&StopReason::ParentStopped));
    assert_eq!(probe.started(), 3);
}

#[test]
fn a_transient_child_is_restarted_after_a_failure_but_not_after_a_normal_stop() {
    let system = small_system();
    let (pd, pt) = (Probe::default(), Probe::default());
    // `spawn` is transient by default; `spawn_with_restart` says so explicitly.
    let (sup, (d, t)) = system.supervise(spec(Strategy::OneForOne), |c| {
        (
            c.spawn(pd.factory()),
            c.spawn_with_restart(Restart::Transient, pt.factory()),
        )
    });
    for w in [&d, &t] {
        w.tell(Crash).unwrap();
        assert_eq!(system.block_on(w.ask(Generation)).unwrap(), 2);
        w.tell(Quit).unwrap();
    }
    system.run_until_quiescent();
    assert!(sup.is_alive());
    for (w, p) in [(&d, &pd), (&t, &pt)] {
        assert!(!w.is_alive(), "a normal stop ends a transient child");
        assert_eq!(p.started(), 2);
        assert_eq!(
            p.stopped(),
            vec![StopReason::Panicked("crash".into()), StopReason::Normal]
        );
    }
}

/// Links itself to the actor it is given.
struct Linker;
impl Actor for Linker {}
struct LinkTo(ActorRef<Worker>);
impl Message for LinkTo {
    type Reply = ();
}
impl Handler<LinkTo> for Linker {
    fn handle(&mut self, msg: LinkTo, cx: &mut Context<Self>) {
        cx.link(&msg.0);
    }
}
impl Handler<Crash> for Linker {
    fn handle(&mut self, _: Crash, _: &mut Context<Self>) {
        panic!("linked crash");
    }
}

#[test]
fn a_transient_child_stopped_by_a_linked_actors_failure_is_restarted() {
    let system = small_system();
    let probe = Probe::default();
    let (_sup, w) = system.supervise(spec(Strategy::OneForOne), |c| c.spawn(probe.factory()));
    let linker = system.spawn(Linker);
    system.block_on(linker.ask(LinkTo(w.clone()))).unwrap();

    linker.tell(Crash).unwrap();
    eventually("the child was restarted", || probe.started() == 2);
    assert!(w.is_alive());
    assert_eq!(system.block_on(w.ask(Generation)).unwrap(), 2);
    assert_eq!(probe.stopped(), vec![StopReason::LinkFailed(linker.id())]);
}

#[test]
fn a_temporary_child_is_never_restarted_and_a_sibling_restart_stops_it() {
    let system = small_system();
    let (pa, pb, pc) = (Probe::default(), Probe::default(), Probe::default());
    let (sup, (a, b, c)) = system.supervise(spec(Strategy::OneForAll), |s| {
        (
            s.spawn_with_restart(Restart::Temporary, pa.factory()),
            s.spawn_with_restart(Restart::Temporary, pb.factory()),
            s.spawn(pc.factory()),
        )
    });
    // Its own failure: it stops for good and restarts nobody, even under one-for-all.
    a.tell(Crash).unwrap();
    system.run_until_quiescent();
    assert!(!a.is_alive() && sup.is_alive());
    assert_eq!(pa.stopped(), vec![StopReason::Panicked("crash".into())]);
    assert_eq!((pb.started(), pc.started()), (1, 1));

    // A sibling's failure restarts the transient sibling and stops the temporary one.
    c.tell(Crash).unwrap();
    assert_eq!(system.block_on(c.ask(Generation)).unwrap(), 2);
    system.run_until_quiescent();
    assert!(!b.is_alive());
    assert_eq!(pb.stopped(), vec![StopReason::ParentStopped]);
    assert_eq!(pb.started(), 1);
}

// ---- Failing by returning an error ----

#[test]
fn cx_fail_stops_an_unsupervised_actor_with_failed_which_watchers_see_as_a_failure() {
    let system = small_system();
    let probe = Probe::default();
    let w = system.spawn((probe.factory())());
    let (_watcher, terminated) = watch(&system, &w);

    assert_eq!(system.block_on(w.ask(Fail("disk full"))), Ok("replied"));
    let t = terminated.recv_timeout(HANG_GUARD).expect("stopped");
    assert_eq!(t.reason, StopReason::Failed("disk full".into()));
    assert!(t.reason.is_failure());
    assert_eq!(t.reason.to_string(), "failed: disk full");
    assert_eq!(system.block_on(w.ask(Inc)), Err(AskError::Stopped));
}

#[test]
fn cx_fail_in_a_supervised_child_restarts_it_like_a_panic_and_counts_toward_the_limit() {
    let system = small_system();
    let probe = Probe::default();
    let limit = SupervisorSpec::new(Strategy::OneForOne).max_restarts(1, Duration::from_secs(60));
    let (sup, w) = system.supervise(limit, |c| c.spawn(probe.factory()));
    let (_watcher, terminated) = watch(&system, &sup);

    system.block_on(w.ask(Inc)).unwrap();
    assert_eq!(system.block_on(w.ask(Fail("bad input"))), Ok("replied"));
    assert_eq!(system.block_on(w.ask(Inc)).unwrap(), 1, "fresh state");
    assert_eq!(system.block_on(w.ask(Generation)).unwrap(), 2);
    assert_eq!(
        probe.stopped(),
        vec![StopReason::Failed("bad input".into())]
    );

    w.tell(Fail("again")).unwrap();
    let t = terminated.recv_timeout(HANG_GUARD).expect("gave up");
    assert_eq!(t.reason, StopReason::RestartLimit);
}

// ---- Backoff ----

#[test]
fn a_one_hour_backoff_holds_the_restart_and_stopping_the_supervisor_cancels_it() {
    let system = small_system();
    let probe = Probe::default();
    let hour = Duration::from_secs(3600);
    let (sup, w) = system.supervise(spec(Strategy::OneForOne).backoff(hour, hour), |c| {
        c.spawn(probe.factory())
    });
    w.tell(Crash).unwrap();
    w.tell(Record(1)).unwrap();
    let held = w.ask(Generation).timeout(Duration::from_millis(200));
    assert!(
        matches!(system.block_on(held), Err(AskError::Timeout(_))),
        "not restarted yet"
    );
    assert_eq!(probe.started(), 1);
    assert!(w.is_alive());
    // The pending restart is work in flight.
    assert!(!system.wait_quiescent(Some(Duration::from_millis(50))));

    let (_watcher, terminated) = watch(&system, &w);
    let pending = w.ask(Generation);
    sup.stop();
    assert_eq!(system.block_on(pending), Err(AskError::Stopped));
    assert!(
        system.wait_quiescent(Some(HANG_GUARD)),
        "the backoff timer was cancelled"
    );
    assert!(!w.is_alive());
    assert_eq!(probe.started(), 1, "never restarted");
    assert_eq!(probe.records(), vec![], "held messages were dropped");
    // The failed instance ran its hooks at the crash; there was no new one to stop.
    assert_eq!(probe.stopped(), vec![StopReason::Panicked("crash".into())]);
    let t = terminated.recv_timeout(HANG_GUARD).expect("child stopped");
    assert_eq!(t.reason, StopReason::ParentStopped);
}

#[test]
fn a_tiny_backoff_restarts_the_child_and_messages_sent_meanwhile_are_handled_in_order() {
    let system = small_system();
    let probe = Probe::default();
    let ms = Duration::from_millis;
    let (_sup, w) = system.supervise(spec(Strategy::OneForOne).backoff(ms(1), ms(4)), |c| {
        c.spawn(probe.factory())
    });
    for round in 0..4u32 {
        w.tell(Record(round * 1000)).unwrap();
        w.tell(Crash).unwrap();
        for i in 1..100 {
            w.tell(Record(round * 1000 + i)).unwrap();
        }
    }
    assert_eq!(system.block_on(w.ask(Generation)).unwrap(), 5);

    let records = probe.records();
    let expected: Vec<(usize, u32)> = (0..4u32)
        .flat_map(|round| {
            (0..100).map(move |i| (round as usize + 1 + usize::from(i > 0), round * 1000 + i))
        })
        .collect();
    assert_eq!(records, expected, "nothing lost, nothing reordered");
}

// ---- A stop wins over a restart ----

#[test]
fn a_restart_queued_behind_a_busy_child_is_dropped_once_its_supervisor_is_stopped() {
    let system = small_system();
    let (pa, pb) = (Probe::default(), Probe::default());
    let (sup, (a, b)) = system.supervise(spec(Strategy::OneForAll), |c| {
        (
            c.spawn(pa.factory()),
            c.spawn_with_restart(Restart::Permanent, pb.factory()),
        )
    });
    let (_watcher, sup_terminated) = watch(&system, &sup);
    // `b` is busy, so the restart that `a`'s crash sends it waits in its mailbox.
    let release = hold(&b);
    a.tell(Crash).unwrap();
    assert_eq!(system.block_on(a.ask(Generation)).unwrap(), 2);

    sup.stop();
    sup_terminated
        .recv_timeout(HANG_GUARD)
        .expect("supervisor stopped");
    release.send(()).unwrap();
    system.run_until_quiescent();

    assert!(!b.is_alive());
    assert_eq!(pb.started(), 1, "the queued restart did not run");
    assert_eq!(pb.stopped(), vec![StopReason::ParentStopped]);
}

#[test]
fn shutdown_stops_a_child_waiting_for_a_backoff_restart_without_restarting_it() {
    let system = small_system();
    let (pa, pb) = (Probe::default(), Probe::default());
    let hour = Duration::from_secs(3600);
    let (_sup, (a, b)) = system.supervise(spec(Strategy::OneForOne).backoff(hour, hour), |c| {
        (
            c.spawn_with_restart(Restart::Permanent, pa.factory()),
            c.spawn_with_restart(Restart::Permanent, pb.factory()),
        )
    });
    a.tell(Crash).unwrap();
    system.block_on(b.ask(Inc)).unwrap();
    eventually("a failed", || pa.stopped().len() == 1);

    assert!(system.shutdown(), "every actor stopped");
    assert_eq!(pa.started(), 1);
    assert_eq!(
        pb.started(),
        1,
        "a permanent child is not restarted by shutdown"
    );
    assert_eq!(pb.stopped(), vec![StopReason::ParentStopped]);
    assert!(!a.is_alive() && !b.is_alive());
    assert_eq!(pa.stopped(), vec![StopReason::Panicked("crash".into())]);
}

// ---- Defects found while building this ----

/// Starts a supervisor from its handler and stops it in the same handler, so that (on
/// one worker) the supervisor never runs before it is told to stop.
struct Spawner {
    probe: Probe,
}
impl Actor for Spawner {}
struct SuperviseAndStop;
impl Message for SuperviseAndStop {
    type Reply = (ActorRef<Supervisor>, ActorRef<Worker>);
}
impl Handler<SuperviseAndStop> for Spawner {
    fn handle(
        &mut self,
        _: SuperviseAndStop,
        cx: &mut Context<Self>,
    ) -> (ActorRef<Supervisor>, ActorRef<Worker>) {
        let factory = self.probe.factory();
        let (sup, w) = cx.supervise(spec(Strategy::OneForOne), |c| {
            c.spawn_with_restart(Restart::Permanent, factory)
        });
        sup.stop();
        (sup, w)
    }
}

#[test]
fn a_child_whose_supervisor_stopped_before_registering_it_is_stopped_not_left_unsupervised() {
    let system = System::builder().workers(1).build();
    let probe = Probe::default();
    let spawner = system.spawn(Spawner {
        probe: probe.clone(),
    });
    let (sup, w) = system.block_on(spawner.ask(SuperviseAndStop)).unwrap();
    system.run_until_quiescent();

    assert!(!sup.is_alive());
    assert!(!w.is_alive(), "the child outlived its supervisor");
    assert_eq!(probe.stopped(), vec![StopReason::ParentStopped]);
}

#[test]
fn a_child_failing_before_a_stopped_supervisor_registered_it_does_not_wait_forever() {
    let system = System::builder().workers(1).build();
    let probe = Probe::panicking_in_started();
    let spawner = system.spawn(Spawner {
        probe: probe.clone(),
    });
    let (sup, w) = system.block_on(spawner.ask(SuperviseAndStop)).unwrap();
    system.run_until_quiescent();

    assert!(!sup.is_alive());
    assert!(!w.is_alive(), "the failed child waits for a directive");
    assert_eq!(probe.started(), 1, "never restarted");
}

#[test]
fn supervised_children_are_not_collected_when_user_refs_drop_even_after_a_subtree_restart() {
    let system = small_system();
    let probe = Probe::default();
    let slot: Arc<Mutex<Option<WeakActorRef<Worker>>>> = Arc::default();
    let strict = SupervisorSpec::new(Strategy::OneForOne).max_restarts(0, Duration::from_secs(60));
    let (root, _sub) = system.supervise(spec(Strategy::OneForOne), |c| {
        let (probe, slot) = (probe.clone(), slot.clone());
        // No run of `f`, first or after a restart, keeps a strong ref to the child.
        c.supervise(strict, move |c| {
            let w = c.spawn(probe.factory());
            *slot.lock().unwrap() = Some(w.downgrade());
        })
        .0
    });
    let current = || slot.lock().unwrap().clone().unwrap();
    system.run_until_quiescent();
    assert!(current().upgrade().is_some_and(|w| w.is_alive()));

    // The child crashes, its supervisor (no restart allowed) gives up, the root
    // restarts it and it spawns a new child.
    current().upgrade().unwrap().tell(Crash).unwrap();
    eventually("the subtree was respawned", || probe.started() == 2);
    system.run_until_quiescent();
    let w = current().upgrade().expect("the respawned child is alive");
    assert_eq!(system.block_on(w.ask(Generation)).unwrap(), 2);
    drop(w);
    system.run_until_quiescent();
    assert!(current().upgrade().is_some_and(|w| w.is_alive()));
    assert_eq!(probe.stopped(), vec![StopReason::Panicked("crash".into())]);

    // A tree lives until it is stopped.
    root.stop();
    system.run_until_quiescent();
    assert_eq!(
        probe.stopped(),
        vec![
            StopReason::Panicked("crash".into()),
            StopReason::ParentStopped
        ]
    );
}
