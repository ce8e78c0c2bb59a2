//! What the link adds when odeon observes (cargo feature `observe`, switched on by
//! `SystemBuilder::observe(true)`): the W3C trace context of tells, asks and replies
//! (`TracedTell`, `TracedAsk`, `TracedReply` in `wire/traffic.rs`), and the bytes and
//! frames sent to and received from each peer, through the `metrics` facade.
//!
//! Without the feature every function here is an empty inline stub: no traced frame
//! is ever sent (the frames are those of a build without the feature) and nothing is
//! counted. With it but switched off, each is one load of odeon's process-wide switch.

use crate::wire::WireTrace;

#[cfg(feature = "observe")]
mod on {
    use odeon::observe::TraceContext;

    use super::*;

    /// Frames sent to a peer, written or queued for its link (counter; label `peer`, the
    /// peer node's name). Includes runtime signals and heartbeats, not the handshake.
    pub(crate) const FRAMES_SENT: &str = "odeon_remote_frames_sent_total";
    /// Bytes of those frames, length prefixes included (counter; label `peer`).
    pub(crate) const BYTES_SENT: &str = "odeon_remote_bytes_sent_total";
    /// Frames received from a peer on an open link (counter; label `peer`).
    pub(crate) const FRAMES_RECEIVED: &str = "odeon_remote_frames_received_total";
    /// Bytes of those frames, length prefixes included (counter; label `peer`).
    pub(crate) const BYTES_RECEIVED: &str = "odeon_remote_bytes_received_total";

    /// The trace context a frame sent now carries: the current one, if odeon observes.
    #[inline]
    pub(crate) fn outgoing() -> Option<WireTrace> {
        if !odeon::observe::is_on() {
            return None;
        }
        TraceContext::current().map(to_wire)
    }

    fn from_wire(trace: WireTrace) -> Option<TraceContext> {
        let ctx = TraceContext {
            trace_id: u128::from_be_bytes(trace.trace_id),
            span_id: u64::from_be_bytes(trace.span_id),
            flags: trace.flags,
        };
        (odeon::observe::is_on() && ctx.trace_id != 0 && ctx.span_id != 0).then_some(ctx)
    }

    fn to_wire(c: TraceContext) -> WireTrace {
        WireTrace {
            trace_id: c.trace_id.to_be_bytes(),
            span_id: c.span_id.to_be_bytes(),
            flags: c.flags,
        }
    }

    /// Runs `f` (a delivery) with a received context current, so that the message it
    /// sends carries it. Returns the handling span's context, chosen here, to send
    /// back with an ask's reply (`reply_trace`).
    pub(crate) fn in_trace(trace: WireTrace, f: impl FnOnce(Option<WireTrace>)) {
        match from_wire(trace) {
            Some(parent) => {
                let span = parent.child();
                odeon::observe::deliver_as(parent, span.span_id, || f(Some(to_wire(span))));
            }
            None => f(None),
        }
    }

    /// A traced reply arrived: a DEBUG event `odeon.reply` naming the replying span,
    /// so that an exporter can link the asker's span to it.
    pub(crate) fn replied(peer: &crate::wire::NodeId, request: u64, trace: WireTrace) {
        tracing::debug!(
            target: "odeon.reply",
            peer = %peer,
            request,
            trace_id = %format_args!("{:032x}", u128::from_be_bytes(trace.trace_id)),
            span_id = %format_args!("{:016x}", u64::from_be_bytes(trace.span_id)),
            "traced reply"
        );
    }

    /// One peer's traffic counters, registered once with the recorder installed when
    /// the peer appeared.
    pub(crate) struct PeerTraffic {
        frames_sent: metrics::Counter,
        bytes_sent: metrics::Counter,
        frames_received: metrics::Counter,
        bytes_received: metrics::Counter,
    }

    impl PeerTraffic {
        /// The counters of the peer named `name`, if odeon observes.
        pub(crate) fn new(name: &str) -> Option<Self> {
            if !odeon::observe::is_on() {
                return None;
            }
            let peer = name.to_owned();
            Some(Self {
                frames_sent: metrics::counter!(FRAMES_SENT, "peer" => peer.clone()),
                bytes_sent: metrics::counter!(BYTES_SENT, "peer" => peer.clone()),
                frames_received: metrics::counter!(FRAMES_RECEIVED, "peer" => peer.clone()),
                bytes_received: metrics::counter!(BYTES_RECEIVED, "peer" => peer),
            })
        }

        /// A whole frame of `bytes` (prefix included) was sent.
        pub(crate) fn sent(&self, bytes: usize) {
            self.frames_sent.increment(1);
            self.bytes_sent.increment(bytes as u64);
        }

        /// A frame of `payload` bytes (without its prefix) was received.
        pub(crate) fn received(&self, payload: usize) {
            self.frames_received.increment(1);
            self.bytes_received
                .increment((payload + crate::wire::frame::PREFIX) as u64);
        }
    }
}

#[cfg(feature = "observe")]
pub(crate) use on::*;

#[cfg(not(feature = "observe"))]
mod off {
    use super::*;

    #[inline(always)]
    pub(crate) fn outgoing() -> Option<WireTrace> {
        None
    }

    #[inline(always)]
    pub(crate) fn in_trace(_: WireTrace, f: impl FnOnce(Option<WireTrace>)) {
        f(None);
    }

    #[inline(always)]
    pub(crate) fn replied(_: &crate::wire::NodeId, _: u64, _: WireTrace) {}
}

#[cfg(not(feature = "observe"))]
pub(crate) use off::*;
