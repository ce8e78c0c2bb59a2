//! `odeon::testkit`'s probes and `eventually`, on a system with worker threads and on
//! a simulated one: what they return when the expectation is met, and the message
//! they fail the test with when it is not.
//!
//! Real-time timeouts here are either "fail instead of hang" guards (the message is
//! already on its way) or the time a test waits for something that never comes; no
//! test depends on how long anything took.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use odeon::testkit::{Sim, TerminationProbe, TestProbe, eventually};
use odeon::{Actor, Context, Handler, Message, Recipient, StopReason, System};

/// Only turns a hang into a failure.
const GUARD: Duration = Duration::from_secs(10);
/// How long a test waits for something that must not come.
const QUIET: Duration = Duration::from_millis(30);

#[derive(Debug, Clone, PartialEq)]
struct Note(u32);
impl Message for Note {
    type Reply = ();
}

/// Forwards `Fwd(n)` as `Note(n)` to its recipient: the probe stands in for a peer.
struct Relay {
    to: Recipient<Note>,
}
impl Actor for Relay {}
struct Fwd(u32);
impl Message for Fwd {
    type Reply = ();
}
impl Handler<Fwd> for Relay {
    fn handle(&mut self, Fwd(n): Fwd, _: &mut Context<Self>) {
        self.to.tell(Note(n)).unwrap();
    }
}

struct Crash;
impl Message for Crash {
    type Reply = ();
}
impl Handler<Crash> for Relay {
    fn handle(&mut self, _: Crash, _: &mut Context<Self>) {
        panic!("relay crashed");
    }
}

fn system() -> System {
    System::builder().workers(2).build()
}

/// The panic message of `f`, which must panic.
fn panic_message(f: impl FnOnce()) -> String {
    let payload = match catch_unwind(AssertUnwindSafe(f)) {
        Ok(()) => panic!("expected a panic"),
        Err(p) => p,
    };
    if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else {
        panic!("a panic without a message")
    }
}

#[test]
fn a_probe_handed_out_as_a_recipient_sees_messages_in_order() {
    let system = system();
    let probe = TestProbe::<Note>::new(&system.handle());
    let relay = system.spawn(Relay {
        to: probe.recipient(),
    });
    for n in 0..5 {
        relay.tell(Fwd(n)).unwrap();
    }
    assert_eq!(probe.expect_msg(GUARD), Note(0));
    probe.expect_msg_eq(&Note(1), GUARD);
    let two = probe.expect_msg_where("even", GUARD, |n| n.0 % 2 == 0);
    assert_eq!(two, Note(2));
    assert_eq!(probe.receive_n(2, GUARD), vec![Note(3), Note(4)]);
    probe.expect_no_msg(QUIET);
    assert_eq!(probe.queued(), 0);
    assert!(probe.try_recv().is_none());
    // The probe's actor is an ordinary actor: tell it directly too.
    probe.actor_ref().tell(Note(9)).unwrap();
    assert_eq!(probe.expect_msg(GUARD), Note(9));
}

#[test]
fn fish_for_skips_what_does_not_match() {
    let system = system();
    let probe = TestProbe::<Note>::new(&system.handle());
    let to = probe.recipient();
    for n in [1, 3, 4, 5] {
        to.tell(Note(n)).unwrap();
    }
    assert_eq!(probe.fish_for(GUARD, |n| n.0 % 2 == 0), Note(4));
    // Only what came after the catch is left.
    assert_eq!(probe.expect_msg(GUARD), Note(5));
}

#[test]
fn unmet_expectations_fail_naming_what_was_expected_and_what_came() {
    let system = system();
    let probe = TestProbe::<Note>::new(&system.handle());
    let to = probe.recipient();

    to.tell(Note(2)).unwrap();
    let msg = panic_message(|| {
        probe.expect_msg_eq(&Note(1), GUARD);
    });
    assert_eq!(msg, "TestProbe: expected Note(1), but got Note(2)");

    let msg = panic_message(|| {
        probe.expect_msg(QUIET);
    });
    assert!(
        msg.starts_with("TestProbe: expected a message of type testkit::Note within"),
        "{msg}"
    );
    assert!(msg.ends_with("but none came"), "{msg}");

    let msg = panic_message(|| {
        probe.expect_msg_eq(&Note(7), QUIET);
    });
    assert!(
        msg.starts_with("TestProbe: expected Note(7) within"),
        "{msg}"
    );

    to.tell(Note(3)).unwrap();
    let msg = panic_message(|| {
        probe.expect_msg_where("even", GUARD, |n| n.0 % 2 == 0);
    });
    assert_eq!(
        msg,
        "TestProbe: expected a message that is even, but got Note(3)"
    );

    to.tell(Note(4)).unwrap();
    // Returns as soon as the message is seen, not after the whole duration.
    let msg = panic_message(|| probe.expect_no_msg(GUARD));
    assert_eq!(
        msg,
        format!("TestProbe: expected no message for {GUARD:?}, but got Note(4)")
    );

    to.tell(Note(5)).unwrap();
    let msg = panic_message(|| {
        probe.receive_n(3, QUIET);
    });
    assert!(msg.starts_with("TestProbe: expected 3 messages"), "{msg}");
    assert!(msg.ends_with("but only 1 came"), "{msg}");

    to.tell(Note(7)).unwrap();
    let msg = panic_message(|| {
        probe.fish_for(QUIET, |n| n.0 == 100);
    });
    assert!(
        msg.starts_with("TestProbe: fish_for found no matching message"),
        "{msg}"
    );
    assert!(msg.ends_with("(2 did not match)"), "{msg}");
}

