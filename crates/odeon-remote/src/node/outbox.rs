//! A peer's outbox: where frames wait for the link, or from where an idle link is
//! written at once by the thread that sends.
//!
//! # Direct writes when the link is idle, batches when it is busy
//! A frame sent while nothing is queued, the driver is not writing, and no other frame
//! was sent in the last [`DIRECT_GAP`] is written to the socket right away, on the
//! sending thread (a non-blocking `try_write`: an actor's worker for a reply, the
//! caller's thread for a tell or an ask). That takes the link's driver task, and the
//! wake-up of the I/O thread it runs on, off the path of a lone request and its reply
//! (issue 19: a round trip crossed six thread wake-ups, four now).
//!
//! Anything else is appended to one byte queue, and the driver writes the queue in one
//! `write` per batch (see `link.rs`): under load, frames sent in a burst share a
//! system call, as before. The gap rule is what keeps bursts batched: a sender that
//! sends again within [`DIRECT_GAP`] queues, so a tight loop of tells costs one wake-up
//! of the driver per batch, not one system call per message.
//!
//! # Order
//! Everything goes through one lock, and a direct write happens only when the queue is
//! empty and the driver holds no bytes, so frames reach the socket in the order they
//! entered the outbox. A direct write that the socket takes only in part queues the
//! rest at the head of the queue; if the link fails before the driver writes it, that
//! torn rest is dropped with the link (a new link must start at a frame boundary),
//! like every frame already handed to a failed link.
//!
//! TLS links are written only by the driver (`direct` stays `None`): the TLS state is
//! not shared between threads.

use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use tokio::net::tcp::OwnedWriteHalf;
use tokio::sync::Notify;

/// A frame sent within this long after the previous one is queued for the driver
/// rather than written by its sender (see module docs).
pub(crate) const DIRECT_GAP: Duration = Duration::from_micros(5);

/// The largest batch buffer the outbox keeps for reuse. Unit: bytes.
const SPARE_KEEP: usize = 1024 * 1024;

/// Where a pushed frame went.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Pushed {
    /// Written to the socket in full by the sender (or dropped: the peer is lost).
    Written,
    /// Queued (or partly written, the rest queued) for the driver.
    Queued,
}

/// What the driver takes from the outbox.
pub(crate) struct Taken {
    /// Whole frames, except that the first may be the rest of a partly written one.
    pub(crate) bytes: Vec<u8>,
    /// Message places held by these frames (given back by the driver).
    pub(crate) counted: usize,
}

struct State {
    queued: Vec<u8>,
    /// The buffer the driver gave back after writing it: the next `take` swaps it in,
    /// so that the queue keeps its capacity instead of growing from empty each time.
    spare: Vec<u8>,
    /// Message places held by the frames in `queued`.
    counted: usize,
    /// Bytes at the head of `queued` that finish a frame partly written directly.
    torn: usize,
    /// The node is leaving: the driver closes the link once the queue is written.
    leave: bool,
    /// The peer is lost: frames are dropped, never written.
    closed: bool,
    /// The driver holds bytes it took from the queue and is writing them.
    writing: bool,
    /// The socket of the current plain TCP link, for direct writes.
    direct: Option<Arc<OwnedWriteHalf>>,
    /// When the link was last used: a frame entered an idle outbox (or was written
    /// directly: then when its write returned), or the driver took a batch or found
    /// the queue empty after one; `None` before the first.
    last_send: Option<Instant>,
}

pub(crate) struct Outbox {
    st: Mutex<State>,
    /// [`DIRECT_GAP`], except in tests.
    gap: Duration,
    /// Wakes the driver: bytes were queued while it was idle, or the node is leaving.
    wake: Notify,
}

impl Outbox {
    pub(crate) fn new() -> Self {
        Self::with_gap(DIRECT_GAP)
    }

    fn with_gap(gap: Duration) -> Self {
        Self {
            gap,
            st: Mutex::new(State {
                queued: Vec::new(),
                spare: Vec::new(),
                counted: 0,
                torn: 0,
                leave: false,
                closed: false,
                writing: false,
                direct: None,
                last_send: None,
            }),
            wake: Notify::new(),
        }
    }

    /// Writes `frame` (prefix included) at once if the link is idle, else queues it.
    /// `counted`: it holds one of the outbox's message places (the caller gives the
    /// place back itself if the frame was written).
    pub(crate) fn push(&self, frame: &[u8], counted: bool) -> Pushed {
        let mut st = self.st.lock();
        if st.closed {
            return Pushed::Written;
        }
        let mut from = 0;
        let busy = !st.queued.is_empty() || st.writing;
        // A busy link reads no clock per frame: the driver stamps `last_send` as it
        // takes each batch, which keeps the gap rule (a frame right after a busy
        // spell queues) at one clock read per batch (they were 2% of the sender's
        // profile in the remote throughput benchmark).
        if !busy {
            let now = Instant::now();
            let idle = st
                .last_send
                .is_none_or(|last| now.saturating_duration_since(last) >= self.gap);
            st.last_send = Some(now);
            if let (true, false, Some(sock)) = (idle, st.leave, &st.direct) {
                match sock.try_write(frame) {
                    Ok(n) if n == frame.len() => {
                        // The gap counts from the end of the write: a sender that
                        // sends again at once is in a burst, however long this took.
                        st.last_send = Some(Instant::now());
                        return Pushed::Written;
                    }
                    Ok(n) => {
                        from = n;
                        st.torn = frame.len() - n;
                    }
                    // Would block, or failed: the driver meets the same state and
                    // deals with it (waits for room, or ends the link).
                    Err(_) => {}
                }
            }
        }
        let was_idle = st.queued.is_empty() && !st.writing;
        st.queued.extend_from_slice(&frame[from..]);
        st.counted += usize::from(counted);
        drop(st);
        if was_idle {
            self.wake.notify_one();
        }
        Pushed::Queued
    }

