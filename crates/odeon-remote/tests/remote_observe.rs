//! The `observe` feature across nodes (`cargo test -p odeon-remote --features observe
//! --test remote_observe`): a remote ask carries the asker's W3C trace context and
//! the server's `odeon.handle` span continues its trace; the reply carries the
//! server's span back; the bytes and frames per peer count the known traffic.
//!
//! Two nodes in this process, each on a system built with `observe(true)`; one
//! `DebuggingRecorder` and one capturing subscriber for the whole test binary.

#![allow(missing_docs, missing_debug_implementations, unreachable_pub)]

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use metrics_util::debugging::{DebugValue, DebuggingRecorder, Snapshotter};
use odeon::observe::TraceContext;
use odeon::{Actor, Context, Handler, Message, System};
use odeon_remote::{Node, Secret};
use serde::{Deserialize, Serialize};
use tracing::span;
use tracing_subscriber::layer::{Context as LayerContext, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

const HANG_GUARD: Duration = Duration::from_secs(20);

pub struct Doubler;
impl Actor for Doubler {}
#[derive(Serialize, Deserialize)]
pub struct Double(pub u64);
impl Message for Double {
    type Reply = u64;
}
impl Handler<Double> for Doubler {
    fn handle(&mut self, m: Double, _: &mut Context<Self>) -> u64 {
        m.0 * 2
    }
}
#[derive(Serialize, Deserialize)]
pub struct Note;
impl Message for Note {
    type Reply = ();
}
impl Handler<Note> for Doubler {
    fn handle(&mut self, _: Note, _: &mut Context<Self>) {}
}
odeon_remote::remote_actor!(Doubler = "obs.Doubler" { Double = "obs.Double", Note = "obs.Note" });

/// What the subscriber saw: `odeon.handle` spans' fields (when they close) and
/// `odeon.reply` events' fields.
static SPANS: Mutex<Vec<HashMap<String, String>>> = Mutex::new(Vec::new());
static REPLIES: Mutex<Vec<HashMap<String, String>>> = Mutex::new(Vec::new());
static SERIAL: Mutex<()> = Mutex::new(());

fn setup() -> &'static Snapshotter {
    static SNAP: OnceLock<Snapshotter> = OnceLock::new();
    SNAP.get_or_init(|| {
        let recorder = DebuggingRecorder::new();
        let snapshotter = recorder.snapshotter();
        recorder
            .install()
            .expect("the only recorder of this binary");
        let subscriber = tracing_subscriber::registry()
            .with(Capture)
            .with(tracing_subscriber::filter::LevelFilter::DEBUG);
        tracing::subscriber::set_global_default(subscriber).expect("the only subscriber");
        snapshotter
    })
}

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

struct Capture;
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
        if let Some(span) = ctx.span(id)
            && let Some(fields) = span.extensions_mut().get_mut::<Fields>()
        {
            values.record(fields);
        }
    }
    fn on_event(&self, event: &tracing::Event<'_>, _: LayerContext<'_, S>) {
        if event.metadata().target() == "odeon.reply" {
            let mut fields = Fields::default();
            event.record(&mut fields);
            REPLIES.lock().unwrap().push(fields.0);
        }
    }
    fn on_close(&self, id: span::Id, ctx: LayerContext<'_, S>) {
        if let Some(span) = ctx.span(&id)
            && let Some(fields) = span.extensions_mut().remove::<Fields>()
        {
            SPANS.lock().unwrap().push(fields.0);
        }
    }
}

fn secret() -> Secret {
    Secret::new("the remote observe test secret").unwrap()
}

/// Two observing nodes: `srv` hosts a `Doubler` named "d", `cli` has a ref to it.
fn pair(srv_name: &str, cli_name: &str) -> (System, Node, System, Node, odeon::ActorRef<Doubler>) {
    let srv_sys = System::builder().workers(2).observe(true).build();
    let cli_sys = System::builder().workers(2).observe(true).build();
    let srv = srv_sys
        .block_on(
            Node::builder(srv_name)
                .secret(secret())
                .start(&srv_sys.handle()),
        )
        .unwrap();
    let cli = cli_sys
        .block_on(
            Node::builder(cli_name)
                .secret(secret())
                .seed(srv.listen_addr())
                .start(&cli_sys.handle()),
        )
        .unwrap();
    srv.register("d", &srv_sys.spawn(Doubler)).unwrap();
    let d = cli_sys.block_on(cli.lookup::<Doubler>("d")).unwrap();
    assert!(!d.is_local());
    (srv_sys, srv, cli_sys, cli, d)
}

