//! The per-message hooks of an observing system, kept cheap (`docs/observe.md`, "Cost").
//!
//! - **Metric handles are cached per actor**: the first handled message of an actor
//!   registers its three per-message metrics (`odeon_messages_handled_total`,
//!   `odeon_handler_seconds`, `odeon_mailbox_depth`, label `actor`) with the recorder
//!   current then, and keeps the handles in the actor's turn-only bookkeeping. Each
//!   later message is a handle call (an atomic add in the common recorders), not a
//!   labelled key built, hashed and looked up. The rule for recorders: a message is
//!   recorded by the recorder `metrics` reports as current when it is handled (the
//!   global one, or a thread-local one of the worker thread); the handles remember
//!   which recorder they came from (by address) and are registered again when another
//!   one is current, so a recorder installed after an actor's first message gets its
//!   later messages. That check is one thread-local read and one atomic load.
//! - **One clock read per message in a run of messages**: the end of one handler is
//!   the start of the next one in the same turn, as long as the turn did nothing else
//!   in between (took no signal, ran no `between` hook, did not linger for mail).
//!   So the time between two handlers of a turn (the runtime's own per-message work:
//!   the span, the mailbox, these hooks) is counted in the next handler's time.
//! - A panicking handler unwinds through [`Handling`], whose drop records its message
//!   the uncached way (panics are rare; the turn-only handles cannot be reached there).

use metrics::{Counter, Histogram, Key, Label, Level, Metadata, Recorder};

use super::trace::{Enter, Hex64, Hex128};
// A TSC read where the CPU has an invariant one (see `Cargo.toml`): the clock read is
// most of what a handled message costs beyond the handler once the metrics are cached.
use quanta::Instant;

use super::{HANDLER_SECONDS, MAILBOX_DEPTH, MESSAGES_HANDLED, TraceContext, Traced};

/// What the `metrics` macros of `observe/mod.rs` pass: same target, level and module.
static METADATA: Metadata<'static> =
    Metadata::new("odeon::observe", Level::INFO, Some("odeon::observe"));

/// Owner-only state of an observed actor (in the cell's `Life`: read and written by its
/// turn only, never across a handler call).
#[derive(Default)]
pub(crate) struct TurnObs {
    /// Boxed: a cell of a system that does not observe carries one word, not four.
    handles: Option<Box<Handles>>,
    /// When the previous handler of this turn ended, if the turn did nothing since.
    stamp: Option<Instant>,
}

/// One actor's per-message metrics, registered with one recorder.
struct Handles {
    /// The address of the recorder that gave them (identity only, never dereferenced).
    recorder: usize,
    handled: Counter,
    seconds: Histogram,
    depth: Histogram,
}

impl Handles {
    fn register(recorder: &dyn Recorder, id: usize, actor: &'static str) -> Box<Self> {
        let key = |name: &'static str| Key::from_parts(name, vec![Label::new("actor", actor)]);
        Box::new(Self {
            recorder: id,
            handled: recorder.register_counter(&key(MESSAGES_HANDLED), &METADATA),
            seconds: recorder.register_histogram(&key(HANDLER_SECONDS), &METADATA),
            depth: recorder.register_histogram(&key(MAILBOX_DEPTH), &METADATA),
        })
    }
}

impl TurnObs {
    /// The turn did something other than handle the next message (it started, waited,
    /// took a signal): the next handler's time starts at its own clock read.
    #[inline]
    pub(crate) fn gap(&mut self) {
        self.stamp = None;
    }

    /// Applies `f` to the actor's handles for the current recorder (registered now if
    /// it is not the one they came from).
    #[inline]
    fn with_handles(&mut self, actor: &'static str, f: impl FnOnce(&Handles)) {
        metrics::with_recorder(|r| {
            let id = std::ptr::from_ref(r).cast::<()>() as usize;
            match &mut self.handles {
                Some(h) if h.recorder == id => f(h),
                slot => f(slot.insert(Handles::register(r, id, actor))),
            }
        });
    }

    /// A user message is taken for handling with `depth` user messages behind it.
    pub(crate) fn depth(&mut self, actor: &'static str, depth: u64) {
        self.with_handles(actor, |h| h.depth.record(depth as f64));
    }

    /// The start of a handler: the end of the previous one if nothing came between.
    pub(crate) fn start(&mut self) -> Instant {
        self.stamp.take().unwrap_or_else(Instant::now)
    }

    /// A handler that started at `start` returned (or suspended): count it, record its
    /// time, and keep its end as the next handler's start.
    pub(crate) fn handled(&mut self, actor: &'static str, start: Instant) {
        let end = Instant::now();
        let took = end.saturating_duration_since(start).as_secs_f64();
        self.with_handles(actor, |h| {
            h.handled.increment(1);
            h.seconds.record(took);
        });
        self.stamp = Some(end);
    }
}

/// One handled message: its span stays entered until dropped. The metrics are recorded
/// by [`TurnObs::handled`] before it is dropped; only an unwinding handler leaves that
/// to the drop.
pub(crate) struct Handling {
    _span: tracing::span::EnteredSpan,
    // Fields drop in declaration order: the span is exited, then the thread's
    // previous trace context is restored.
    _trace: Option<Enter>,
    /// The actor and the handler's start, until [`finish`](Self::finish).
    unwinding: Option<(&'static str, Instant)>,
}

impl Handling {
    #[cold]
    #[inline(never)]
    pub(crate) fn begin(
        actor: &'static str,
        name: Option<&str>,
        message: &'static str,
        parent: Option<Traced>,
    ) -> Self {
        let span = tracing::info_span!(
            "odeon.handle",
            actor,
            name = tracing::field::Empty,
            message,
            trace_id = tracing::field::Empty,
            span_id = tracing::field::Empty,
            parent_span_id = tracing::field::Empty,
        );
        // No subscriber listens at INFO: skip the field recording (formatting nothing,
        // but still a call per field).
        let listened = !span.is_disabled();
        // No let-chain: the crate's MSRV is 1.85.
        if let (true, Some(name)) = (listened, name) {
            span.record("name", name);
        }
        // Only a message that carried a context continues (and propagates) a trace: an
        // untraced message costs no id, and what its handler sends carries nothing.
        let trace = parent.map(|t| {
            let p = t.parent;
            let ctx = match t.exact {
                Some(span_id) => TraceContext { span_id, ..p },
                None => p.child(),
            };
            if listened {
                span.record("trace_id", tracing::field::display(Hex128(ctx.trace_id)));
                span.record("span_id", tracing::field::display(Hex64(ctx.span_id)));
                span.record("parent_span_id", tracing::field::display(Hex64(p.span_id)));
            }
            Enter::new(ctx)
        });
        Self {
            _span: span.entered(),
            _trace: trace,
            unwinding: None,
        }
    }

    /// Arms the unwinding fallback: the handler starts at `start`.
    pub(crate) fn started(&mut self, actor: &'static str, start: Instant) {
        self.unwinding = Some((actor, start));
    }

    /// The handler returned and its metrics were recorded: exits the span.
    pub(crate) fn finish(mut self) {
        self.unwinding = None;
    }
}

impl Drop for Handling {
    fn drop(&mut self) {
        // Only a handler that unwound gets here armed.
        if let Some((actor, start)) = self.unwinding.take() {
            let took = Instant::now()
                .saturating_duration_since(start)
                .as_secs_f64();
            metrics::counter!(MESSAGES_HANDLED, "actor" => actor).increment(1);
            metrics::histogram!(HANDLER_SECONDS, "actor" => actor).record(took);
        }
    }
}