    /// Asks the driver to close the link once everything queued before is written.
    pub(crate) fn leave(&self) {
        self.st.lock().leave = true;
        self.wake.notify_one();
    }

    /// Resolves when the driver has something to do (see [`Outbox::take`]).
    pub(crate) async fn woken(&self) {
        self.wake.notified().await;
    }

    /// Takes everything queued for writing, or `None` if the queue is empty (then the
    /// driver is idle again, and the next frame may be written directly). The second
    /// value is whether the node is leaving.
    pub(crate) fn take(&self) -> (Option<Taken>, bool) {
        let mut st = self.st.lock();
        // Frames pushed while the link was busy left the stamp to us (see `push`).
        st.last_send = Some(Instant::now());
        if st.queued.is_empty() {
            st.writing = false;
            return (None, st.leave);
        }
        st.writing = true;
        st.torn = 0;
        let spare = std::mem::take(&mut st.spare);
        let taken = Taken {
            bytes: std::mem::replace(&mut st.queued, spare),
            counted: std::mem::take(&mut st.counted),
        };
        (Some(taken), st.leave)
    }

    /// The driver wrote what it took: the buffer is kept for the next batch, unless it
    /// grew large (a burst should not pin its memory).
    pub(crate) fn give_back(&self, mut bytes: Vec<u8>) {
        if bytes.capacity() <= SPARE_KEEP {
            bytes.clear();
            self.st.lock().spare = bytes;
        }
    }

    /// A link came up: on plain TCP, idle sends may now write to `sock` directly.
    pub(crate) fn link_up(&self, sock: Option<Arc<OwnedWriteHalf>>) {
        let mut st = self.st.lock();
        st.direct = sock;
        st.writing = false;
    }

    /// The link ended: no more direct writes, and a torn frame rest is dropped (see
    /// module docs). What else is queued waits for the next link.
    pub(crate) fn link_down(&self) {
        let mut st = self.st.lock();
        st.direct = None;
        st.writing = false;
        let torn = std::mem::take(&mut st.torn);
        st.queued.drain(..torn);
    }

    /// The peer is lost: drops what is queued and every frame pushed from now on.
    pub(crate) fn close(&self) {
        let mut st = self.st.lock();
        st.closed = true;
        st.direct = None;
        st.queued = Vec::new();
        st.counted = 0;
        st.torn = 0;
    }

    /// When the link was last used (see `State::last_send`): the driver sends a
    /// heartbeat once the link has been idle long enough.
    pub(crate) fn last_send(&self) -> Option<Instant> {
        self.st.lock().last_send
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    fn rt() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    async fn pair() -> (Arc<OwnedWriteHalf>, tokio::net::TcpStream) {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let dial = tokio::net::TcpStream::connect(l.local_addr().unwrap());
        let (a, b) = tokio::join!(dial, l.accept());
        let (_, w) = a.unwrap().into_split();
        (Arc::new(w), b.unwrap().0)
    }

    #[test]
    fn an_idle_link_is_written_by_the_sender_and_a_burst_is_queued_in_order() {
        rt().block_on(async {
            let (w, mut peer) = pair().await;
            // The socket reports writable once the runtime has polled it.
            w.writable().await.unwrap();
            // A gap no test run can span: only the first push looks idle.
            let out = Outbox::with_gap(Duration::from_secs(3600));
            out.link_up(Some(w.clone()));
            assert_eq!(out.push(b"one", true), Pushed::Written);
            // Right after: queued, behind nothing, and counted.
            assert_eq!(out.push(b"two", true), Pushed::Queued);
            assert_eq!(out.push(b"six", false), Pushed::Queued);
            let (taken, leaving) = out.take();
            let taken = taken.unwrap();
            assert!(!leaving);
            assert_eq!(taken.bytes, b"twosix");
            assert_eq!(taken.counted, 1);
            assert!(out.take().0.is_none(), "the driver is idle again");
            let mut got = [0u8; 3];
            peer.read_exact(&mut got).await.unwrap();
            assert_eq!(&got, b"one");

            // With no gap at all, every send looks idle, yet while the driver holds
            // bytes, or something is queued, a send queues behind them.
            let out = Outbox::with_gap(Duration::ZERO);
            out.link_up(Some(w));
            assert_eq!(out.push(b"a", false), Pushed::Written);
            out.st.lock().writing = true;
            assert_eq!(out.push(b"b", false), Pushed::Queued);
            assert_eq!(out.take().0.unwrap().bytes, b"b");
            assert!(out.take().0.is_none());
            assert_eq!(out.push(b"c", false), Pushed::Written);
            let mut got = [0u8; 2];
            peer.read_exact(&mut got).await.unwrap();
            assert_eq!(&got, b"ac");
        });
    }

    #[test]
    fn without_a_link_everything_waits_and_a_torn_rest_goes_with_its_link() {
        let out = Outbox::new();
        assert_eq!(out.push(b"abc", true), Pushed::Queued);
        {
            // As if a direct write had taken 2 of 5 bytes before the link failed.
            let mut st = out.st.lock();
            st.queued.clear();
            st.queued.extend_from_slice(b"xyz");
            st.torn = 3;
            st.queued.extend_from_slice(b"next");
        }
        out.link_down();
        assert_eq!(out.take().0.unwrap().bytes, b"next");
        out.leave();
        assert!(out.take().1, "leaving is reported to the driver");
    }
}
