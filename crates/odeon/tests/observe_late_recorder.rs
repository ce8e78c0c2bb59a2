//! The per-message metrics of an actor reach a recorder installed after the actor's
//! first message (`docs/observe.md`, "Cached handles and the recorder"): an actor
//! caches its metric handles, and registers them again when another recorder is
//! current. Its own test binary: the global recorder is installed once per process,
//! here in the middle of the test.

use std::sync::{Arc, Barrier};

use metrics_util::debugging::{DebugValue, DebuggingRecorder};
use odeon::{Actor, Context, Handler, Message, SpawnOptions, StopReason, System, observe};

struct Late;
impl Actor for Late {}

struct Tick;
impl Message for Tick {
    type Reply = ();
}
impl Handler<Tick> for Late {
    fn handle(&mut self, _: Tick, _: &mut Context<Self>) {}
}

/// Waits at the barrier twice: once to say it runs, once to be let go.
struct Gate(Arc<Barrier>);
impl Message for Gate {
    type Reply = ();
}
impl Handler<Gate> for Late {
    fn handle(&mut self, Gate(b): Gate, _: &mut Context<Self>) {
        b.wait();
        b.wait();
    }
}

struct Boom;
impl Message for Boom {
    type Reply = ();
}
impl Handler<Boom> for Late {
    fn handle(&mut self, _: Boom, _: &mut Context<Self>) {
        panic!("boom");
    }
}

#[test]
fn a_recorder_installed_after_the_first_message_gets_the_later_ones() {
    let system = System::builder().observe(true).build();
    let a = system.spawn_with(Late, SpawnOptions::new());
    // Handled with no recorder installed: the handles the actor caches are no-ops.
    system.block_on(a.ask(Tick)).unwrap();
    a.tell(Tick).unwrap();
    // An actor records a message before it starts the next one: once `Gate` runs, both
    // `Tick`s and `Gate`'s mailbox depth are recorded (with no recorder); `Gate`'s count
    // and time are recorded after the install below.
    let gate = Arc::new(Barrier::new(2));
    a.tell(Gate(gate.clone())).unwrap();
    gate.wait();

    let recorder = DebuggingRecorder::new();
    let snap = recorder.snapshotter();
    recorder
        .install()
        .expect("the only recorder of this test binary");
    gate.wait();

    for _ in 0..4 {
        a.tell(Tick).unwrap();
    }
    system.block_on(a.ask(Tick)).unwrap();
    // A panicking handler is counted too (recorded as it unwinds, the uncached way),
    // under the same keys. Read after the stop: every record of the actor is in.
    let stopped = a.wait_stopped();
    a.tell(Boom).unwrap();
    assert_eq!(
        system.block_on(stopped),
        StopReason::Panicked("boom".into())
    );
    let values = snap.snapshot().into_vec();
    let of_late = |name: &str| {
        values
            .iter()
            .filter(|(k, ..)| k.key().name() == name)
            .filter(|(k, ..)| k.key().labels().any(|l| l.value().ends_with("::Late")))
            .map(|(.., v)| match v {
                DebugValue::Counter(n) => *n as usize,
                DebugValue::Histogram(h) => h.len(),
                DebugValue::Gauge(_) => 0,
            })
            .sum::<usize>()
    };
    // `Gate` and the six messages after the install; none of the two before.
    assert_eq!(of_late(observe::MESSAGES_HANDLED), 7);
    assert_eq!(of_late(observe::HANDLER_SECONDS), 7);
    // Taken after the install: the six, not `Gate`.
    assert_eq!(of_late(observe::MAILBOX_DEPTH), 6);
    assert!(system.shutdown());
}
