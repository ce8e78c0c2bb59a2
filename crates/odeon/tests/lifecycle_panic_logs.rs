//! Panics are visible: a panicking handler logs at `ERROR` with the actor's id, type
//! and name; under a supervisor, at `WARN`. A failed `on_start` logs at `WARN`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use odeon::{
    Actor, ActorRef, Context, Handler, Message, SpawnOptions, StartError, StopReason, Strategy,
    SupervisorSpec, System,
};
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::{Context as LayerContext, SubscriberExt};
use tracing_subscriber::{Layer, Registry};

const HANG_GUARD: Duration = Duration::from_secs(10);

/// One captured event: its level and its fields, as text.
#[derive(Clone, Debug)]
struct Captured {
    level: Level,
    fields: HashMap<String, String>,
}

#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<Captured>>>);

struct Fields<'a>(&'a mut HashMap<String, String>);
impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

impl<S: Subscriber> Layer<S> for Capture {
    fn on_event(&self, event: &Event<'_>, _: LayerContext<'_, S>) {
        let mut fields = HashMap::new();
        event.record(&mut Fields(&mut fields));
        self.0.lock().unwrap().push(Captured {
            level: *event.metadata().level(),
            fields,
        });
    }
}

/// Events come from worker threads: the subscriber must be the global one. Installed
/// once per test binary; each test picks out its own actor's events by id.
fn capture() -> &'static Capture {
    static CAPTURE: OnceLock<Capture> = OnceLock::new();
    CAPTURE.get_or_init(|| {
        let capture = Capture::default();
        tracing::subscriber::set_global_default(Registry::default().with(capture.clone()))
            .expect("no other global subscriber in this test binary");
        capture
    })
}

/// The events about the actor with this id.
fn events_about(capture: &Capture, actor: &str) -> Vec<Captured> {
    capture
        .0
        .lock()
        .unwrap()
        .iter()
        .filter(|e| e.fields.get("actor").map(String::as_str) == Some(actor))
        .cloned()
        .collect()
}

fn wait_stopped<A: Actor>(system: &System, actor: &ActorRef<A>) -> StopReason {
    let done = actor.wait_stopped();
    system.block_on(async {
        tokio::time::timeout(HANG_GUARD, done)
            .await
            .expect("the actor stopped")
    })
}

#[derive(Default)]
struct Fragile;
impl Actor for Fragile {}
struct Crash;
impl Message for Crash {
    type Reply = ();
}
impl Handler<Crash> for Fragile {
    fn handle(&mut self, _: Crash, _: &mut Context<Self>) {
        panic!("kaboom");
    }
}

#[test]
fn an_unsupervised_panic_logs_an_error_with_id_type_and_name() {
    let capture = capture();
    let system = System::builder().workers(2).build();
    let fragile = system.spawn_with(Fragile, SpawnOptions::new().name("fragile-one"));
    fragile.tell(Crash).unwrap();
    assert_eq!(
        wait_stopped(&system, &fragile),
        StopReason::Panicked("kaboom".into())
    );
    let events = events_about(capture, &fragile.id().to_string());
    let errors: Vec<_> = events.iter().filter(|e| e.level == Level::ERROR).collect();
    assert_eq!(errors.len(), 1, "{events:?}");
    let fields = &errors[0].fields;
    assert_eq!(
        fields.get("actor_type").map(String::as_str),
        Some(std::any::type_name::<Fragile>())
    );
    assert_eq!(fields.get("name").map(String::as_str), Some("fragile-one"));
    assert_eq!(fields.get("panic").map(String::as_str), Some("kaboom"));
}

#[test]
fn an_unnamed_actor_logs_without_a_name() {
    let capture = capture();
    let system = System::builder().workers(2).build();
    let fragile = system.spawn(Fragile);
    fragile.tell(Crash).unwrap();
    wait_stopped(&system, &fragile);
    let events = events_about(capture, &fragile.id().to_string());
    let errors: Vec<_> = events.iter().filter(|e| e.level == Level::ERROR).collect();
    assert_eq!(errors.len(), 1, "{events:?}");
    assert!(!errors[0].fields.contains_key("name"), "{events:?}");
}

#[test]
fn a_supervised_panic_logs_a_warning_not_an_error() {
    let capture = capture();
    let system = System::builder().workers(2).build();
    let (_sup, child) = system.supervise(SupervisorSpec::new(Strategy::OneForOne), |c| {
        c.spawn(Fragile::default)
    });
    child.tell(Crash).unwrap();
    // The restarted child answers: the panic has been handled (and logged).
    let deadline = std::time::Instant::now() + HANG_GUARD;
    let id = child.id().to_string();
    loop {
        let events = events_about(capture, &id);
        if events.iter().any(|e| e.level == Level::WARN) {
            assert!(
                !events.iter().any(|e| e.level == Level::ERROR),
                "{events:?}"
            );
            let warn = events.iter().find(|e| e.level == Level::WARN).unwrap();
            assert_eq!(
                warn.fields.get("actor_type").map(String::as_str),
                Some(std::any::type_name::<Fragile>())
            );
            assert_eq!(warn.fields.get("panic").map(String::as_str), Some("kaboom"));
            break;
        }
        assert!(std::time::Instant::now() < deadline, "no warning logged");
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(child.is_alive(), "restarted in place");
}

#[test]
fn a_failed_start_logs_a_warning() {
    struct Refuses;
    impl Actor for Refuses {
        async fn on_start(&mut self, _cx: &mut Context<Self>) -> Result<(), StartError> {
            Err("not today".into())
        }
    }
    let capture = capture();
    let system = System::builder().workers(2).build();
    let actor = system.spawn_with(Refuses, SpawnOptions::new().name("refuser"));
    assert_eq!(
        wait_stopped(&system, &actor),
        StopReason::StartFailed("not today".into())
    );
    let events = events_about(capture, &actor.id().to_string());
    let warns: Vec<_> = events.iter().filter(|e| e.level == Level::WARN).collect();
    assert_eq!(warns.len(), 1, "{events:?}");
    assert_eq!(
        warns[0].fields.get("name").map(String::as_str),
        Some("refuser")
    );
    assert!(
        !events.iter().any(|e| e.level == Level::ERROR),
        "{events:?}"
    );
}

#[test]
fn a_panicking_hook_logs_a_warning_with_the_name() {
    struct Clumsy;
    impl Actor for Clumsy {
        fn stopped(&mut self, _: &StopReason) {
            panic!("slipped");
        }
    }
    let capture = capture();
    let system = System::builder().workers(2).build();
    let actor = system.spawn_with(Clumsy, SpawnOptions::new().name("clumsy"));
    actor.stop();
    assert_eq!(wait_stopped(&system, &actor), StopReason::Normal);
    let events = events_about(capture, &actor.id().to_string());
    let warn = events
        .iter()
        .find(|e| e.level == Level::WARN)
        .unwrap_or_else(|| panic!("no warning: {events:?}"));
    assert_eq!(warn.fields.get("hook").map(String::as_str), Some("stopped"));
    assert_eq!(warn.fields.get("name").map(String::as_str), Some("clumsy"));
    assert_eq!(
        warn.fields.get("panic").map(String::as_str),
        Some("slipped")
    );
}