#[test]
fn a_remote_ask_continues_the_askers_trace_and_the_reply_carries_it_back() {
    let _snap = setup();
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (srv_sys, srv, cli_sys, cli, d) = pair("trace-srv", "trace-cli");
    let root = TraceContext::new_root();
    let ask = root.in_scope(|| d.ask(Double(21)));
    assert_eq!(cli_sys.block_on(ask.timeout(HANG_GUARD)), Ok(42));
    let trace = format!("{:032x}", root.trace_id);
    let double = std::any::type_name::<Double>();
    let server_span = {
        let deadline = Instant::now() + HANG_GUARD;
        loop {
            let found = SPANS
                .lock()
                .unwrap()
                .iter()
                .find(|f| {
                    f.get("message").map(String::as_str) == Some(double)
                        && f.get("trace_id") == Some(&trace)
                })
                .cloned();
            if let Some(f) = found {
                break f;
            }
            assert!(
                Instant::now() < deadline,
                "no odeon.handle span for Double continued the trace"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    };
    assert_eq!(
        server_span.get("parent_span_id"),
        Some(&format!("{:016x}", root.span_id)),
        "{server_span:?}"
    );
    // The reply came back traced: same trace, the server's span.
    let replies = REPLIES.lock().unwrap();
    let reply = replies
        .iter()
        .find(|r| r.get("trace_id") == Some(&trace))
        .unwrap_or_else(|| panic!("no traced reply: {replies:?}"));
    assert_eq!(
        reply.get("span_id"),
        server_span.get("span_id"),
        "{replies:?} {:?}",
        SPANS.lock().unwrap()
    );
    drop(replies);
    drop((d, cli, srv));
    drop((cli_sys, srv_sys));
}

/// The value of the counter `name` labelled `peer = peer`, summed over snapshots.
fn counter(snap: &Snapshotter, totals: &mut HashMap<String, u64>, name: &str, peer: &str) -> u64 {
    for (k, _, _, v) in snap.snapshot().into_vec() {
        let key = k.key();
        if let (Some(p), DebugValue::Counter(n)) = (key.labels().find(|l| l.key() == "peer"), v) {
            *totals
                .entry(format!("{}/{}", key.name(), p.value()))
                .or_default() += n;
        }
    }
    totals.get(&format!("{name}/{peer}")).copied().unwrap_or(0)
}

#[test]
fn bytes_and_frames_per_peer_count_the_traffic_sent() {
    let snap = setup();
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (srv_sys, srv, cli_sys, cli, d) = pair("bytes-srv", "bytes-cli");
    let mut totals = HashMap::new();
    let frames =
        |t: &mut HashMap<String, u64>, name: &str, peer: &str| counter(snap, t, name, peer);
    // Settle what the lookup sent, then count from here.
    let sent0 = frames(&mut totals, "odeon_remote_frames_sent_total", "bytes-srv");
    let recv0 = frames(
        &mut totals,
        "odeon_remote_frames_received_total",
        "bytes-cli",
    );
    let bytes0 = frames(&mut totals, "odeon_remote_bytes_sent_total", "bytes-srv");
    const N: u64 = 50;
    for _ in 0..N {
        d.tell(Note).unwrap();
    }
    assert_eq!(
        cli_sys.block_on(d.ask(Double(1)).timeout(HANG_GUARD)),
        Ok(2)
    );
    let sent = frames(&mut totals, "odeon_remote_frames_sent_total", "bytes-srv") - sent0;
    let bytes = frames(&mut totals, "odeon_remote_bytes_sent_total", "bytes-srv") - bytes0;
    // N tells and one ask; a heartbeat or two may slip in on a slow machine.
    assert!((N + 1..=N + 4).contains(&sent), "{sent} frames sent");
    // Each frame is a 4-byte prefix and at least a variant tag, a token and a name.
    assert!(bytes >= sent * 10, "{bytes} bytes for {sent} frames");
    // The server received them all (the ask's reply proves the tells arrived first).
    let recv = frames(
        &mut totals,
        "odeon_remote_frames_received_total",
        "bytes-cli",
    ) - recv0;
    assert!((N + 1..=N + 4).contains(&recv), "{recv} frames received");
    // And it sent at least the reply back.
    assert!(frames(&mut totals, "odeon_remote_frames_sent_total", "bytes-cli") >= 1);
    drop((d, cli, srv));
    drop((cli_sys, srv_sys));
}
