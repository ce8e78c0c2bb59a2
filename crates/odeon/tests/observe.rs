//! The `observe` feature: metric values against known workloads, and the
//! `odeon.handle` span with its fields.
//!
//! One process-wide `DebuggingRecorder` and one capturing `tracing` subscriber serve
//! every test here; each test uses actor types of its own, so the per-type values it
//! reads are its own. The tests take `SERIAL` so that each sees a quiet recorder.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use metrics_util::debugging::{DebugValue, DebuggingRecorder, Snapshotter};
use metrics_util::{CompositeKey, MetricKind};
use odeon::{
    Actor, AskError, Context, Handler, Message, SpawnOptions, StopReason, Strategy, SupervisorSpec,
    System, observe,
};
use tracing::span;
use tracing_subscriber::layer::{Context as LayerContext, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

const HANG_GUARD: Duration = Duration::from_secs(10);

static SERIAL: Mutex<()> = Mutex::new(());

/// The finished `odeon.handle` spans: their recorded fields.
static SPANS: Mutex<Vec<HashMap<String, String>>> = Mutex::new(Vec::new());

fn setup() -> (&'static Snapshotter, MutexGuard<'static, ()>) {
    static SNAP: OnceLock<Snapshotter> = OnceLock::new();
    let snap = SNAP.get_or_init(|| {
        let recorder = DebuggingRecorder::new();
        let snapshotter = recorder.snapshotter();
        recorder
            .install()
            .expect("the only recorder of this test binary");
        let subscriber = tracing_subscriber::registry().with(Capture);
        tracing::subscriber::set_global_default(subscriber).expect("the only subscriber");
        snapshotter
    });
    (snap, SERIAL.lock().unwrap_or_else(|e| e.into_inner()))
}

/// Every value recorded so far, by key. `Snapshotter::snapshot` resets what it reads
/// (counters and gauges to 0, histograms emptied), so each read folds the snapshot
/// into this running total: counters and gauges add up (the gauges here only move by
/// increments), histograms append.
static TOTALS: Mutex<Vec<(CompositeKey, DebugValue)>> = Mutex::new(Vec::new());

/// The running totals at one moment.
struct Values(MutexGuard<'static, Vec<(CompositeKey, DebugValue)>>);

impl Values {
    fn take(snap: &Snapshotter) -> Self {
        let mut totals = TOTALS.lock().unwrap_or_else(|e| e.into_inner());
        for (k, _, _, v) in snap.snapshot().into_vec() {
            match totals.iter_mut().find(|(tk, _)| *tk == k) {
                None => totals.push((k, v)),
                Some((_, total)) => match (total, v) {
                    (DebugValue::Counter(t), DebugValue::Counter(n)) => *t += n,
                    (DebugValue::Gauge(t), DebugValue::Gauge(g)) => *t += g,
                    (DebugValue::Histogram(t), DebugValue::Histogram(h)) => t.extend(h),
                    (t, v) => panic!("kind changed: {t:?} then {v:?}"),
                },
            }
        }
        Self(totals)
    }

    fn find(&self, kind: MetricKind, name: &str, labels: &[(&str, &str)]) -> Option<&DebugValue> {
        self.0.iter().find_map(|(k, v)| {
            let key = k.key();
            let matches = k.kind() == kind
                && key.name() == name
                && labels
                    .iter()
                    .all(|(lk, lv)| key.labels().any(|l| l.key() == *lk && l.value() == *lv))
                && key.labels().count() == labels.len();
            matches.then_some(v)
        })
    }

    fn counter(&self, name: &str, labels: &[(&str, &str)]) -> u64 {
        match self.find(MetricKind::Counter, name, labels) {
            Some(DebugValue::Counter(n)) => *n,
            _ => 0,
        }
    }

    fn gauge(&self, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
        match self.find(MetricKind::Gauge, name, labels) {
            Some(DebugValue::Gauge(g)) => Some(g.into_inner()),
            _ => None,
        }
    }

    fn histogram_count(&self, name: &str, labels: &[(&str, &str)]) -> usize {
        match self.find(MetricKind::Histogram, name, labels) {
            Some(DebugValue::Histogram(h)) => h.len(),
            _ => 0,
        }
    }
}

/// Keeps every `odeon.handle` span's fields and stores them when the span closes.
struct Capture;

#[derive(Default)]
struct Fields(HashMap<String, String>);

impl tracing::field::Visit for Fields {
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

impl<S: tracing::Subscriber + for<'a> LookupSpan<'a>> tracing_subscriber::Layer<S> for Capture {
    fn on_new_span(&self, attrs: &span::Attributes<'_>, id: &span::Id, ctx: LayerContext<'_, S>) {
        if attrs.metadata().name() != "odeon.handle" {
            return;
        }
        let mut fields = Fields::default();
        attrs.record(&mut fields);
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(fields);
        }
    }

    fn on_record(&self, id: &span::Id, values: &span::Record<'_>, ctx: LayerContext<'_, S>) {
        if let Some(span) = ctx.span(id) {
            if let Some(fields) = span.extensions_mut().get_mut::<Fields>() {
                values.record(fields);
            }
        }
    }

    fn on_close(&self, id: span::Id, ctx: LayerContext<'_, S>) {
        if let Some(span) = ctx.span(&id) {
            if let Some(fields) = span.extensions_mut().remove::<Fields>() {
                SPANS.lock().unwrap().push(fields.0);
            }
        }
    }
}

fn observed() -> System {
    System::builder().workers(2).observe(true).build()
}

/// Counts `Tick`s; answers `Ping`; panics on `Boom`.
macro_rules! counting_actor {
    ($name:ident) => {
        #[derive(Default)]
        struct $name(u64);
        impl Actor for $name {}
        impl Handler<Tick> for $name {
            fn handle(&mut self, _: Tick, _: &mut Context<Self>) {
                self.0 += 1;
            }
        }
        impl Handler<Ping> for $name {
            fn handle(&mut self, _: Ping, _: &mut Context<Self>) -> u64 {
                self.0
            }
        }
        impl Handler<Boom> for $name {
            fn handle(&mut self, _: Boom, _: &mut Context<Self>) {
                panic!("boom");
            }
        }
    };
}

struct Tick;
impl Message for Tick {
    type Reply = ();
}
struct Ping;
impl Message for Ping {
    type Reply = u64;
}
struct Boom;
impl Message for Boom {
    type Reply = ();
}

counting_actor!(Counted);
counting_actor!(Crashing);
counting_actor!(Restarted);
counting_actor!(Traced);
counting_actor!(Unobserved);
counting_actor!(Budgeted);

fn actor<A>() -> (&'static str, &'static str) {
    ("actor", std::any::type_name::<A>())
}

#[test]
fn n_messages_handled_count_n_and_the_actor_is_spawned_and_stopped_once() {
    let (snap, _serial) = setup();
    let system = observed();
    let a = system.spawn(Counted::default());
    const N: u64 = 1_000;
    for _ in 0..N {
        a.tell(Tick).unwrap();
    }
    assert_eq!(system.block_on(a.ask(Ping).timeout(HANG_GUARD)), Ok(N));
    let done = a.wait_stopped();
    a.stop();
    assert_eq!(system.block_on(done), StopReason::Normal);
    let v = Values::take(snap);
    let t = actor::<Counted>();
    // The N ticks and the ping: the handled count is taken before the actor stops.
    assert_eq!(v.counter(observe::MESSAGES_HANDLED, &[t]), N + 1);
    assert_eq!(
        v.histogram_count(observe::HANDLER_SECONDS, &[t]),
        N as usize + 1
    );
    assert_eq!(v.counter(observe::ACTORS_SPAWNED, &[t]), 1);
    assert_eq!(
        v.counter(observe::ACTORS_STOPPED, &[t, ("reason", "normal")]),
        1
    );
    assert_eq!(v.gauge(observe::ACTORS_ALIVE, &[t]), Some(0.0));
    assert!(system.shutdown());
}

#[test]
fn a_panic_counts_a_stop_for_an_unsupervised_actor() {
    let (snap, _serial) = setup();
    let system = observed();
    let t = actor::<Crashing>();
    let a = system.spawn(Crashing::default());
    let b = system.spawn(Crashing::default());
    assert_eq!(
        Values::take(snap).gauge(observe::ACTORS_ALIVE, &[t]),
        Some(2.0)
    );
    let done = a.wait_stopped();
    a.tell(Boom).unwrap();
    assert_eq!(system.block_on(done), StopReason::Panicked("boom".into()));
    let v = Values::take(snap);
    assert_eq!(
        v.counter(observe::ACTORS_STOPPED, &[t, ("reason", "panicked")]),
        1
    );
    assert_eq!(v.gauge(observe::ACTORS_ALIVE, &[t]), Some(1.0));
    // The panicking handler counts as handled too.
    assert_eq!(v.counter(observe::MESSAGES_HANDLED, &[t]), 1);
    drop(b);
    assert!(system.shutdown());
}

#[test]
fn a_panic_under_a_supervisor_counts_a_restart() {
    let (snap, _serial) = setup();
    let system = observed();
    let spec = SupervisorSpec::new(Strategy::OneForOne).max_restarts(10, Duration::from_secs(60));
    let (_sup, a) = system.supervise(spec, |c| c.spawn(Restarted::default));
    for _ in 0..3 {
        a.tell(Tick).unwrap();
    }
    a.tell(Boom).unwrap();
    // The fresh instance answers: the restart happened before this ask was handled.
    assert_eq!(system.block_on(a.ask(Ping).timeout(HANG_GUARD)), Ok(0));
    let v = Values::take(snap);
    let t = actor::<Restarted>();
    assert_eq!(v.counter(observe::RESTARTS, &[t]), 1);
    assert_eq!(v.counter(observe::ACTORS_SPAWNED, &[t]), 1);
    assert_eq!(
        v.counter(observe::ACTORS_STOPPED, &[t, ("reason", "panicked")]),
        0
    );
    drop(v);
    assert!(system.shutdown());
    // Three ticks, the boom and the ping; the restart itself (a runtime signal) is
    // not a message of the actor.
    let v = Values::take(snap);
    assert_eq!(v.counter(observe::MESSAGES_HANDLED, &[t]), 5);
}

#[test]
fn every_handled_message_gets_an_odeon_handle_span_with_its_fields() {
    let (_snap, _serial) = setup();
    let system = observed();
    let named = system.spawn_with(Traced::default(), SpawnOptions::new().name("tracer"));
    let anonymous = system.spawn(Traced::default());
    named.tell(Tick).unwrap();
    anonymous.tell(Tick).unwrap();
    assert_eq!(system.block_on(named.ask(Ping).timeout(HANG_GUARD)), Ok(1));
    assert_eq!(
        system.block_on(anonymous.ask(Ping).timeout(HANG_GUARD)),
        Ok(1)
    );
    assert!(system.shutdown());
    let ours: Vec<_> = SPANS
        .lock()
        .unwrap()
        .iter()
        .filter(|f| f.get("actor").map(String::as_str) == Some(std::any::type_name::<Traced>()))
        .cloned()
        .collect();
    let with = |name: Option<&str>, msg: &str| {
        ours.iter()
            .filter(|f| {
                f.get("name").map(String::as_str) == name
                    && f.get("message").map(String::as_str) == Some(msg)
            })
            .count()
    };
    let (tick, ping) = (std::any::type_name::<Tick>(), std::any::type_name::<Ping>());
    assert_eq!(with(Some("tracer"), tick), 1, "{ours:?}");
    assert_eq!(with(Some("tracer"), ping), 1, "{ours:?}");
    assert_eq!(with(None, tick), 1, "{ours:?}");
    assert_eq!(with(None, ping), 1, "{ours:?}");
    assert_eq!(ours.len(), 4, "{ours:?}");
}

#[test]
fn a_system_built_without_observe_records_nothing_per_actor() {
    let (snap, _serial) = setup();
    let system = System::builder().workers(2).build();
    let a = system.spawn(Unobserved::default());
    a.tell(Tick).unwrap();
    assert_eq!(system.block_on(a.ask(Ping).timeout(HANG_GUARD)), Ok(1));
    assert!(system.shutdown());
    let v = Values::take(snap);
    let t = actor::<Unobserved>();
    assert_eq!(v.counter(observe::MESSAGES_HANDLED, &[t]), 0);
    assert_eq!(v.counter(observe::ACTORS_SPAWNED, &[t]), 0);
    let spans = SPANS.lock().unwrap();
    assert!(
        !spans
            .iter()
            .any(|f| f.get("actor").map(String::as_str) == Some(t.1))
    );
}

/// Never answers in time: the handler parks its thread past the ask's deadline.
struct Sleepy;
impl Actor for Sleepy {}
impl Handler<Ping> for Sleepy {
    fn handle(&mut self, _: Ping, _: &mut Context<Self>) -> u64 {
        std::thread::sleep(Duration::from_millis(300));
        0
    }
}

#[test]
fn an_ask_that_times_out_is_counted() {
    let (snap, _serial) = setup();
    let system = observed();
    let before = Values::take(snap).counter(observe::ASKS_TIMED_OUT, &[]);
    let a = system.spawn(Sleepy);
    let r = system.block_on(a.ask(Ping).timeout(Duration::from_millis(20)));
    assert!(matches!(r, Err(AskError::Timeout(_))), "{r:?}");
    let after = Values::take(snap).counter(observe::ASKS_TIMED_OUT, &[]);
    assert_eq!(after - before, 1);
    assert!(system.shutdown());
}

#[test]
fn a_budget_exhausted_turn_is_counted() {
    let (snap, _serial) = setup();
    let system = System::builder().workers(1).budget(1).observe(true).build();
    let before = Values::take(snap).counter(observe::BUDGET_EXHAUSTED, &[]);
    let a = system.spawn(Budgeted::default());
    // Budget 1: every turn that handles a message ends on its budget.
    for _ in 0..10 {
        a.tell(Tick).unwrap();
    }
    assert!(system.block_on(a.ask(Ping).timeout(HANG_GUARD)).is_ok());
    let after = Values::take(snap).counter(observe::BUDGET_EXHAUSTED, &[]);
    assert!(after > before, "{before} -> {after}");
    assert!(system.shutdown());
}

/// Waits for its message's channel: an async handler that suspends.
struct Waits;
impl Actor for Waits {}
struct Wait(tokio::sync::oneshot::Receiver<u64>);
impl Message for Wait {
    type Reply = u64;
}
impl odeon::AsyncHandler<Wait> for Waits {
    async fn handle(&mut self, msg: Wait, _: &mut Context<Self>) -> u64 {
        msg.0.await.unwrap_or(0)
    }
}
impl Handler<Ping> for Waits {
    fn handle(&mut self, _: Ping, _: &mut Context<Self>) -> u64 {
        1
    }
}

#[test]
fn an_async_handler_that_suspends_is_counted_once_and_finishes_after_its_span() {
    let (snap, _serial) = setup();
    let system = observed();
    let a = system.spawn(Waits);
    let (tx, rx) = tokio::sync::oneshot::channel();
    let waiting = a.ask(Wait(rx)).timeout(HANG_GUARD);
    let ping = a.ask(Ping).timeout(HANG_GUARD);
    tx.send(7).unwrap();
    assert_eq!(system.block_on(waiting), Ok(7));
    // The ping waited for the async handler (an actor handles one message at a time).
    assert_eq!(system.block_on(ping), Ok(1));
    let done = a.wait_stopped();
    a.stop();
    system.block_on(done);
    let t = actor::<Waits>();
    assert_eq!(
        Values::take(snap).counter(observe::MESSAGES_HANDLED, &[t]),
        2
    );
    let spans = SPANS.lock().unwrap();
    let wait = std::any::type_name::<Wait>();
    let ours = spans
        .iter()
        .filter(|f| f.get("actor").map(String::as_str) == Some(t.1))
        .filter(|f| f.get("message").map(String::as_str) == Some(wait))
        .count();
    assert_eq!(ours, 1);
    drop(spans);
    assert!(system.shutdown());
}

/// Blocks in its first handler until released, so that a known queue builds up
/// behind it; `Last` reports that it was handled.
struct Gated {
    started: std::sync::mpsc::Sender<()>,
    release: std::sync::mpsc::Receiver<()>,
    done: std::sync::mpsc::Sender<()>,
}
impl Actor for Gated {}
struct Gate;
impl Message for Gate {
    type Reply = ();
}
impl Handler<Gate> for Gated {
    fn handle(&mut self, _: Gate, _: &mut Context<Self>) {
        self.started.send(()).unwrap();
        self.release.recv_timeout(HANG_GUARD).unwrap();
    }
}
impl Handler<Tick> for Gated {
    fn handle(&mut self, _: Tick, _: &mut Context<Self>) {}
}
struct Last;
impl Message for Last {
    type Reply = ();
}
impl Handler<Last> for Gated {
    fn handle(&mut self, _: Last, _: &mut Context<Self>) {
        self.done.send(()).unwrap();
    }
}

#[test]
fn mailbox_depth_is_the_queue_behind_each_message_as_it_is_handled() {
    let (snap, _serial) = setup();
    let system = observed();
    let (started_tx, started) = std::sync::mpsc::channel();
    let (release, release_rx) = std::sync::mpsc::channel();
    let (done_tx, done) = std::sync::mpsc::channel();
    let a = system.spawn(Gated {
        started: started_tx,
        release: release_rx,
        done: done_tx,
    });
    a.tell(Gate).unwrap();
    started.recv_timeout(HANG_GUARD).unwrap();
    // Queued while the gate holds the turn: N ticks, then `Last`.
    const N: usize = 10;
    for _ in 0..N {
        a.tell(Tick).unwrap();
    }
    a.tell(Last).unwrap();
    release.send(()).unwrap();
    done.recv_timeout(HANG_GUARD).unwrap();
    let v = Values::take(snap);
    let Some(DebugValue::Histogram(depths)) = v.find(
        MetricKind::Histogram,
        observe::MAILBOX_DEPTH,
        &[actor::<Gated>()],
    ) else {
        panic!("no {} histogram", observe::MAILBOX_DEPTH);
    };
    let depths: Vec<f64> = depths.iter().map(|d| d.into_inner()).collect();
    // The gate found an empty mailbox behind it; tick k had N - k + 1 messages behind
    // it (the later ticks and `Last`); `Last` had none.
    let mut want = vec![0.0];
    want.extend((1..=N).rev().map(|k| k as f64));
    want.push(0.0);
    assert_eq!(depths, want);
    drop(v);
    drop(a);
    assert!(system.shutdown());
}

/// Forwards each `Tick` to the next actor, if it has one.
struct Relay(Option<odeon::ActorRef<Relay>>);
impl Actor for Relay {}
impl Handler<Tick> for Relay {
    fn handle(&mut self, _: Tick, _: &mut Context<Self>) {
        if let Some(next) = &self.0 {
            next.tell(Tick).unwrap();
        }
    }
}
impl Handler<Ping> for Relay {
    fn handle(&mut self, _: Ping, _: &mut Context<Self>) -> u64 {
        0
    }
}

#[test]
fn a_trace_context_flows_from_the_sender_to_each_handler_it_causes() {
    let (_snap, _serial) = setup();
    let system = observed();
    let second = system.spawn(Relay(None));
    let first = system.spawn(Relay(Some(second.clone())));
    let root = observe::TraceContext::new_root();
    root.in_scope(|| first.tell(Tick).unwrap());
    // Both handled (each actor's mailbox is FIFO: the ping follows the tick).
    system
        .block_on(first.ask(Ping).timeout(HANG_GUARD))
        .unwrap();
    system
        .block_on(second.ask(Ping).timeout(HANG_GUARD))
        .unwrap();
    drop((first, second));
    assert!(system.shutdown());
    let spans = SPANS.lock().unwrap();
    let tick = std::any::type_name::<Tick>();
    let relays: Vec<_> = spans
        .iter()
        .filter(|f| {
            f.get("actor").map(String::as_str) == Some(std::any::type_name::<Relay>())
                && f.get("message").map(String::as_str) == Some(tick)
        })
        .collect();
    assert_eq!(relays.len(), 2, "{relays:?}");
    let trace = format!("{:032x}", root.trace_id);
    let by_parent = |parent: String| {
        relays
            .iter()
            .find(|f| f.get("parent_span_id") == Some(&parent))
            .unwrap_or_else(|| panic!("no span with parent {parent}: {relays:?}"))
    };
    let first_span = by_parent(format!("{:016x}", root.span_id));
    assert_eq!(first_span.get("trace_id"), Some(&trace));
    let second_span = by_parent(first_span["span_id"].clone());
    assert_eq!(second_span.get("trace_id"), Some(&trace));
    // A message sent with no context current is handled without trace ids.
    let pings: Vec<_> = spans
        .iter()
        .filter(|f| {
            f.get("actor").map(String::as_str) == Some(std::any::type_name::<Relay>())
                && f.get("message").map(String::as_str) == Some(std::any::type_name::<Ping>())
        })
        .collect();
    assert_eq!(pings.len(), 2);
    for p in pings {
        assert_eq!(p.get("trace_id"), None);
        assert_eq!(p.get("parent_span_id"), None);
    }
}
