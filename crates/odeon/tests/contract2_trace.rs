//! Second contract pass over `odeon::observe::TraceContext` (feature `observe`): the
//! `traceparent` format of the W3C Trace Context specification that its rustdoc and
//! docs/observe.md name, `in_scope`/`current` on a thread, and a context carried by a
//! tell and an ask into the handler of an observed system.
//!
//! `cargo test -p odeon --features observe --test contract2_trace`.

use std::sync::mpsc;
use std::time::Duration;

use odeon::observe::TraceContext;
use odeon::{Actor, Context, Handler, Message, System};

const GUARD: Duration = Duration::from_secs(10);

const VALID: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

// ---- traceparent ------------------------------------------------------------------

#[test]
fn the_specifications_example_parses_to_its_fields_and_back() {
    let ctx = TraceContext::from_traceparent(VALID).expect("the W3C example");
    assert_eq!(ctx.trace_id, 0x4bf92f3577b34da6a3ce929d0e0e4736);
    assert_eq!(ctx.span_id, 0x00f067aa0ba902b7);
    assert_eq!(ctx.flags, 1);
    assert_eq!(ctx.to_traceparent(), VALID);
    let unsampled = TraceContext::from_traceparent(&VALID.replace("-01", "-00")).unwrap();
    assert_eq!(unsampled.flags, 0);
    assert_eq!(unsampled.to_traceparent(), VALID.replace("-01", "-00"));
}

/// "`None` for anything else, including the all-zero ids": what the W3C
/// specification declares invalid for version `00`.
#[test]
fn anything_but_a_valid_version_00_traceparent_is_none() {
    let invalid = [
        "",
        "00",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
        "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
        "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
        "00-4bf92f3577b34da6a3ce929d0e0e47366-00f067aa0ba902b7-01",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b-01",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-1",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-001",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0g",
        "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",
        "00-+bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-+0f067aa0ba902b7-01",
        "00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\u{0}",
        // Upper-case hex: the specification's ids and flags are lower-case hex
        // (HEXDIGLC), and a vendor "MUST ignore" a traceparent with anything else.
        "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00F067AA0BA902B7-01",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0A",
    ];
    for header in invalid {
        assert_eq!(
            TraceContext::from_traceparent(header),
            None,
            "accepted {header:?}"
        );
    }
}

#[test]
fn new_roots_are_distinct_non_zero_sampled_and_round_trip() {
    let mut seen = std::collections::HashSet::new();
    for _ in 0..1000 {
        let root = TraceContext::new_root();
        assert_ne!(root.trace_id, 0);
        assert_ne!(root.span_id, 0);
        assert_eq!(root.flags, 1, "a new root is sampled");
        assert!(seen.insert(root.trace_id), "a trace id repeated");
        let header = root.to_traceparent();
        assert_eq!(header.len(), 55);
        assert_eq!(header, header.to_ascii_lowercase());
        assert_eq!(TraceContext::from_traceparent(&header), Some(root));
        let child = root.child();
        assert_eq!((child.trace_id, child.flags), (root.trace_id, root.flags));
        assert_ne!(child.span_id, root.span_id);
        assert_ne!(child.span_id, 0);
    }
}

// ---- in_scope / current -----------------------------------------------------------

#[test]
fn in_scope_nests_restores_and_survives_an_unwind_and_is_per_thread() {
    let outer = TraceContext::new_root();
    let inner = TraceContext::new_root();
    assert_eq!(TraceContext::current(), None);
    outer.in_scope(|| {
        assert_eq!(TraceContext::current(), Some(outer));
        inner.in_scope(|| assert_eq!(TraceContext::current(), Some(inner)));
        assert_eq!(TraceContext::current(), Some(outer));
        let unwound = std::panic::catch_unwind(|| inner.in_scope(|| panic!("in scope")));
        assert!(unwound.is_err());
        assert_eq!(
            TraceContext::current(),
            Some(outer),
            "not restored on unwind"
        );
        std::thread::spawn(|| assert_eq!(TraceContext::current(), None))
            .join()
            .unwrap();
    });
    assert_eq!(TraceContext::current(), None);
    assert_eq!(outer.in_scope(|| 42), 42, "in_scope returns f's value");
}

