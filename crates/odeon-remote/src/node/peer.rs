//! One peer node: its link, its outbox, and what this node is waiting on from it.
//!
//! # One link per pair
//! Either node may dial. A dialed link carries `Attach` first; the listener keeps it
//! (`Attached`) or refuses it (`Duplicate`) under the peer's lock, by one rule both
//! sides apply alike: an existing link wins, and of two racing dials the one dialed by
//! the smaller [`NodeId`] wins. So both ends always agree on the one link, and every
//! frame of the pair travels on it in order. The driver that runs it is in `link.rs`.
//!
//! # Sessions
//! Each `Peer` value is one session: this node's state about the peer (pending asks,
//! watches, links, the outbox), from its start until the peer is lost. A link records
//! the session of both ends, and a new link checks them, so that both ends agree on
//! whether they continue or start afresh: if either end lost the other since their
//! last link (it has a new session), the other end loses it too before the new link
//! carries anything. Otherwise a node that never saw the loss would keep asks and
//! watches that the other end has forgotten, and wait for their answers forever.
//!
//! # The outbox
//! Frames wait in the peer's outbox until the driver writes them, or are written at
//! once by their sender when the link is idle (`outbox.rs`). Messages (tells and
//! asks) waiting in the outbox take one of `outbox_bound` places: when none is free a tell fails with
//! `TellError::Full`, an ask with `AskError::Full`, and `ActorRef::send` waits
//! ([`Peer::room`]). Runtime signals (replies, watches, `Terminated`, links, stops,
//! heartbeats) take no place: a bound must never refuse or drop them (guarantee 7).
//!
//! # Losing a peer
//! When the link fails, the driver redials with exponential backoff. The peer is lost
//! when no link is back within `lost_after` (a handshake under way at that moment may
//! take up to another `lost_after`), when its link carried nothing (not even a
//! heartbeat) for `lost_after`, when the failure detector declares it down while no
//! link is up, or when it says it is leaving. Then, once: pending asks fail with `Unreachable`, watchers of
//! its actors get `Terminated` with `StopReason::NodeLost`, refs to its actors refuse
//! further sends, the link is closed (driver stopped, socket closed) and the frames
//! still queued on it are dropped. A later link to the same node belongs to a new
//! `Peer` and starts empty.

use std::any::Any;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use odeon::remote::ReplySlot;
use odeon::{ActorId, AskError, StopReason, Terminated};
use parking_lot::Mutex;
use tokio::sync::{Semaphore, mpsc, oneshot, watch};

use super::NodeInner;
use super::outbox::{Outbox, Pushed};
use crate::interface::{DecodeReply, Interface};
use crate::transport::Link;
use crate::wire::{self, NodeId, Traffic};

/// A new session number: unique within this process, which is all a peer compares.
fn next_session() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// Why the outbox did not take a message.
#[derive(Debug)]
pub(crate) enum Refused {
    /// Every place is taken: wait for [`Peer::room`].
    Full,
    /// The peer is lost.
    Unreachable,
    /// It did not encode.
    Rejected(String),
}

