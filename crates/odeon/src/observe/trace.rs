//! W3C trace context carried by messages (feature `observe`, switched on).
//!
//! odeon does not depend on OpenTelemetry: it keeps its own ids, in the W3C
//! `traceparent` shape (16-byte trace id, 8-byte span id, flags), and writes them on
//! each `odeon.handle` span as the fields `trace_id`, `span_id` and `parent_span_id`
//! (lower-case hex, as in a `traceparent`). An exporter stitches a trace across
//! threads and nodes by those fields; see `docs/observe.md`.
//!
//! Each thread has at most one *current* context: one a caller set with
//! [`TraceContext::in_scope`], or the one of the traced `odeon.handle` span it is
//! inside. A user message sent (locally, or to another node) while a context is
//! current carries it, and the span that handles it is its child: same trace id,
//! parent span id = the sender's span id. A trace starts only where the application
//! starts one (or where one arrives from another node): a message that carries no
//! context is handled in a span without trace ids, and what its handler sends carries
//! none, so untraced work pays for no id and no bookkeeping.

use std::cell::Cell;
use std::fmt;
use std::hash::{BuildHasher, Hasher, RandomState};

thread_local! {
    static CURRENT: Cell<Option<TraceContext>> = const { Cell::new(None) };
    /// Set by [`deliver_as`]: the span id a message sent now is handled in.
    static EXACT: Cell<Option<u64>> = const { Cell::new(None) };
    static NEXT: Cell<u64> = const { Cell::new(0) };
}

/// A W3C trace context: which trace a piece of work belongs to, and the span that
/// caused it.
///
/// ```
/// use odeon::observe::TraceContext;
///
/// let root = TraceContext::new_root();
/// let header = root.to_traceparent();
/// assert_eq!(TraceContext::from_traceparent(&header), Some(root));
/// assert_eq!(TraceContext::current(), None);
/// root.in_scope(|| assert_eq!(TraceContext::current(), Some(root)));
/// let child = root.child();
/// assert_eq!(child.trace_id, root.trace_id);
/// assert_ne!(child.span_id, root.span_id);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TraceContext {
    /// The trace: the same for every span of one request, across nodes. Never 0.
    pub trace_id: u128,
    /// The span: the piece of work that is (or sent) the message. Never 0.
    pub span_id: u64,
    /// The W3C trace flags (bit 0: sampled). Propagated unchanged.
    pub flags: u8,
}

impl TraceContext {
    /// A new trace: random ids, flags `01` (sampled).
    pub fn new_root() -> Self {
        Self {
            trace_id: u128::from(random()) << 64 | u128::from(random()),
            span_id: random(),
            flags: 1,
        }
    }

    /// A new span of the same trace (random span id, same flags).
    pub fn child(&self) -> Self {
        Self {
            span_id: random(),
            ..*self
        }
    }

    /// The context current on this thread: one set by [`in_scope`](Self::in_scope),
    /// or the one of the traced `odeon.handle` span being handled; `None` otherwise
    /// (also inside the span of a message that carried no context).
    pub fn current() -> Option<Self> {
        CURRENT.with(Cell::get)
    }

    /// Runs `f` with this context current on this thread (restoring the previous one
    /// after, also on unwind): a tell or ask sent inside `f` carries it, when the
    /// system observes. Use it to start a trace outside any actor, or to continue one
    /// whose `traceparent` came from elsewhere (an HTTP request, for example).
    pub fn in_scope<R>(self, f: impl FnOnce() -> R) -> R {
        let _restore = Enter::new(self);
        f()
    }

    /// The `traceparent` header value: `00-<trace id>-<span id>-<flags>`, in hex.
    pub fn to_traceparent(&self) -> String {
        format!(
            "00-{:032x}-{:016x}-{:02x}",
            self.trace_id, self.span_id, self.flags
        )
    }

    /// Parses a version-`00` `traceparent`; `None` for anything else, including the
    /// all-zero ids and the upper-case hex the W3C specification declares invalid.
    pub fn from_traceparent(header: &str) -> Option<Self> {
        let mut parts = header.trim().split('-');
        let (version, trace, span, flags) =
            (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
        if parts.next().is_some()
            || version != "00"
            || trace.len() != 32
            || span.len() != 16
            || flags.len() != 2
        {
            return None;
        }
        // Lower-case only: the specification's ids and flags are HEXDIGLC, and a
        // traceparent with upper-case hex is one a vendor "MUST ignore".
        let hex = |s: &str| s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
        if !(hex(trace) && hex(span) && hex(flags)) {
            return None;
        }
        let ctx = Self {
            trace_id: u128::from_str_radix(trace, 16).ok()?,
            span_id: u64::from_str_radix(span, 16).ok()?,
            flags: u8::from_str_radix(flags, 16).ok()?,
        };
        (ctx.trace_id != 0 && ctx.span_id != 0).then_some(ctx)
    }
}

/// For a transport: runs `f` (which sends one message to a local actor, the message
/// having arrived with context `parent`) so that the message is handled in a span
/// whose id is `span_id` (not a random one): the transport knows the handling span
/// before the handler runs, and can send it back with an ask's reply whichever thread
/// that reply leaves from. Not for applications.
#[doc(hidden)]
pub fn deliver_as<R>(parent: TraceContext, span_id: u64, f: impl FnOnce() -> R) -> R {
    struct Reset(Option<u64>);
    impl Drop for Reset {
        fn drop(&mut self) {
            EXACT.with(|e| e.set(self.0));
        }
    }
    let _reset = Reset(EXACT.with(|e| e.replace(Some(span_id))));
    parent.in_scope(f)
}

/// The span id chosen by [`deliver_as`] for a message sent now, if any.
pub(crate) fn exact() -> Option<u64> {
    EXACT.with(Cell::get)
}

/// Makes a context current until dropped, then restores the previous one.
pub(crate) struct Enter {
    previous: Option<TraceContext>,
}

impl Enter {
    pub(crate) fn new(ctx: TraceContext) -> Self {
        Self {
            previous: CURRENT.with(|c| c.replace(Some(ctx))),
        }
    }
}

impl Drop for Enter {
    fn drop(&mut self) {
        CURRENT.with(|c| c.set(self.previous));
    }
}

/// A random non-zero id: a per-thread counter through std's randomly keyed SipHash
/// (no RNG dependency; ids need to be unique, not secret).
fn random() -> u64 {
    let n = NEXT.with(|c| {
        let n = c.get().wrapping_add(1);
        c.set(n);
        n
    });
    let mut h = RandomState::new().build_hasher();
    h.write_u64(n);
    h.finish().max(1)
}

/// Lower-case hex of a trace id, for span fields (formatted only if recorded).
pub(crate) struct Hex128(pub(crate) u128);
impl fmt::Display for Hex128 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:032x}", self.0)
    }
}

/// Lower-case hex of a span id.
pub(crate) struct Hex64(pub(crate) u64);
impl fmt::Display for Hex64 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}