// ---- carried by messages ----------------------------------------------------------

struct Probe;
impl Actor for Probe {}

/// Replies with the context current in its handler.
struct WhatTrace;
impl Message for WhatTrace {
    type Reply = Option<TraceContext>;
}
impl Handler<WhatTrace> for Probe {
    fn handle(&mut self, _: WhatTrace, _: &mut Context<Self>) -> Option<TraceContext> {
        TraceContext::current()
    }
}

/// Reports the context current in its handler on a channel (a tell).
struct Report(mpsc::Sender<Option<TraceContext>>);
impl Message for Report {
    type Reply = ();
}
impl Handler<Report> for Probe {
    fn handle(&mut self, Report(tx): Report, _: &mut Context<Self>) {
        let _ = tx.send(TraceContext::current());
    }
}

/// Forwards a `WhatTrace` ask to another probe from inside its handler.
struct Relay(odeon::ActorRef<Probe>);
impl Message for Relay {
    type Reply = (Option<TraceContext>, odeon::Ask<Option<TraceContext>>);
}
impl Handler<Relay> for Probe {
    fn handle(
        &mut self,
        Relay(next): Relay,
        _: &mut Context<Self>,
    ) -> (Option<TraceContext>, odeon::Ask<Option<TraceContext>>) {
        (TraceContext::current(), next.ask(WhatTrace))
    }
}

#[test]
fn a_message_sent_in_scope_is_handled_in_a_child_of_the_senders_span() {
    let system = System::builder().workers(2).observe(true).build();
    let probe = system.spawn(Probe);
    let root = TraceContext::new_root();

    // An ask.
    let asked = system
        .block_on(root.in_scope(|| probe.ask(WhatTrace)).timeout(GUARD))
        .unwrap()
        .expect("the handler of a traced ask has a current context");
    assert_eq!(asked.trace_id, root.trace_id);
    assert_eq!(asked.flags, root.flags);
    assert_ne!(
        asked.span_id, root.span_id,
        "the handler is a span of its own"
    );

    // A tell.
    let (tx, rx) = mpsc::channel();
    root.in_scope(|| probe.tell(Report(tx.clone()))).unwrap();
    let told = rx.recv_timeout(GUARD).unwrap().expect("a traced tell");
    assert_eq!(told.trace_id, root.trace_id);
    assert_ne!(told.span_id, root.span_id);

    // Untraced: no context in the handler.
    probe.tell(Report(tx)).unwrap();
    assert_eq!(rx.recv_timeout(GUARD).unwrap(), None);
    assert_eq!(
        system
            .block_on(probe.ask(WhatTrace).timeout(GUARD))
            .unwrap(),
        None
    );
    assert!(system.shutdown());
}

/// "its context is current while the handler runs, so what the handler sends
/// continues the trace" (one trace over two hops), and an untraced hop stays so.
#[test]
fn what_a_traced_handler_sends_continues_the_trace() {
    let system = System::builder().workers(2).observe(true).build();
    let first = system.spawn(Probe);
    let second = system.spawn(Probe);
    let root = TraceContext::new_root();
    let (hop1, hop2) = system
        .block_on(
            root.in_scope(|| first.ask(Relay(second.clone())))
                .timeout(GUARD),
        )
        .unwrap();
    let hop1 = hop1.expect("first hop traced");
    let hop2 = system
        .block_on(hop2.timeout(GUARD))
        .unwrap()
        .expect("second hop traced");
    assert_eq!(hop1.trace_id, root.trace_id);
    assert_eq!(hop2.trace_id, root.trace_id);
    assert_ne!(hop2.span_id, hop1.span_id);
    assert_ne!(hop2.span_id, root.span_id);

    let (hop1, hop2) = system
        .block_on(first.ask(Relay(second)).timeout(GUARD))
        .unwrap();
    assert_eq!(hop1, None);
    assert_eq!(system.block_on(hop2.timeout(GUARD)).unwrap(), None);
    assert!(system.shutdown());
}