/// Asks of a probe are answered by its autopilot, which can change.
#[test]
fn the_autopilot_answers_asks() {
    struct Price(&'static str);
    impl Message for Price {
        type Reply = usize;
    }
    let system = system();
    let probe = TestProbe::with_autopilot(&system.handle(), |p: &Price| p.0.len());
    assert_eq!(system.block_on(probe.actor_ref().ask(Price("tea"))), Ok(3));
    probe.set_autopilot(|_| 99);
    assert_eq!(
        system.block_on(probe.recipient().ask(Price("coffee"))),
        Ok(99)
    );
    let seen: Vec<&str> = probe.receive_n(2, GUARD).iter().map(|p| p.0).collect();
    assert_eq!(seen, ["tea", "coffee"]);
}

#[test]
fn a_termination_probe_gives_the_stop_reason() {
    let system = system();
    let probe = TestProbe::<Note>::new(&system.handle());
    let crashing = system.spawn(Relay {
        to: probe.recipient(),
    });
    let stopping = system.spawn(Relay {
        to: probe.recipient(),
    });
    let on_crash = TerminationProbe::new(&system.handle(), &crashing);
    let on_stop = TerminationProbe::new(&system.handle(), &stopping);
    assert_eq!(on_crash.target(), crashing.id());
    on_crash.expect_no_termination(QUIET);

    crashing.tell(Crash).unwrap();
    assert_eq!(
        on_crash.expect_terminated(GUARD),
        StopReason::Panicked("relay crashed".into())
    );
    stopping.stop();
    assert_eq!(on_stop.expect_terminated(GUARD), StopReason::Normal);

    // An actor that stopped before the probe was made is reported too.
    let late = TerminationProbe::new(&system.handle(), &crashing);
    assert_eq!(
        late.expect_terminated(GUARD),
        StopReason::Panicked("relay crashed".into())
    );
}

#[test]
fn unmet_termination_expectations_fail_with_a_clear_message() {
    let system = system();
    let probe = TestProbe::<Note>::new(&system.handle());
    let relay = system.spawn(Relay {
        to: probe.recipient(),
    });
    let watch = TerminationProbe::new(&system.handle(), &relay);
    let msg = panic_message(|| {
        watch.expect_terminated(QUIET);
    });
    assert_eq!(
        msg,
        format!(
            "TerminationProbe: expected actor {} to terminate within {QUIET:?}, but it is still running",
            relay.id()
        )
    );
    relay.tell(Crash).unwrap();
    let msg = panic_message(|| watch.expect_no_termination(GUARD));
    assert_eq!(
        msg,
        format!(
            "TerminationProbe: expected actor {} to keep running for {GUARD:?}, but it terminated: panicked: relay crashed",
            relay.id()
        )
    );
}

#[test]
fn eventually_waits_for_the_condition_or_fails() {
    let flag = Arc::new(AtomicBool::new(false));
    let setter = flag.clone();
    let t = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(5));
        setter.store(true, Ordering::SeqCst);
    });
    eventually(GUARD, || flag.load(Ordering::SeqCst));
    t.join().unwrap();

    let msg = panic_message(|| eventually(QUIET, || false));
    assert_eq!(
        msg,
        format!("eventually: the condition still did not hold after {QUIET:?}")
    );
}

/// A relay that passes each note on after a virtual delay.
struct Delayer {
    to: Recipient<Note>,
    delay: Duration,
}
impl Actor for Delayer {}
impl Handler<Fwd> for Delayer {
    fn handle(&mut self, Fwd(n): Fwd, cx: &mut Context<Self>) {
        cx.send_after(self.delay, Note(n));
    }
}
impl Handler<Note> for Delayer {
    fn handle(&mut self, note: Note, _: &mut Context<Self>) {
        self.to.tell(note).unwrap();
    }
}

/// On a simulation an expectation runs the actors, and its timeout is virtual.
#[test]
fn on_a_sim_probes_run_the_simulation_on_virtual_time() {
    let sim = Sim::new(3);
    let probe = TestProbe::<Note>::new(&sim.handle());
    let delayer = sim.spawn(Delayer {
        to: probe.recipient(),
        delay: Duration::from_millis(50),
    });
    delayer.tell(Fwd(1)).unwrap();
    // Nothing was stepped yet: the probe runs the actors and the clock itself.
    assert_eq!(probe.expect_msg(Duration::from_secs(3600)), Note(1));
    assert_eq!(sim.now(), Duration::from_millis(50));

    delayer.tell(Fwd(2)).unwrap();
    let msg = panic_message(|| {
        probe.expect_msg(Duration::from_millis(10));
    });
    assert!(msg.ends_with("within 10ms, but none came"), "{msg}");
    // It waited exactly its timeout, virtually, and the note is still to come.
    assert_eq!(sim.now(), Duration::from_millis(60));
    probe.expect_no_msg(Duration::from_millis(39));
    assert_eq!(sim.now(), Duration::from_millis(99));
    assert_eq!(probe.expect_msg(Duration::from_millis(1)), Note(2));
    assert_eq!(sim.now(), Duration::from_millis(100));

    let watch = TerminationProbe::new(&sim.handle(), &delayer);
    delayer.stop();
    assert_eq!(watch.expect_terminated(Duration::ZERO), StopReason::Normal);
}