/// Encodes `traffic` as a frame in this thread's scratch buffer and hands it to `f`:
/// the outbox copies it (into its queue) or writes it, so no frame needs a buffer of
/// its own.
fn with_frame<R>(
    traffic: &Traffic,
    max_frame: usize,
    f: impl FnOnce(&[u8]) -> R,
) -> Result<R, wire::WireError> {
    thread_local! {
        static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    SCRATCH.with(|scratch| {
        // A frame encoded while another is (a ref's codec sending from inside an
        // encoding, say) gets a buffer of its own instead.
        let mut own = Vec::new();
        let mut guard = scratch.try_borrow_mut();
        let buf = match guard.as_deref_mut() {
            Ok(b) => b,
            Err(_) => &mut own,
        };
        wire::encode_frame_into(traffic, max_frame, buf)?;
        let r = f(buf);
        // Keep a large frame's buffer only as long as it is used.
        if buf.capacity() > SCRATCH_KEEP {
            *buf = Vec::new();
        }
        Ok(r)
    })
}

/// The largest scratch buffer a thread keeps between frames. Unit: bytes.
const SCRATCH_KEEP: usize = 64 * 1024;

/// What a reply frame completes.
pub(crate) enum Pending {
    /// An actor ask: decode with the message's reply decoder.
    Ask {
        slot: ReplySlot,
        decode: DecodeReply,
    },
    /// A node request (lookup, spawn): the raw outcome.
    Raw(oneshot::Sender<Result<Vec<u8>, AskError>>),
}

/// A watch this node serves for the peer: the local watch key and the target.
pub(crate) struct Served {
    pub(crate) key: ActorId,
    pub(crate) target: Arc<dyn Any + Send + Sync>,
    pub(crate) interface: &'static Interface,
}

type Notify = Box<dyn FnOnce(Terminated) + Send>;

#[derive(Default)]
pub(crate) struct PeerState {
    pub(crate) pending: HashMap<u64, Pending>,
    /// Our actors' watches on the peer's actors: (their actor id, key) → notify.
    pub(crate) watches: HashMap<(u64, u64), Notify>,
    /// The peer's watches on our actors: (our actor id, their key).
    pub(crate) served: HashMap<(u64, u64), Served>,
    /// Links from the peer's actors to ours: (our actor id, their actor id).
    pub(crate) links: std::collections::HashSet<(u64, u64)>,
    /// Reservations of our actors held by the peer (`sharing.rs`), by session.
    pub(crate) sessions: HashMap<u64, super::sharing::ServedSession>,
    pub(super) dialing: bool,
    pub(super) active: bool,
    /// The peer's session, learned from the last link (see module docs).
    pub(super) remote_session: Option<u64>,
    /// The longest the peer lets this node stay silent on the current link.
    pub(super) quiet: Option<Duration>,
}

pub(crate) struct Peer {
    pub(crate) id: NodeId,
    /// This session (see module docs): unique among this node's peers.
    pub(crate) session: u64,
    listen: Mutex<Option<SocketAddr>>,
    pub(crate) outbox: Outbox,
    /// The largest frame the peer accepts.
    max_frame: usize,
    /// The outbox's free places for messages (see module docs); closed when lost.
    places: Semaphore,
    links: mpsc::UnboundedSender<Link>,
    pub(crate) state: Mutex<PeerState>,
    lost: AtomicBool,
    /// Becomes `true` when the peer is lost: the driver closes the link.
    closed: watch::Sender<bool>,
    driver: Mutex<Option<tokio::task::JoinHandle<()>>>,
    /// Bytes and frames to and from the peer, when odeon observes (`observe/`).
    #[cfg(feature = "observe")]
    pub(crate) traffic: Option<crate::observe::PeerTraffic>,
}

impl Peer {
    /// A new peer and its driver task.
    pub(crate) fn start(
        node: &Arc<NodeInner>,
        id: NodeId,
        listen: Option<SocketAddr>,
    ) -> Arc<Self> {
        let (links, links_rx) = mpsc::unbounded_channel();
        #[cfg(feature = "observe")]
        let id_name = id.name.clone();
        let peer = Arc::new(Peer {
            id,
            session: next_session(),
            listen: Mutex::new(listen),
            outbox: Outbox::new(),
            max_frame: node.link.max_frame,
            places: Semaphore::new(node.settings.outbox_bound),
            links,
            state: Mutex::new(PeerState::default()),
            lost: AtomicBool::new(false),
            closed: watch::Sender::new(false),
            driver: Mutex::new(None),
            #[cfg(feature = "observe")]
            traffic: crate::observe::PeerTraffic::new(&id_name),
        });
        let driver = node.io.spawn(super::link::drive(
            Arc::downgrade(node),
            peer.clone(),
            links_rx,
        ));
        *peer.driver.lock() = Some(driver);
        peer
    }

    /// A peer that is already lost (refs to actors known to be gone use it).
    pub(crate) fn detached(id: NodeId) -> Arc<Self> {
        let (links, _) = mpsc::unbounded_channel();
        let places = Semaphore::new(0);
        places.close();
        Arc::new(Peer {
            id,
            session: next_session(),
            listen: Mutex::new(None),
            outbox: Outbox::new(),
            max_frame: 0,
            places,
            links,
            state: Mutex::new(PeerState::default()),
            lost: AtomicBool::new(true),
            closed: watch::Sender::new(true),
            driver: Mutex::new(None),
            #[cfg(feature = "observe")]
            traffic: None,
        })
    }

    /// Queues `Leaving`, then closes the link once everything before it is written.
    /// The close is a signal of its own, never a frame (an empty frame is malformed).
    pub(crate) fn close_after_leaving(&self) -> Option<tokio::task::JoinHandle<()>> {
        let _ = self.send(&Traffic::Leaving);
        self.outbox.leave();
        self.driver.lock().take()
    }

    /// Stops the driver at once, as if the process had died.
    pub(crate) fn abort(&self) {
        if let Some(d) = self.driver.lock().take() {
            d.abort();
        }
    }

    pub(crate) fn is_lost(&self) -> bool {
        self.lost.load(Ordering::Acquire)
    }

    pub(crate) fn listen(&self) -> Option<SocketAddr> {
        *self.listen.lock()
    }

    /// Queues a runtime signal (no bound applies); it is written in queue order on the
    /// pair's link.
    pub(crate) fn send(&self, traffic: &Traffic) -> Result<(), AskError> {
        self.send_pushed(traffic).map(|_| ())
    }

    /// As [`send`](Self::send), saying whether the frame was written at once or
    /// queued for the link's driver.
    pub(crate) fn send_pushed(&self, traffic: &Traffic) -> Result<Pushed, AskError> {
        if self.is_lost() {
            return Err(AskError::Unreachable);
        }
        with_frame(traffic, self.max_frame, |frame| {
            #[cfg(feature = "observe")]
            if let Some(t) = &self.traffic {
                t.sent(frame.len());
            }
            self.outbox.push(frame, false)
        })
        .map_err(|e| AskError::Rejected(e.to_string()))
    }

    /// Queues a message (tell or ask) in one of the outbox's places, or refuses it.
    pub(crate) fn send_message(&self, traffic: &Traffic) -> Result<(), Refused> {
        if self.is_lost() {
            return Err(Refused::Unreachable);
        }
        let place = match self.places.try_acquire() {
            Ok(p) => p,
            Err(tokio::sync::TryAcquireError::NoPermits) => return Err(Refused::Full),
            Err(tokio::sync::TryAcquireError::Closed) => return Err(Refused::Unreachable),
        };
        with_frame(traffic, self.max_frame, |frame| {
            #[cfg(feature = "observe")]
            if let Some(t) = &self.traffic {
                t.sent(frame.len());
            }
            if self.outbox.push(frame, true) == Pushed::Queued {
                // The driver gives the place back when it takes the frame.
                place.forget();
            }
        })
        .map_err(|e| Refused::Rejected(e.to_string()))
    }

    /// Gives back `n` places taken by frames the driver has taken from the outbox.
    pub(crate) fn release(&self, n: usize) {
        if n > 0 {
            self.places.add_permits(n);
        }
    }

    /// Resolves when the outbox has a free place, or the peer is lost.
    pub(crate) async fn room(&self) {
        // Only a wake-up: the place is taken again by the retried send.
        let _ = self.places.acquire().await;
    }

    /// A receiver that sees `true` once the peer is lost.
    pub(crate) fn closed(&self) -> watch::Receiver<bool> {
        self.closed.subscribe()
    }

    /// Whether a link from the peer's session `session` may continue this session:
    /// false if the peer started a new one since (it lost this node).
    pub(crate) fn continues(&self, session: u64) -> bool {
        self.state
            .lock()
            .remote_session
            .is_none_or(|known| known == session)
    }

    /// Decides whether an inbound link from the peer's session `session` becomes the
    /// pair's link (see module docs). On `true` the caller answers `Attached` and
    /// hands the link over.
    pub(crate) fn claim(
        &self,
        me: &NodeId,
        listen: SocketAddr,
        session: u64,
        quiet: Duration,
    ) -> bool {
        let mut st = self.state.lock();
        if self.is_lost() || st.active || (st.dialing && *me < self.id) {
            return false;
        }
        st.active = true;
        st.remote_session = Some(session);
        st.quiet = Some(quiet);
        *self.listen.lock() = Some(listen);
        true
    }

    /// Undoes a claim whose `Attached` could not be written.
    pub(crate) fn hand_over_failed(&self) {
        self.state.lock().active = false;
    }

    /// Gives a claimed link to the driver.
    pub(crate) fn hand_over(&self, link: Link) {
        if self.links.send(link).is_err() {
            self.state.lock().active = false;
        }
    }

    /// Marks the peer lost, closes its link (dropping what is still queued) and fails
    /// everything waiting on it. Idempotent. `left`: it said it was leaving (logged as
    /// information, not as a warning). Returns the links of its actors to ours, which
    /// the node breaks.
    pub(crate) fn lose(&self, why: &str, left: bool) -> Vec<(u64, u64)> {
        if self.lost.swap(true, Ordering::AcqRel) {
            return Vec::new();
        }
        if left {
            tracing::info!(peer = %self.id, why, "peer left");
        } else {
            tracing::warn!(peer = %self.id, why, "peer lost");
        }
        // Wakes senders waiting for room (they then see `Unreachable`) and the driver,
        // which closes the link and drops the outbox with whatever is still in it.
        self.places.close();
        self.outbox.close();
        self.closed.send_replace(true);
        let (pending, watches, served, links, sessions) = {
            let mut st = self.state.lock();
            (
                std::mem::take(&mut st.pending),
                std::mem::take(&mut st.watches),
                std::mem::take(&mut st.served),
                std::mem::take(&mut st.links),
                std::mem::take(&mut st.sessions),
            )
        };
        // The holder's node is gone: its reservations of our actors end (each is
        // released: what it sent and was delivered is handled, then other mail).
        for (_, s) in sessions {
            s.end();
        }
        for (_, p) in pending {
            match p {
                Pending::Ask { slot, .. } => slot.fail(AskError::Unreachable),
                Pending::Raw(tx) => {
                    let _ = tx.send(Err(AskError::Unreachable));
                }
            }
        }
        for ((id, _), notify) in watches {
            notify(Terminated {
                id: ActorId::from_u64(id),
                reason: StopReason::NodeLost,
            });
        }
        for (_, s) in served {
            (s.interface.ops.unwatch)(&*s.target, s.key);
        }
        links.into_iter().collect()
    }
}
